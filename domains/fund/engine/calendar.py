"""The market calendar returns are computed on, and sampling each fund's NAVs onto it.

Korean MMFs and some bond funds publish a 기준가격 for every calendar day; other funds only on business
days. Computing on the union of all funds' dates would make one weekend-priced fund put holes into every
other fund, so returns use one market calendar, chosen in this order:

1. ``--calendar``: the dates of a file the user gives;
2. the benchmark's dates (where the benchmark covers the NAV data; outside that, rule 3);
3. the dates most funds share: a date on which at least half of the funds alive that day have a NAV.

A fund's dates off the calendar (weekends, holidays) are dropped, and its value on a calendar date is its
NAV that day. A fund missing up to ``FILL_LIMIT`` consecutive calendar dates inside its history gets its
last NAV carried forward (with a warning); a longer run stays a hole, which is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.readers import DataError

FILL_LIMIT = 3
"""Most consecutive market dates a fund's last NAV is carried over (a long holiday is a gap, not a fill)."""


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


DENSE = 0.9
"""A benchmark's (or calendar file's) dates must include this share of the dates most funds are priced on
within its span; a weekly or monthly series would otherwise turn daily returns into weekly ones."""


def _dense(cal: pd.DatetimeIndex, majority: pd.DatetimeIndex) -> bool:
    inside = majority[(majority >= cal[0]) & (majority <= cal[-1])]
    return len(inside) == 0 or len(inside.intersection(cal)) >= DENSE * len(inside)


def market_calendar(
    nav: np.ndarray,
    dates: pd.DatetimeIndex,
    benchmark_dates: pd.DatetimeIndex | None = None,
    calendar: pd.DatetimeIndex | None = None,
) -> tuple[pd.DatetimeIndex, str]:
    """The calendar (within the NAV data's date range) and which rule chose it.

    A calendar file sparser than the funds' own dates is refused; a sparse benchmark is not used as the
    calendar (its levels are still carried onto the calendar for the benchmark metrics).
    """
    lo, hi = dates[0], dates[-1]
    if calendar is not None:
        cal = pd.DatetimeIndex(calendar[(calendar >= lo) & (calendar <= hi)].unique().sort_values())
        majority = majority_dates(np.isfinite(nav), dates)
        if len(cal) < 2 or not _dense(cal, majority):
            raise DataError(
                f"--calendar holds {len(cal)} dates between {lo:%Y-%m-%d} and {hi:%Y-%m-%d}, fewer than "
                f"{DENSE:.0%} of the dates most funds are priced on; give every market date"
            )
        return cal, "file"
    if benchmark_dates is not None and len(benchmark_dates):
        b = pd.DatetimeIndex(
            benchmark_dates[(benchmark_dates >= lo) & (benchmark_dates <= hi)].unique().sort_values()
        )
        if len(b) >= 2:
            if b.equals(dates):
                return b, "benchmark"  # the benchmark has exactly the NAV dates: nothing to decide
            majority = majority_dates(np.isfinite(nav), dates)
            if _dense(b, majority):
                outside = majority[(majority < b[0]) | (majority > b[-1])]
                return pd.DatetimeIndex(b.union(outside).unique().sort_values()), "benchmark"
            return majority, "majority (the benchmark's dates are too sparse)"
    return majority_dates(np.isfinite(nav), dates), "majority"


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
