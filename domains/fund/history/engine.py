"""Grading every as-of date of a history at once: shared preparation, one metrics pass, one grader.

:class:`~evaluator.domains.fund.history.prep.CrossDate` prepares the data once and gives each date's
statuses; :class:`~evaluator.domains.fund.history.metrics.WindowSums` gives each date's window metrics;
the scores, peer percentiles and grades come from the engine's own
:func:`~evaluator.domains.fund.engine.scoring.score_funds`, called on several dates stacked (each date's 유형
a peer group of its own, so nothing is compared across dates). A date the shared preparation cannot
reproduce exactly is graded by the single-date engine (``fallback`` counts them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data import Universe
from evaluator.domains.fund.engine import (
    FundResult,
    KnownMetrics,
    Market,
    compute_metrics,
    evaluate_loaded,
    score_funds,
)
from evaluator.domains.fund.history.flags import DateFlags
from evaluator.domains.fund.history.metrics import WindowSums
from evaluator.domains.fund.history.prep import CrossDate
from evaluator.domains.fund.types import ERROR, NOT_RATED, OK
from evaluator.methodology.rubric import PERIODS

BATCH = 6
"""As-of dates scored per call of the grader (bounds the stacked arrays to 6 × funds rows)."""


@dataclass
class Graded:
    """Per date (ascending): the history columns in the input's fund order."""

    columns: list[dict[str, Any]] = field(default_factory=list)
    fallback: int = 0
    levels: tuple[np.ndarray, list[str]] | None = None
    """Total-return levels on the NAV dates as the engine builds them, and their fund codes."""
    last: KnownMetrics | None = None
    """The last date's window metrics (None if the single-date engine graded it), for its full reports."""


def grade_dates(
    universe: Universe,
    rubric: Mapping[str, Any],
    dates: Sequence[pd.Timestamp],
    *,
    headline: Sequence[str],
    row_of: Callable[[FundResult], dict[str, Any]],
    allow_unadjusted: bool = False,
    outliers: str = "error",
    on_date: Callable[[int, int], None] | None = None,
) -> Graded:
    """Every date's history columns; ``row_of`` turns a single-date result into a row (fallback dates)."""
    prep = CrossDate(universe, rubric, allow_unadjusted=allow_unadjusted, dates=dates, outliers=outliers)
    # per-유형 weights and provisional grades are the single-date engine's (the shared grader knows neither):
    # those rubrics grade every date with it, slower and exactly the same as `fund evaluate`
    own_rules = bool(rubric.get("criteria_by_type") or rubric.get("provisional"))
    flags: list[DateFlags | None] = [None if own_rules else prep.flags(d) for d in dates]
    ends = sorted({f.row for f in flags if f is not None})
    sums = (
        WindowSums(prep.levels, prep.cal, prep.rf, prep.bench_returns, prep.bench_of_fund, ends)
        if ends
        else None
    )
    out = Graded()
    pending: list[tuple[int, DateFlags, dict[str, dict[str, np.ndarray]]]] = []
    done: dict[int, dict[str, Any]] = {}

    # the columns every date repeats, one list object for all (the table converts each object once)
    same = {"fund_code": list(prep.input_codes), "type": prep.types[prep.to_input].tolist()}

    def flush() -> None:
        for k, cols in _score(prep, rubric, pending, headline, same).items():
            done[k] = cols
        pending.clear()

    for k, (when, f) in enumerate(zip(dates, flags, strict=True)):
        if f is None or sums is None:
            evaluation = evaluate_loaded(
                universe, rubric, as_of=when, allow_unadjusted=allow_unadjusted, outliers=outliers
            )
            done[k] = _columns_of([row_of(fund) for fund in evaluation.funds])
            out.fallback += 1
        else:
            pending.append((k, f, _metrics(prep, sums, f)))
            if k == len(dates) - 1:
                k_nav = int(prep.nav_dates.searchsorted(prep.cal[f.row], side="right"))
                out.last = KnownMetrics(
                    list(prep.codes), prep.cal[f.row], f.measured, pending[-1][2], nav=prep.raw[:k_nav]
                )
            if len(pending) == BATCH:
                flush()
        if on_date is not None:
            on_date(k + 1, len(dates))
    flush()
    out.columns = [done[k] for k in range(len(dates))]
    out.levels = (prep.nav_levels, prep.codes)
    return out


def _metrics(prep: CrossDate, sums: WindowSums, f: DateFlags) -> dict[str, dict[str, np.ndarray]]:
    """The date's metrics; funds whose levels differ on the truncated data get the engine's own."""
    out = sums.metrics(f.row, f.measured)
    if f.redated is None:
        return out
    cols, levels = f.redated
    e = f.row
    market = Market(
        dates=prep.cal[: e + 1],
        rf_annual=prep.rf[: e + 1],
        bench_levels=None if prep.bench_levels is None else prep.bench_levels[: e + 1],
        bench_of_fund=None if prep.bench_of_fund is None else prep.bench_of_fund[cols],
    )
    own = compute_metrics(levels, market, prep.cal[e])
    for p, by_metric in own.items():
        for m, values in by_metric.items():
            out[p][m][cols] = np.where(f.measured[cols], values, np.nan)
    return out


def _columns_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: [r[key] for r in rows] for key in rows[0]} if rows else {}


def _score(
    prep: CrossDate,
    rubric: Mapping[str, Any],
    batch: list[tuple[int, DateFlags, dict[str, dict[str, np.ndarray]]]],
    headline: Sequence[str],
    same: Mapping[str, list[Any]],
) -> dict[int, dict[str, Any]]:
    """Score a batch of dates in one call of the grader, and build their history columns (``same``: the
    columns equal at every date)."""
    if not batch:
        return {}
    n = len(prep.codes)
    span = int(prep.type_code.max()) + 1
    groups = np.concatenate([prep.type_code + j * span for j in range(len(batch))])
    eligible = np.concatenate([f.eligible for _, f, _ in batch])
    periods = list(PERIODS)
    weights = {p: np.concatenate([f.weights[:, i] for _, f, _ in batch]) for i, p in enumerate(periods)}
    # A window no eligible fund weighs, or where none has a value, adds exactly 0 to every weighted mean:
    # leaving it out of the grader's call changes no score and saves its percentile ranks.
    used = [
        p
        for p in periods
        if (weights[p][eligible] > 0).any()
        and any(np.isfinite(v).any() for _, _, mt in batch for v in mt[p].values())
    ]
    metrics = {p: {m: np.concatenate([mt[p][m] for _, _, mt in batch]) for m in batch[0][2][p]} for p in used}
    weights = {p: weights[p] for p in used}
    qualitative = {cid: np.tile(v, len(batch)) for cid, v in prep.qualitative.items()}
    families = np.tile(prep.families, len(batch)) if prep.families is not None else None
    scores = score_funds(metrics, groups, eligible, weights, rubric, qualitative, families=families)
    version = str(rubric["version"])
    order = prep.to_input
    out: dict[int, dict[str, Any]] = {}
    for j, (k, f, mt) in enumerate(batch):
        part = slice(j * n, (j + 1) * n)
        status = np.where(f.errored, ERROR, np.where(f.eligible, OK, NOT_RATED))[order]
        ok = status == OK
        grade = scores.grade[part][order].astype(float)
        cols: dict[str, Any] = {
            "fund_code": same["fund_code"],
            "as_of": [prep.cal[f.row].strftime("%Y-%m-%d")] * n,
            "status": status.tolist(),
            "grade": np.where(ok, grade, np.nan),
            "score": np.where(ok, scores.score[part][order], np.nan),
            "peer_percentile": np.where(ok, scores.peer_percentile[part][order], np.nan),
            "type": same["type"],
        }
        measured_any = ~f.errored[order]
        for p in periods:
            for m in headline:
                cols[f"{m}_{p}"] = np.where(measured_any, mt[p][m][order], np.nan)
        cols["rubric_version"] = [version] * n
        cols["provisional"] = np.zeros(n)
        out[k] = cols
    return out
