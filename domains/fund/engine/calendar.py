"""The market calendar returns are computed on, and sampling each fund's NAVs (and the benchmark) onto it.

Korean MMFs and some bond funds publish a 기준가격 for every calendar day; other funds only on business
days; an index file may carry a Saturday row or miss a business day. Computing on the union of all dates
would let one file put holes into every fund, so returns use one market calendar:

1. ``--calendar``: the dates of a file the user gives;
2. else the dates most funds share: a date on which at least half of the funds alive that day have a NAV.

The benchmark never decides the calendar: it is aligned to it (:func:`align_benchmark`): its dates that
are not market dates are ignored, and a market date it lacks gets its last level carried forward, up to
``FILL_LIMIT`` consecutive dates (a longer run stops the batch: its returns would be wrong for every
fund). Both are said once for the whole run, with the dates, never in each fund's report.

A fund's dates off the calendar (weekends, holidays) are dropped, and its value on a calendar date is its
NAV that day. A fund missing up to ``FILL_LIMIT`` consecutive calendar dates inside its history gets its
last NAV carried forward (with a warning); a longer run stays a hole, which is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.parameters import PARAMETERS
from evaluator.domains.fund.types import DataError

FILL_LIMIT = PARAMETERS.fill_limit
"""Most consecutive market dates a fund's last NAV is carried over (see :class:`EngineParameters`)."""


@dataclass(frozen=True)
class Sampled:
    """A fund matrix on the market calendar, with what the sampling did per fund."""

    values: np.ndarray
    dropped: np.ndarray
    """Dates of the fund's own that are not market dates (weekend / holiday NAVs)."""
    filled: np.ndarray
    """Market dates filled forward from the fund's previous NAV."""


ENDED_DAYS = 10
"""A fund whose NAVs stopped counts as alive for this many calendar days (so the last business day, not an
MMF's weekend after it, stays the last market date)."""


def majority_dates(present: np.ndarray, dates: pd.DatetimeIndex) -> pd.DatetimeIndex:
    """Dates on which at least half of the funds alive that day have a NAV.

    Alive: from the fund's first NAV to ``ENDED_DAYS`` calendar days after its last.
    """
    if present.shape[1] == 0:
        return dates
    has_any = present.any(axis=0)
    n = len(dates)
    first = np.where(has_any, present.argmax(axis=0), n)
    last = np.where(has_any, n - 1 - present[::-1].argmax(axis=0), 0)
    until = dates[last] + pd.Timedelta(days=ENDED_DAYS)
    end_row = np.searchsorted(dates.to_numpy(), until.to_numpy(), side="right")
    starts = np.bincount(first[has_any], minlength=n + 1)[:n]
    ends = np.bincount(end_row[has_any], minlength=n + 1)[:n]
    alive = np.cumsum(starts) - np.cumsum(ends)
    priced = present.sum(axis=1)
    return dates[2 * priced >= alive]


class MajorityByRow:
    """:func:`majority_dates` of the data cut after any row ``k``, from one pass over the matrix.

    A grade history asks for the calendar as of each of its dates; cutting the matrix and scanning it again
    for every date was a third of the history's time. Cut after row ``k``, a fund's first NAV row is the
    whole file's (when it is ≤ ``k``), its last is the last row ≤ ``k`` with a NAV (a running maximum, kept
    for every row), and each row's count of priced funds is the whole file's: the same integers
    :func:`majority_dates` computes, so the same dates.
    """

    def __init__(self, present: np.ndarray, dates: pd.DatetimeIndex) -> None:
        n = present.shape[0]
        self.dates = dates
        self.empty = present.shape[1] == 0
        self.first = np.where(present.any(axis=0), present.argmax(axis=0), n)
        index = np.int16 if n < np.iinfo(np.int16).max else np.int32
        last = np.where(present, np.arange(n, dtype=index)[:, None], np.array(-1, dtype=index))
        self.last_upto = np.maximum.accumulate(last, axis=0, out=last)
        self.priced = present.sum(axis=1)

    def upto(self, k: int) -> pd.DatetimeIndex:
        """``majority_dates(present[: k + 1], dates[: k + 1])``."""
        dates = self.dates[: k + 1]
        if self.empty:
            return dates
        n = k + 1
        last_row = self.last_upto[k].astype(np.int64)
        has_any = last_row >= 0
        first = np.where(has_any, self.first, n)
        last = np.where(has_any, last_row, 0)
        until = dates[last] + pd.Timedelta(days=ENDED_DAYS)
        end_row = np.searchsorted(dates.to_numpy(), until.to_numpy(), side="right")
        starts = np.bincount(first[has_any], minlength=n + 1)[:n]
        ends = np.bincount(end_row[has_any], minlength=n + 1)[:n]
        alive = np.cumsum(starts) - np.cumsum(ends)
        return dates[2 * self.priced[:n] >= alive]


DENSE = 0.9
"""A calendar file's dates must include this share of the dates most funds are priced on within its span;
a weekly or monthly calendar would otherwise turn daily returns into weekly ones."""


def _dense(cal: pd.DatetimeIndex, majority: pd.DatetimeIndex) -> bool:
    inside = majority[(majority >= cal[0]) & (majority <= cal[-1])]
    return len(inside) == 0 or len(inside.intersection(cal)) >= DENSE * len(inside)


def market_calendar(
    nav: np.ndarray,
    dates: pd.DatetimeIndex,
    calendar: pd.DatetimeIndex | None = None,
    majority: pd.DatetimeIndex | None = None,
) -> tuple[pd.DatetimeIndex, str]:
    """The calendar (within the NAV data's date range) and which rule chose it: ``file`` or ``majority``.

    A calendar file sparser than the funds' own dates is refused. ``majority``: the funds' majority dates
    when the caller has them already (:class:`MajorityByRow`); ``nav`` is then not read.
    """
    lo, hi = dates[0], dates[-1]
    if majority is None:
        majority = majority_dates(np.isfinite(nav), dates)
    if calendar is not None:
        cal = pd.DatetimeIndex(calendar[(calendar >= lo) & (calendar <= hi)].unique().sort_values())
        if len(cal) < 2 or not _dense(cal, majority):
            raise DataError(
                f"--calendar holds {len(cal)} dates between {lo:%Y-%m-%d} and {hi:%Y-%m-%d}, fewer than "
                f"{DENSE:.0%} of the dates most funds are priced on; give every market date"
            )
        return cal, "file"
    return majority, "majority"


@dataclass(frozen=True)
class Aligned:
    """Benchmark levels on the market calendar, and what aligning them did (for the run's one note)."""

    values: np.ndarray
    extra: list[str]
    """The benchmark's dates inside the calendar's span that are not market dates (ignored)."""
    filled: list[str]
    """Market dates the benchmark lacks, carried forward from its previous level."""

    def note(self) -> str | None:
        """One line for summary.json and the console, or None when the benchmark fits the calendar."""
        parts = []
        if self.extra:
            parts.append(f"{len(self.extra)} date(s) that are not market dates were ignored ({_dates(self.extra)})")
        if self.filled:
            parts.append(
                f"{len(self.filled)} market date(s) it lacks were filled with its previous level "
                f"({_dates(self.filled)}; up to {FILL_LIMIT} in a row)"
            )
        return f"BENCHMARK is on its own calendar: {'; '.join(parts)}" if parts else None


def _dates(days: list[str], shown: int = 10) -> str:
    return ", ".join(days[:shown]) + (f" … (+{len(days) - shown})" if len(days) > shown else "")


def align_benchmark(levels: pd.DataFrame, calendar: pd.DatetimeIndex) -> Aligned:
    """Benchmark levels (dates × columns) on ``calendar``: off-calendar dates ignored, short gaps carried.

    A column's value on the first calendar date may come from its last level before it. A run of more
    than ``FILL_LIMIT`` missing market dates after the column starts (inside it or at its end) is a
    :class:`DataError`: carried further, the benchmark's returns would be zero, then one lump.
    """
    levels = levels.sort_index()
    index = pd.DatetimeIndex(levels.index)
    inside = index[(index >= calendar[0]) & (index <= calendar[-1])]
    extra = inside.difference(calendar)
    on = levels.reindex(calendar)
    before = levels.loc[levels.index < calendar[0]]
    if len(before):
        on.iloc[0] = on.iloc[0].fillna(before.ffill().iloc[-1])
    values = on.to_numpy(dtype=float)
    present = np.isfinite(values)
    started = np.maximum.accumulate(present, axis=0)
    missing = started & ~present
    run = _run_lengths(missing)
    if (run > FILL_LIMIT).any():
        r, c = np.argwhere(run > FILL_LIMIT)[0]
        last = calendar[r - 1].strftime("%Y-%m-%d")
        raise DataError(
            f"BENCHMARK{f' column {levels.columns[c]!r}' if levels.shape[1] > 1 else ''} has no level on {int(run[r, c])} consecutive market dates "
            f"after {last} (at most {FILL_LIMIT} are carried forward); give the missing dates"
        )
    filled_rows = np.flatnonzero(missing.any(axis=1))
    values = pd.DataFrame(values).ffill().to_numpy() if filled_rows.size else values  # leading NaN stay
    days = [d.strftime("%Y-%m-%d") for d in extra]
    return Aligned(values=values, extra=days, filled=[calendar[r].strftime("%Y-%m-%d") for r in filled_rows])


def sample(
    values: np.ndarray, dates: pd.DatetimeIndex, calendar: pd.DatetimeIndex, limit: int = FILL_LIMIT
) -> Sampled:
    """``values`` (dates × funds) onto ``calendar``: exact where present, carried forward over short runs.

    Only calendar dates inside a fund's own first..last dates get a value.
    """
    if calendar.equals(dates):
        zeros = np.zeros(values.shape[1], dtype=int)
        if not np.isnan(values.sum(axis=0)).any():  # one cheap pass: no fund has any gap at all
            return Sampled(values=values, dropped=zeros, filled=zeros)
    present = np.isfinite(values)
    if calendar.equals(dates):
        has_any = present.any(axis=0)
        span = np.where(has_any, (len(dates) - present[::-1].argmax(axis=0)) - present.argmax(axis=0), 0)
        if (present.sum(axis=0) == span).all():  # no fund has a hole: nothing to sample
            return Sampled(values=values, dropped=zeros, filled=zeros)
    union = dates.union(calendar)
    if not union.equals(dates):
        frame = pd.DataFrame(values, index=dates).reindex(union)
        values, dates = frame.to_numpy(), union
        present = np.isfinite(values)
    pos = dates.get_indexer(calendar)
    on_cal = np.zeros(len(dates), dtype=bool)
    on_cal[pos] = True
    dropped = (present & ~on_cal[:, None]).sum(axis=0)
    has_any = present.any(axis=0)
    first_d = dates[np.where(has_any, present.argmax(axis=0), 0)]
    last_d = dates[np.where(has_any, len(dates) - 1 - present[::-1].argmax(axis=0), 0)]
    cal = calendar.to_numpy()[:, None]
    alive = has_any[None, :] & (cal >= first_d.to_numpy()[None, :]) & (cal <= last_d.to_numpy()[None, :])
    exact = values[pos]
    carried = pd.DataFrame(values).ffill().to_numpy()[pos]
    missing = alive & ~np.isfinite(exact)
    run = _run_lengths(missing)
    fill = missing & (run <= limit)
    out = np.where(fill, carried, exact)
    out[~alive] = np.nan
    return Sampled(values=out, dropped=dropped, filled=fill.sum(axis=0))


def _run_lengths(mask: np.ndarray) -> np.ndarray:
    """For each true cell, the length of the run of consecutive true cells (down the rows) it belongs to."""
    rows = np.arange(mask.shape[0])[:, None]
    last_false = np.maximum.accumulate(np.where(~mask, rows, -1), axis=0)
    forward = rows - last_false
    rev = mask[::-1]
    last_false_r = np.maximum.accumulate(np.where(~rev, rows, -1), axis=0)
    backward = (rows - last_false_r)[::-1]
    return np.where(mask, forward + backward - 1, 0)
