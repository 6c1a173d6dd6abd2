"""Total-return levels: one wealth index per fund from 기준가격 and what the data says about 결산 distributions.

A module of its own because every return-based figure needs the same levels: today's metrics, and any
later computation over the same dates × funds matrix (forward returns for a grade history, backtests).

Conventions (also in ``domains/fund/README.md``):

* An adjusted NAV (수정기준가격) is used as given: the levels are that column.
* A distribution ``D_t`` (분배금, per 1,000좌, in the units of 기준가격) is dated on the first date whose
  기준가격 is ex-distribution; the total return that day is ``(NAV_t + D_t) / NAV_{t−1} − 1``. A
  distribution rate (분배율, %) is turned into ``D_t = rate/100 · NAV_{t−1}`` (the 결산일 NAV).
* Vendors often date the distribution on the 결산일, one row early. :func:`align_distributions` detects
  that per fund (the drop shows on the next row and matches the amount) and moves it one row later.
* Levels start at the fund's first NAV; a fund without distributions keeps its NAVs exactly.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Alignment:
    """Per fund column (of the matrices given): whether its distributions were dated one row early."""

    shifted: np.ndarray
    events: np.ndarray


def _prev_valid(nav: np.ndarray) -> np.ndarray:
    """Each row's previous valid NAV of the same fund (NaN before the first)."""
    filled = pd.DataFrame(nav).ffill().to_numpy()
    out = np.full_like(nav, np.nan)
    out[1:] = filled[:-1]
    return out


def _next_valid(nav: np.ndarray) -> np.ndarray:
    filled = pd.DataFrame(nav).bfill().to_numpy()
    out = np.full_like(nav, np.nan)
    out[:-1] = filled[1:]
    return out


def align_distributions(
    nav: np.ndarray, amount: np.ndarray, is_rate: np.ndarray, market: np.ndarray | None = None
) -> tuple[np.ndarray, Alignment]:
    """Distribution amounts dated on the ex-date (dates × funds, 0 where none), detecting one-row-early dating.

    ``amount``: per-row values (NaN or 0 where none); where ``is_rate`` (per fund) they are 분배율 in %.
    For each fund the two datings are compared over all its events: on the ex-date hypothesis the total
    return on the event row and the raw return on the next row should both look like ordinary days; on
    the early hypothesis the raw return on the event row and the total return on the next row should.
    A fund is realigned when the early hypothesis explains its data at least twice as well. ``market``
    (dates × funds returns, e.g. the peer group's mean) is taken off both days first, so a market move the
    size of the distribution does not decide it.
    """
    amt = np.where(np.isfinite(amount), amount, 0.0)
    funds = nav.shape[1]
    out = np.zeros_like(nav)
    has = np.flatnonzero((amt > 0).any(axis=0))
    events = (amt > 0).sum(axis=0)
    shifted = np.zeros(funds, dtype=bool)
    if has.size == 0:
        return out, Alignment(shifted=shifted, events=events)
    sub_nav, sub_amt = nav[:, has], amt[:, has]
    rows, k = np.nonzero(sub_amt > 0)
    prev, nxt = _prev_valid(sub_nav), _next_valid(sub_nav)
    here, before, after = sub_nav[rows, k], prev[rows, k], nxt[rows, k]
    rate = is_rate[has][k]
    nxt_row = _next_rows(sub_nav)[rows, k]
    m_here = np.zeros(rows.size) if market is None else np.nan_to_num(market[:, has][rows, k])
    m_next = np.zeros(rows.size)
    if market is not None:
        m_next = np.where(nxt_row >= 0, np.nan_to_num(market[:, has][np.maximum(nxt_row, 0), k]), 0.0)
    d_ex = np.where(rate, sub_amt[rows, k] / 100.0 * before, sub_amt[rows, k])
    d_early = np.where(rate, sub_amt[rows, k] / 100.0 * here, sub_amt[rows, k])
    with np.errstate(all="ignore"):
        cost_ex = np.abs((here + d_ex) / before - 1.0 - m_here) + np.abs(after / here - 1.0 - m_next)
        cost_early = np.abs(here / before - 1.0 - m_here) + np.abs((after + d_early) / here - 1.0 - m_next)
    # an event on a fund's last row cannot be early (no next row): it counts for the ex-date reading
    cost_early = np.where(np.isfinite(after), cost_early, 1e9)
    total_ex = np.bincount(k, weights=np.nan_to_num(cost_ex, nan=0.0), minlength=has.size)
    total_early = np.bincount(k, weights=np.nan_to_num(cost_early, nan=0.0), minlength=has.size)
    early = 2.0 * total_early < total_ex
    shifted[has] = early
    move = early[k]
    target = np.where(move, nxt_row, rows)
    ok = target >= 0
    np.add.at(out, (target[ok], has[k[ok]]), np.where(move, d_early, d_ex)[ok])
    return out, Alignment(shifted=shifted, events=events)


def _next_rows(nav: np.ndarray) -> np.ndarray:
    """For each cell: the next row where that fund has a NAV (−1 when none)."""
    rows = nav.shape[0]
    idx = np.where(np.isfinite(nav), np.arange(rows)[:, None], rows)
    nearest = np.minimum.accumulate(idx[::-1], axis=0)[::-1]
    out = np.full(nav.shape, rows, dtype=int)
    out[:-1] = nearest[1:]
    return np.where(out < rows, out, -1)


def total_return_levels(nav: np.ndarray, distribution: np.ndarray) -> np.ndarray:
    """Levels (dates × funds) with ``r_t = (NAV_t + D_t) / NAV_{t−1} − 1``, starting at the first NAV.

    ``distribution`` is dated on ex-dates (see :func:`align_distributions`), 0 or NaN where none. Rows
    where a fund has no NAV stay NaN; the return after such a row is taken from the last NAV before it.
    """
    present = np.isfinite(nav)
    d = np.where(np.isfinite(distribution), distribution, 0.0)
    prev = _prev_valid(nav)
    with np.errstate(all="ignore"):
        ratio = np.where(present & np.isfinite(prev), (nav + d) / prev, 1.0)
    growth = np.cumprod(ratio, axis=0)
    first_row = np.where(present.any(axis=0), present.argmax(axis=0), 0)
    base = nav[first_row, np.arange(nav.shape[1])]
    levels = growth * base
    levels[~present] = np.nan
    return levels


@dataclass(frozen=True)
class Adjustments:
    """What the data says about distributions, as dates × funds tables (NaN where a fund has no value).

    ``adjusted``: 수정기준가격; ``distribution``: 분배금 per 1,000좌; ``rate``: 분배율 in %. A fund "has"
    a kind of information when any of its cells in that table holds a value (0 included).
    """

    adjusted: pd.DataFrame | None = None
    distribution: pd.DataFrame | None = None
    rate: pd.DataFrame | None = None

    def empty(self) -> bool:
        return all(t is None or t.empty for t in (self.adjusted, self.distribution, self.rate))


def _table(
    table: pd.DataFrame | None, dates: pd.DatetimeIndex, codes: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """A table on ``dates`` × ``codes`` and, per fund, whether it has any value."""
    if table is None or table.empty:
        return np.full((len(dates), len(codes)), np.nan), np.zeros(len(codes), dtype=bool)
    values = table.reindex(index=dates, columns=codes).to_numpy(dtype=float)
    return values, np.isfinite(values).any(axis=0)


@dataclass(frozen=True)
class Levels:
    """Total-return levels for a fund matrix, and how each fund's were built."""

    levels: np.ndarray
    source: np.ndarray
    """Per fund: ``"adjusted"``, ``"distribution"``, ``"rate"`` or ``"raw"``."""
    realigned: np.ndarray
    """Per fund: its distributions were dated one row early and were moved to the ex-date."""
    events: np.ndarray
    """Per fund: number of distributions used."""


def peer_mean_returns(nav: np.ndarray, groups: np.ndarray, cols: np.ndarray, most: int = 200) -> np.ndarray:
    """Per listed fund: the mean daily return of (up to ``most``) funds of its peer group (dates × cols)."""
    out = np.zeros((nav.shape[0], cols.size))
    for g in {groups[c] for c in cols.tolist()}:
        peers = np.flatnonzero(groups == g)[:most]
        with np.errstate(all="ignore"):
            r = nav[1:, peers] / nav[:-1, peers] - 1.0
        r[np.abs(r) > 0.05] = np.nan  # resets and data errors are not the market
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nan_to_num(np.nanmean(r, axis=1))
        out[1:, groups[cols] == g] = mean[:, None]
    return out


def levels_for(
    nav: np.ndarray,
    dates: pd.DatetimeIndex,
    codes: list[str],
    adjustments: Adjustments | None,
    groups: np.ndarray | None = None,
) -> Levels:
    """The best levels each fund's data allows: adjusted NAV, else NAV + 분배금, else NAV + 분배율, else raw NAV.

    ``nav`` is dates × ``codes``; funds without any adjustment information keep ``nav`` itself (the
    returned array is ``nav`` when no fund has any). ``groups`` (peer group per fund) give the market
    move that :func:`align_distributions` takes off.
    """
    funds = len(codes)
    source = np.full(funds, "raw", dtype=object)
    realigned = np.zeros(funds, dtype=bool)
    events = np.zeros(funds, dtype=int)
    if adjustments is None or adjustments.empty():
        return Levels(levels=nav, source=source, realigned=realigned, events=events)
    adj, has_adj = _table(adjustments.adjusted, dates, codes)
    dist, has_dist = _table(adjustments.distribution, dates, codes)
    rate, has_rate = _table(adjustments.rate, dates, codes)
    use_dist = ~has_adj & has_dist
    use_rate = ~has_adj & ~has_dist & has_rate
    levels = nav.copy()
    levels[:, has_adj] = np.where(np.isfinite(nav[:, has_adj]), adj[:, has_adj], np.nan)
    source[has_adj] = "adjusted"
    cols = np.flatnonzero(use_dist | use_rate)
    if cols.size:
        amount = np.where(use_dist[cols], dist[:, cols], rate[:, cols])
        market = None if groups is None else peer_mean_returns(nav, groups, cols)
        on_ex, align = align_distributions(nav[:, cols], amount, use_rate[cols], market)
        levels[:, cols] = total_return_levels(nav[:, cols], on_ex)
        realigned[cols] = align.shifted
        events[cols] = align.events
        source[use_dist] = "distribution"
        source[use_rate] = "rate"
    return Levels(levels=levels, source=source, realigned=realigned, events=events)
