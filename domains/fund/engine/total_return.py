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

from evaluator.domains.fund.types import Adjustments


@dataclass(frozen=True)
class Events:
    """Distributions as sparse cells of a dates × funds matrix: row, fund column, amount (or rate in %)."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray

    @staticmethod
    def none() -> Events:
        return Events(np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0))


def cells(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a 2-D mask, in the same row-major order; through the flat index when the mask is
    row-major, which is several times faster than numpy's 2-D ``nonzero`` on a large, sparse mask."""
    if not mask.flags.c_contiguous:
        return np.nonzero(mask)
    rows, cols = np.divmod(np.flatnonzero(mask), max(mask.shape[1], 1))
    return rows, cols


def neighbour_rows(nav: np.ndarray, rows: np.ndarray, cols: np.ndarray, step: int) -> np.ndarray:
    """For each (row, col): the nearest row before (step −1) or after (+1) with a NAV of that fund; −1 if none.

    Usually the adjacent row; only cells next to a gap are searched.
    """
    out = rows + step
    inside = (out >= 0) & (out < nav.shape[0])
    ok = inside.copy()
    ok[inside] = np.isfinite(nav[out[inside], cols[inside]])
    out = np.where(ok, out, -1)
    for k in np.flatnonzero(~ok & inside).tolist():
        col = nav[:, cols[k]]
        found = (
            np.flatnonzero(np.isfinite(col[: rows[k]]))[-1:]
            if step < 0
            else rows[k] + 1 + np.flatnonzero(np.isfinite(col[rows[k] + 1 :]))[:1]
        )
        out[k] = int(found[0]) if found.size else -1
    return out


def align_distributions(
    nav: np.ndarray, events: Events, is_rate: np.ndarray, market: np.ndarray | None = None
) -> tuple[Events, np.ndarray]:
    """Distribution amounts dated on their ex-dates, and per fund column whether they were moved there.

    ``events.values`` are amounts per 1,000좌, or 분배율 in % where ``is_rate`` (per event). For each fund the
    two datings are compared over all its events: on the ex-date reading the total return on the event
    row and the raw return on the next row should both look like ordinary days; on the early reading (the
    vendor dated it on the 결산일) the raw return on the event row and the total return on the next row
    should. A fund is realigned when the early reading explains its data at least twice as well.
    ``market`` (per event: the market's return on the event row and on the next row, shape 2 × events)
    is taken off first, so a market move the size of the distribution does not decide it.
    """
    funds = nav.shape[1]
    shifted = np.zeros(funds, dtype=bool)
    rows, cols = events.rows, events.cols
    if rows.size == 0:
        return events, shifted
    prev_r, next_r = neighbour_rows(nav, rows, cols, -1), neighbour_rows(nav, rows, cols, +1)
    here = nav[rows, cols]
    before = np.where(prev_r >= 0, nav[np.maximum(prev_r, 0), cols], np.nan)
    after = np.where(next_r >= 0, nav[np.maximum(next_r, 0), cols], np.nan)
    d_ex = np.where(is_rate, events.values / 100.0 * before, events.values)
    d_early = np.where(is_rate, events.values / 100.0 * here, events.values)
    m_here, m_next = (np.zeros(rows.size), np.zeros(rows.size)) if market is None else market
    with np.errstate(all="ignore"):
        cost_ex = np.abs((here + d_ex) / before - 1.0 - m_here) + np.abs(after / here - 1.0 - m_next)
        cost_early = np.abs(here / before - 1.0 - m_here) + np.abs((after + d_early) / here - 1.0 - m_next)
    cost_early = np.where(np.isfinite(after), cost_early, 1e9)  # the last row cannot be early
    total_ex = np.bincount(cols, weights=np.nan_to_num(cost_ex, nan=0.0), minlength=funds)
    total_early = np.bincount(cols, weights=np.nan_to_num(cost_early, nan=0.0), minlength=funds)
    shifted = (np.bincount(cols, minlength=funds) > 0) & (2.0 * total_early < total_ex)
    move = shifted[cols]
    target = np.where(move, next_r, rows)
    amount = np.where(move, d_early, d_ex)
    ok = (target >= 0) & np.isfinite(amount)
    return Events(target[ok], cols[ok], amount[ok]), shifted


def apply_distributions(nav: np.ndarray, events: Events, out: np.ndarray | None = None) -> np.ndarray:
    """Levels with ``r_t = (NAV_t + D_t) / NAV_{t−1} − 1`` on ex-dated amounts, written into ``out``.

    Computed as ``NAV_t · Π_{e ≤ t} (1 + D_e / NAV_e)``: the same ratios, and a fund without distributions
    keeps its NAVs exactly. Rows without a NAV stay NaN; the return after a gap uses the last NAV before it.
    The running product only changes on event rows, so it is kept as one factor per fund and applied to
    the rows up to the next event row: the products of a cumulative product down a dates × funds factor
    matrix, in the same order, without building that matrix.
    """
    if out is None:
        out = nav.copy()
    elif out is not nav:
        np.copyto(out, nav)
    if events.rows.size == 0:
        return out
    with np.errstate(all="ignore"):
        factor = 1.0 + events.values / nav[events.rows, events.cols]
    funds, k = np.unique(events.cols, return_inverse=True)
    wide = funds.size * 3 > nav.shape[1]  # most funds: whole rows beat gathering their columns
    cols = events.cols if wide else k
    order = np.lexsort((cols, events.rows))  # stable: events on one cell keep their order
    rows, cols, factor = events.rows[order], cols[order], factor[order]
    new_cell = np.r_[True, (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])]
    cell_factor = np.ones(int(new_cell.sum()))
    np.multiply.at(cell_factor, np.cumsum(new_cell) - 1, factor)  # 1 · f₁ · f₂ … per cell
    rows, cols = rows[new_cell], cols[new_cell]
    running = np.ones(nav.shape[1] if wide else funds.size)
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    stops = np.r_[rows[starts[1:]], nav.shape[0]]
    for a, b, stop in zip(
        starts.tolist(), np.r_[starts[1:], rows.size].tolist(), stops.tolist(), strict=True
    ):
        running[cols[a:b]] *= cell_factor[a:b]
        r = int(rows[a])
        if wide:
            np.multiply(nav[r:stop], running, out=out[r:stop])
        else:
            out[r:stop, funds] = nav[r:stop, funds] * running
    return out


def total_return_levels(nav: np.ndarray, distribution: np.ndarray) -> np.ndarray:
    """Dense form of :func:`apply_distributions`: ``distribution`` is dates × funds on ex-dates (0/NaN = none)."""
    d = np.where(np.isfinite(distribution), distribution, 0.0)
    rows, cols = np.nonzero(d > 0)
    return apply_distributions(nav, Events(rows, cols, d[rows, cols]))


def _positions(
    table: pd.DataFrame, dates: pd.DatetimeIndex, codes: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A table's values, the matrix row of each of its rows and the matrix column of each of its columns
    (−1 where the matrix has none)."""
    matrix = pd.Index(codes)
    if matrix.is_unique:
        columns = table.columns if table.columns.inferred_type == "string" else table.columns.map(str)
        col_pos = matrix.get_indexer(columns)
    else:
        where = {c: i for i, c in enumerate(codes)}
        col_pos = np.array([where.get(str(c), -1) for c in table.columns], dtype=int)
    row_pos = dates.get_indexer(pd.DatetimeIndex(table.index))
    return table.to_numpy(dtype=float), np.asarray(row_pos), np.asarray(col_pos, dtype=int)


def distribution_events(
    table: pd.DataFrame | None, dates: pd.DatetimeIndex, codes: list[str]
) -> tuple[Events, np.ndarray]:
    """Positive cells of a distribution table as events on the matrix, and per fund whether it has any value.

    Events come in row-major order (by row, then column); the table is scanned in its own memory order.
    """
    has = np.zeros(len(codes), dtype=bool)
    if table is None or table.empty:
        return Events.none(), has
    values, row_pos, col_pos = _positions(table, dates, codes)
    has_col = np.isfinite(values).any(axis=0)
    has[col_pos[(col_pos >= 0) & has_col]] = True
    with np.errstate(invalid="ignore"):
        if values.flags.f_contiguous and not values.flags.c_contiguous:
            c, r = cells(values.T > 0)
            order = np.lexsort((c, r))
            r, c = r[order], c[order]
        else:
            r, c = cells(values > 0)
    keep = (row_pos[r] >= 0) & (col_pos[c] >= 0)
    r, c = r[keep], c[keep]
    return Events(row_pos[r], col_pos[c], values[r, c]), has


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
    missing_adjusted: np.ndarray
    """Per fund with an adjusted column: dates with a NAV but no adjusted NAV."""


def peer_mean_returns(
    nav: np.ndarray, groups: np.ndarray, cols: np.ndarray, most: int = 200, rows: np.ndarray | None = None
) -> dict[object, np.ndarray]:
    """Per peer group of the listed funds: the mean daily return of up to ``most`` of its funds (by row).

    ``rows``: only these rows are needed (the others are left 0); each row's mean is computed alone, so
    its value does not depend on which other rows are asked for.
    """
    out: dict[object, np.ndarray] = {}
    need = np.arange(1, nav.shape[0]) if rows is None else np.unique(rows[rows >= 1])
    for g in {groups[c] for c in cols.tolist()}:
        peers = np.flatnonzero(groups == g)[:most]
        with np.errstate(all="ignore"):
            r = nav[np.ix_(need, peers)] / nav[np.ix_(need - 1, peers)] - 1.0
        r[np.abs(r) > 0.05] = np.nan  # resets and data errors are not the market
        means = np.zeros(nav.shape[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means[need] = np.nan_to_num(np.nanmean(r, axis=1))
        out[g] = means
    return out


def levels_for(
    nav: np.ndarray,
    dates: pd.DatetimeIndex,
    codes: list[str],
    adjustments: Adjustments | None,
    groups: np.ndarray | None = None,
    *,
    inplace: bool = False,
) -> Levels:
    """The best levels each fund's data allows: adjusted NAV, else NAV + 분배금, else NAV + 분배율, else raw NAV.

    ``nav`` is dates × ``codes``. Funds without any adjustment information keep their NAVs exactly; with
    ``inplace`` the other funds' columns of ``nav`` itself are overwritten (no copy of the whole matrix).
    ``groups`` (peer group per fund) give the market move that :func:`align_distributions` takes off.
    """
    funds = len(codes)
    source = np.full(funds, "raw", dtype=object)
    realigned = np.zeros(funds, dtype=bool)
    counts = np.zeros(funds, dtype=int)
    missing = np.zeros(funds, dtype=int)
    levels = nav if inplace else nav.copy()
    if adjustments is None or adjustments.empty():
        return Levels(levels, source, realigned, counts, missing)
    dist, has_dist = distribution_events(adjustments.distribution, dates, codes)
    rate, has_rate = distribution_events(adjustments.rate, dates, codes)
    has_adj = np.zeros(funds, dtype=bool)
    if adjustments.adjusted is not None and not adjustments.adjusted.empty:
        values, row_pos, col_pos = _positions(adjustments.adjusted, dates, codes)
        ok_rows = row_pos >= 0
        for j in np.flatnonzero((col_pos >= 0) & np.isfinite(values).any(axis=0)).tolist():
            i = int(col_pos[j])
            column = np.full(len(dates), np.nan)
            column[row_pos[ok_rows]] = values[ok_rows, j]
            present = np.isfinite(levels[:, i])
            missing[i] = int((present & ~np.isfinite(column)).sum())
            levels[:, i] = np.where(present, column, np.nan)
            has_adj[i] = True
    source[has_adj] = "adjusted"
    use_dist = ~has_adj & has_dist
    use_rate = ~has_adj & ~has_dist & has_rate
    source[use_dist] = "distribution"
    source[use_rate] = "rate"
    keep_d, keep_r = use_dist[dist.cols], use_rate[rate.cols]
    events = Events(
        np.r_[dist.rows[keep_d], rate.rows[keep_r]],
        np.r_[dist.cols[keep_d], rate.cols[keep_r]],
        np.r_[dist.values[keep_d], rate.values[keep_r]],
    )
    if events.rows.size:
        is_rate = np.r_[np.zeros(keep_d.sum(), dtype=bool), np.ones(keep_r.sum(), dtype=bool)]
        market = None
        if groups is not None:
            nxt = np.minimum(events.rows + 1, len(dates) - 1)
            means = peer_mean_returns(levels, groups, np.unique(events.cols), rows=np.r_[events.rows, nxt])
            names = list(means)
            table = np.stack([means[g] for g in names])  # peer groups × dates
            slot = {g: i for i, g in enumerate(names)}
            of_event = np.array([slot[g] for g in groups[events.cols].tolist()], dtype=int)
            market = np.stack([table[of_event, events.rows], table[of_event, nxt]])
        on_ex, realigned = align_distributions(levels, events, is_rate, market)
        counts = np.bincount(on_ex.cols, minlength=funds)
        apply_distributions(levels, on_ex, out=levels)
    return Levels(levels, source, realigned, counts, missing)
