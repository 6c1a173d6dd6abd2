"""Grade history: the universe graded at every month-end (or quarter-end) as-of date, in one run.

The universe is read and prepared once, and every as-of date's statuses, window metrics and grades come
from :func:`~evaluator.domains.fund.history.engine.grade_dates` (shared preparation, one pass of window
sums, the engine's grader on stacked dates); a history row equals the single-date ``fund evaluate
--as-of D`` result to 1e-9, nulls included (see ``domains/fund/README.md``). The last date is also graded
by the single-date engine, whose full results are the ``latest/`` reports; it takes the window metrics
the cross-date pass already measured for that date (so they are not computed twice, and the reports
agree with the history's last row) and measures only the funds that pass left out.

As-of dates: the last market-calendar date of each calendar month (``M``) or of March, June, September
and December (``Q``) between ``--from`` and ``--to``; the calendar is the one the engine uses (a
``--calendar`` file, else the benchmark's dates, else the dates most funds are priced on).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.companies import company_history_for
from evaluator.domains.fund.data import Universe
from evaluator.domains.fund.engine import Evaluation, FundResult, evaluate_loaded, levels_for, market_calendar
from evaluator.domains.fund.history.engine import grade_dates
from evaluator.domains.fund.types import DataError
from evaluator.methodology.rubric import PERIODS

HEADLINE = ("annualized_return", "annualized_volatility", "sharpe", "max_drawdown", "mrar")
"""Metrics copied into the history table, one column per window (``sharpe_3y`` …)."""

BASE_COLUMNS = ("fund_code", "as_of", "status", "grade", "score", "peer_percentile", "type")
COLUMNS = (
    *BASE_COLUMNS,
    *(f"{m}_{p}" for p in PERIODS for m in HEADLINE),
    "rubric_version",
    "provisional",
)
"""``provisional``: the grade is a 가등급 (a young fund ranked on the rubric's provisional window)."""
FREQS = {"M": 1, "Q": 3}
_MONTH = re.compile(r"^\s*(\d{4})-(\d{1,2})(?:-(\d{1,2}))?\s*$")


def parse_month(text: str, flag: str) -> pd.Period:
    """``2021-01`` (or a full date, whose month is used) → that calendar month."""
    m = _MONTH.match(text or "")
    if not m or not 1 <= int(m.group(2)) <= 12:
        raise DataError(f"{flag} {text!r} is not a month; write it as YYYY-MM")
    return pd.Period(year=int(m.group(1)), month=int(m.group(2)), freq="M")


def as_of_dates(universe: Universe, start: pd.Period, end: pd.Period, freq: str = "M") -> list[pd.Timestamp]:
    """The last market-calendar date of each month (or quarter-end month) in ``[start, end]``."""
    if freq not in FREQS:
        raise DataError(f"--freq must be M (month-ends) or Q (quarter-ends), not {freq!r}")
    if start > end:
        raise DataError(f"--from {start} is after --to {end}")
    navs = universe.navs
    if navs.shape[0] == 0:
        raise DataError("there are no usable NAV rows to build a history from")
    cal, _rule = market_calendar(navs.to_numpy(dtype=float), pd.DatetimeIndex(navs.index), universe.calendar)
    if len(cal) == 0:
        cal = pd.DatetimeIndex(navs.index)
    months = cal.to_period("M")
    last_rows = np.flatnonzero(np.r_[months[1:] != months[:-1], True])
    picked = [
        cal[i]
        for i in last_rows
        if start <= months[i] <= end and (freq == "M" or months[i].month % FREQS[freq] == 0)
    ]
    if not picked:
        raise DataError(
            f"no {'month' if freq == 'M' else 'quarter'}-end between {start} and {end}: the NAV data runs "
            f"from {cal[0]:%Y-%m-%d} to {cal[-1]:%Y-%m-%d}"
        )
    return picked


def history_row(fund: FundResult, rubric_version: str) -> dict[str, Any]:
    """One fund × as-of row of the history table."""
    row: dict[str, Any] = {
        "fund_code": fund.fund_code,
        "as_of": fund.as_of.isoformat(),
        "status": fund.status,
        "grade": fund.grade,
        "score": fund.score,
        "peer_percentile": fund.peer_percentile,
        "type": fund.type,
    }
    for p in PERIODS:
        window = fund.metrics.get(p) or {}
        for m in HEADLINE:
            row[f"{m}_{p}"] = window.get(m)
    row["rubric_version"] = rubric_version
    row["provisional"] = bool(fund.provisional)
    return row


@dataclass
class History:
    """Every as-of date's rows, the last date's full evaluation and the grade counts per date."""

    table: pd.DataFrame
    dates: list[str]
    last: Evaluation
    counts: dict[str, dict[str, int]]
    levels: pd.DataFrame | None = None
    """Per fund × as-of: its total-return ``level`` on its last NAV date on or before the as-of date
    (``level_date``); what ``fund backtest`` takes forward returns from."""
    fallback_dates: int = 0
    """As-of dates the shared preparation could not reproduce, graded by the single-date engine instead."""
    companies: pd.DataFrame | None = None
    """Per as-of date and 운용사: the company rating (``companies/history.py``)."""
    company_funds: pd.DataFrame | None = None
    """The fund → 운용사, 설정원본, portfolio map those ratings used (META as it is today)."""

    def grade_paths(self) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """(fund code, ``[{as_of, grade, score, status}, …]`` oldest first) per fund, built one at a time."""
        t = self.table.sort_values(["fund_code", "as_of"], kind="stable")
        codes = t["fund_code"].astype(str).to_numpy()
        cols = {
            c: t[c].astype(object).where(t[c].notna(), None).to_numpy()
            for c in ("as_of", "grade", "score", "status")
        }
        edges = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True])
        for lo, hi in itertools.pairwise(edges):
            yield (
                str(codes[lo]),
                [
                    {
                        "as_of": str(cols["as_of"][k]),
                        "grade": None if cols["grade"][k] is None else int(cols["grade"][k]),
                        "score": None if cols["score"][k] is None else float(cols["score"][k]),
                        "status": str(cols["status"][k]),
                    }
                    for k in range(lo, hi)
                ],
            )


def level_table(
    universe: Universe,
    dates: Sequence[pd.Timestamp],
    built: tuple[np.ndarray, list[str]] | None = None,
) -> pd.DataFrame:
    """Total-return levels (adjusted NAV, else NAV + distributions, else NAV) at each as-of date.

    ``built``: levels already built on the NAV dates (with their fund codes), else they are built here.

    On the fund's own NAV dates, not the market calendar: a fund that stopped reporting keeps its last
    level, and ``level_date`` says when that was (the backtest's survivorship rule reads it).
    """
    navs = universe.navs
    codes = [str(c) for c in navs.columns]
    types = universe.meta["type"].reindex(codes) if "type" in universe.meta.columns else None
    groups = (
        None
        if types is None
        else np.array([str(t) if isinstance(t, str) else "" for t in types], dtype=object)
    )
    if built is None:
        nav = navs.to_numpy(dtype=float, copy=True)
        lv = levels_for(
            nav, pd.DatetimeIndex(navs.index), codes, universe.adjustments, groups, inplace=True
        ).levels
        idx = np.arange(len(codes))
    else:  # the levels the history's preparation built (the engine's fund order): this input's columns
        where = {c: i for i, c in enumerate(built[1])}
        lv, idx = built[0], np.array([where[c] for c in codes], dtype=int)
    at = np.searchsorted(navs.index.values, pd.DatetimeIndex(dates).values, side="right") - 1
    out_rows = np.full((len(dates), len(codes)), -1)
    last = np.full(lv.shape[1], -1)
    lo = 0
    for d in np.argsort(at, kind="stable"):  # one sweep down the rows: each fund's last positive level
        row = int(at[d])
        if row >= lo:
            with np.errstate(invalid="ignore"):
                good = np.isfinite(lv[row]) & (lv[row] > 0)
            last[good] = row  # priced on the date's row itself: nothing later can be its last level
            bad = np.flatnonzero(~good)
            if bad.size and row > lo:  # the others: their last positive level since the previous date
                seg = lv[lo:row, bad]
                with np.errstate(invalid="ignore"):
                    ok = np.isfinite(seg) & (seg > 0)
                found = np.where(ok, np.arange(lo, row)[:, None], -1).max(axis=0)
                last[bad] = np.maximum(last[bad], found)
            lo = row + 1
        out_rows[d] = last[idx]
    have = out_rows >= 0
    level = np.where(have, lv[np.maximum(out_rows, 0), idx[None, :]], np.nan)
    nav_days = np.array([*pd.DatetimeIndex(navs.index).strftime("%Y-%m-%d"), None], dtype=object)
    days = nav_days[out_rows]  # -1 (no level yet): the None at the end
    return pd.DataFrame(
        {
            "fund_code": _text([codes] * len(dates)),
            "as_of": _text([[pd.Timestamp(d).strftime("%Y-%m-%d")] * len(codes) for d in dates]),
            "level": level.ravel(),
            "level_date": _text(days),
        }
    )


def _table(columns: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """All dates' rows from their columns in one go (no per-row objects: a 900,000-row history stays cheap)."""
    text = ("fund_code", "as_of", "status", "type", "rubric_version")
    data = {}
    for c in COLUMNS:
        if c in text:
            data[c] = _text([cols[c] for cols in columns])
            continue
        parts = [np.asarray(cols[c], dtype=float) for cols in columns]
        data[c] = np.concatenate(parts) if parts else np.array([], dtype=float)
    table = pd.DataFrame(data, columns=list(COLUMNS))
    table["grade"] = table["grade"].astype("Int64")
    table["provisional"] = table["provisional"].astype(bool)
    return table


def _text(parts: Sequence[Sequence[Any]]) -> Any:
    """One text column from per-date parts, in pandas' default string dtype, None / NaN as missing.

    With pandas' Arrow-backed strings each part goes to Arrow directly: ten times faster than letting
    pandas convert one 900,000-element object array.
    """
    parts = list(parts)  # held (no two live parts share an id), and a 2-D array becomes its rows
    dtype = pd.Series(["x"]).dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        import pyarrow as pa

        done: dict[int, pa.Array] = {}  # a part given again (the same list object) is converted once
        for p in parts:
            if id(p) not in done:
                done[id(p)] = _arrow_text(p)
        chunks = [done[id(p)] for p in parts]
        return pd.array(pa.chunked_array(chunks, type=pa.string()), dtype=dtype)
    flat = np.concatenate([np.asarray(p, dtype=object) for p in parts]) if parts else np.array([], dtype=object)
    return pd.Series(flat, dtype=object).where(pd.notna(flat), None).to_numpy()


def _arrow_text(part: Sequence[Any]) -> Any:
    """One part as an Arrow string array; a list of one repeated text (a date's ``as_of``) without a copy per row."""
    import pyarrow as pa

    if isinstance(part, list) and part and isinstance(part[0], str) and part.count(part[0]) == len(part):
        return pa.repeat(pa.scalar(part[0], type=pa.string()), len(part))
    return pa.array(part if isinstance(part, np.ndarray) else list(part), type=pa.string(), from_pandas=True)


def run_history(
    universe: Universe,
    rubric: Mapping[str, Any],
    dates: Sequence[pd.Timestamp],
    *,
    allow_unadjusted: bool = False,
    outliers: str = "error",
    on_date: Callable[[int, int], None] | None = None,
    qualitative: str | os.PathLike[str] | None = None,
) -> History:
    """Grade ``universe`` at every date of ``dates`` (ascending); rows equal single-date runs.

    Also rates the 운용사 at every date (``qualitative``: the analysts' pillar file, rows applying from
    their date on)."""
    if not dates:
        raise DataError("no as-of dates to grade")
    version = str(rubric["version"])
    graded = grade_dates(
        universe,
        rubric,
        dates,
        headline=HEADLINE,
        row_of=lambda fund: history_row(fund, version),
        allow_unadjusted=allow_unadjusted,
        outliers=outliers,
        on_date=on_date,
    )
    table = _table(graded.columns)
    # per date: how many funds got each grade, and how many were not rated / errors (first-seen order)
    graded_rows = table["grade"].notna().to_numpy()
    keys = np.where(
        graded_rows, table["grade"].astype("float").fillna(0).astype(int).astype(str), table["status"]
    )
    keys = np.where(table["provisional"].to_numpy(), np.char.add("p", keys.astype(str)), keys)  # 가등급 apart
    tallies = (
        pd.DataFrame({"as_of": table["as_of"], "key": keys}).groupby(["as_of", "key"], sort=False).size()
    )
    counts: dict[str, dict[str, int]] = {}
    for (day, key), n in tallies.items():
        counts.setdefault(str(day), {})[str(key)] = int(n)
    evaluation = evaluate_loaded(
        universe,
        rubric,
        as_of=dates[-1],
        allow_unadjusted=allow_unadjusted,
        outliers=outliers,
        known_metrics=graded.last,
    )
    companies, members = company_history_for(table, universe.meta, rubric, qualitative)
    return History(
        companies=companies,
        company_funds=members,
        table=table,
        dates=[pd.Timestamp(d).strftime("%Y-%m-%d") for d in dates],
        last=evaluation,
        counts=counts,
        levels=level_table(universe, dates, graded.levels),
        fallback_dates=graded.fallback,
    )
