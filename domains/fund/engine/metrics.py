"""Vectorised performance metrics for a whole fund universe at once (a dates × funds NAV matrix).

Conventions (also in ``domains/fund/README.md``); every fund in a window uses the same calendar:

* Calendar: the dates of the matrix it is given — the engine passes total-return levels on the market
  calendar (:mod:`evaluator.domains.fund.engine.calendar`). A fund's levels inside its own history have no
  holes (the engine fills short ones and rejects a fund with a longer one before it gets here).
* Windows: calendar periods ending at ``as_of``. For N years the window holds the returns dated in
  ``(as_of − N years, as_of]``; the starting NAV is the last one dated on or before ``as_of − N years``.
  A fund without a NAV at that start (history shorter than the window) gets null for the window.
* Daily simple returns ``r_t = NAV_t / NAV_{t−1} − 1`` on total-return levels
  (:mod:`evaluator.domains.fund.engine.total_return`); benchmark returns ``b`` likewise from index levels
  (carried forward onto the calendar); daily risk-free ``rf_d = (1 + rf_annual)^(1/252) − 1`` (a rate
  series is carried forward; each day uses the rate in effect that day); ``n`` = returns in the window.
* annualized_return = Π(1+r)^(252/n) − 1;  annualized_volatility = std(r, ddof=1)·√252
* sharpe = mean(r−rf_d) / std(r−rf_d, ddof=1) · √252
* sortino = mean(r−rf_d)·252 / (√mean(min(r−rf_d, 0)²) · √252)
* max_drawdown = min_t(W_t / max_{s≤t} W_s − 1), W = wealth starting at 1 at the window start (≤ 0);
  calmar = annualized_return / |max_drawdown|
* beta = cov(r−rf_d, b−rf_d) / var(b−rf_d) (ddof=1); jensen_alpha = (mean(r−rf_d) − beta·mean(b−rf_d))·252
* tracking_error = std(r−b, ddof=1)·√252; information_ratio = mean(r−b)·252 / tracking_error
* mrar = mean((1+ER_m)^(−2))^(−6) − 1 over monthly returns, ER_m = (1+R_m)/(1+RF_m) − 1,
  RF_m = (1+rf_annual)^(1/12) − 1 (rate at the month's end). Month points: the window's starting NAV,
  then the last NAV of each calendar month after it, with ``as_of`` closing the last (maybe partial) month.
* A value that is not finite (zero volatility, no downside, no drawdown, …) is null.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.parameters import PARAMETERS
from evaluator.methodology.rubric import METRICS, PERIODS

TRADING_DAYS = PARAMETERS.trading_days
MRAR_GAMMA = PARAMETERS.mrar_gamma


@dataclass(frozen=True)
class Market:
    """Everything but the funds, aligned to the NAV calendar.

    ``bench_levels``: dates × benchmarks index levels (or None); ``bench_of_fund``: for each fund, the
    column of ``bench_levels`` it is measured against, −1 for none; ``rf_annual``: annual risk-free
    rate per calendar date.
    """

    dates: pd.DatetimeIndex
    rf_annual: np.ndarray
    bench_levels: np.ndarray | None = None
    bench_of_fund: np.ndarray | None = None


def row_on_or_before(dates: pd.DatetimeIndex, when: pd.Timestamp) -> int | None:
    """Row of the last calendar date on or before ``when`` (None when the calendar starts later)."""
    row = int(dates.searchsorted(when, side="right")) - 1
    return row if row >= 0 else None


def window_start(as_of: pd.Timestamp, years: float) -> pd.Timestamp:
    """``as_of − years`` in calendar terms (whole months, so 2.5 years works too)."""
    return as_of - pd.DateOffset(months=round(years * 12))


def window_start_row(dates: pd.DatetimeIndex, as_of: pd.Timestamp, years: float) -> int | None:
    """Row holding a window's starting NAV: the last date on or before ``as_of − years``."""
    return row_on_or_before(dates, window_start(as_of, years))


def month_points(dates: pd.DatetimeIndex, start_row: int, end_row: int) -> np.ndarray:
    """Rows used for monthly returns: the window start, each month's last row after it, then ``end_row``."""
    keys = dates.year.to_numpy() * 12 + dates.month.to_numpy()
    last_of_month = np.flatnonzero(np.r_[keys[1:] != keys[:-1], True])
    inner = last_of_month[(last_of_month > start_row) & (last_of_month < end_row)]
    return np.concatenate(([start_row], inner, [end_row])).astype(int)


def dispersion(sum_sq: np.ndarray, total: np.ndarray, n: int) -> np.ndarray:
    """Sample standard deviation from Σx² and Σx (one pass, no centred copy).

    For daily returns the mean is tiny next to the spread, so this matches the two-pass formula to
    ~1e-14; a variance below 1e-12 of the mean square is rounding noise and counts as zero.
    """
    var = (sum_sq - total * total / n) / (n - 1)
    return np.sqrt(np.where(var > 1e-12 * sum_sq / n, var, 0.0))


def _window_metrics(
    levels: np.ndarray, x: np.ndarray, market: Market, s: int, e: int, scratch: np.ndarray
) -> dict[str, np.ndarray]:
    """All metrics for one window, columns = funds.

    ``levels``: NAV rows s..e; ``x``: the window's n excess returns r − rf_d; ``scratch``: a reusable buffer
    of at least (n + 1) × funds.
    """
    n = e - s
    ann = float(TRADING_DAYS)
    out: dict[str, np.ndarray] = {}
    out["annualized_return"] = (levels[-1] / levels[0]) ** (ann / n) - 1.0

    x_sum = x.sum(axis=0)
    x_mean = x_sum / n
    x_std = dispersion(np.einsum("ij,ij->j", x, x), x_sum, n)
    downside = np.minimum(x, 0.0, out=scratch[:n])
    downside_dev = np.sqrt(np.einsum("ij,ij->j", downside, downside) / n)
    rf_d = (1.0 + market.rf_annual[s + 1 : e + 1]) ** (1.0 / TRADING_DAYS) - 1.0
    if np.all(rf_d == rf_d[0]):
        r_std = x_std  # r and r − c have the same spread
    else:  # var(r) = var(x) + 2·cov(x, rf) + var(rf), with the cross term from one BLAS matvec
        rf_c = rf_d - rf_d.mean()
        var_r = x_std**2 + (2.0 * (rf_c @ x) + rf_c @ rf_c) / (n - 1)
        r_std = np.sqrt(np.maximum(var_r, 0.0))
    out["annualized_volatility"] = r_std * np.sqrt(ann)
    out["sharpe"] = x_mean / x_std * np.sqrt(ann)
    out["sortino"] = x_mean * ann / (downside_dev * np.sqrt(ann))

    peaks = np.maximum.accumulate(levels, axis=0, out=scratch[: n + 1])
    mdd = np.divide(levels, peaks, out=peaks).min(axis=0) - 1.0
    out["max_drawdown"] = mdd
    out["calmar"] = out["annualized_return"] / np.abs(mdd)

    out["mrar"] = mrar(levels, market, s, e)
    out.update(_benchmark_metrics(x, x_mean, rf_d, market, s, e, scratch))
    return out


def mrar(levels: np.ndarray, market: Market, s: int, e: int) -> np.ndarray:
    points = month_points(market.dates, s, e)
    at = levels[points - s]
    monthly = at[1:] / at[:-1] - 1.0
    rf_m = (1.0 + market.rf_annual[points[1:]]) ** (1.0 / 12.0) - 1.0
    excess = (1.0 + monthly) / (1.0 + rf_m[:, None]) - 1.0
    return np.mean((1.0 + excess) ** (-MRAR_GAMMA), axis=0) ** (-12.0 / MRAR_GAMMA) - 1.0


def _benchmark_metrics(
    x: np.ndarray, x_mean: np.ndarray, rf_d: np.ndarray, market: Market, s: int, e: int, scratch: np.ndarray
) -> dict[str, np.ndarray]:
    n, funds = x.shape
    names = ("beta", "jensen_alpha", "tracking_error", "information_ratio")
    if market.bench_levels is None or market.bench_of_fund is None:
        return {k: np.full(funds, np.nan) for k in names}
    blv = market.bench_levels[s : e + 1]
    b = blv[1:] / blv[:-1] - 1.0  # n × benchmarks; NaN where the benchmark does not cover the window
    covered = np.isfinite(b).all(axis=0)
    col = market.bench_of_fund
    has = (col >= 0) & covered[np.maximum(col, 0)]
    safe_col = np.where(has, col, 0)
    y = b - rf_d[:, None]
    y_mean = y.mean(axis=0)
    yc = y - y_mean
    y_var = np.einsum("ij,ij->j", yc, yc) / (n - 1)
    cov = x.T @ yc / (n - 1)  # Σ x·(y − ȳ) = Σ (x − x̄)(y − ȳ): funds × benchmarks in one BLAS call
    beta = cov[np.arange(funds), safe_col] / y_var[safe_col]
    alpha = (x_mean - beta * y_mean[safe_col]) * TRADING_DAYS
    # Active returns r − b = x − y per benchmark block: funds are sorted by benchmark, so each block is
    # a slice and the benchmark column broadcasts (no funds-wide gather).
    te = np.full(funds, np.nan)
    active_mean = np.full(funds, np.nan)
    edges = np.r_[0, np.flatnonzero(np.diff(col)) + 1, funds]
    for lo, hi in pairwise(edges.tolist()):
        g = col[lo]
        if g < 0 or not covered[g]:
            continue
        active = np.subtract(x[:, lo:hi], y[:, g : g + 1], out=scratch[:n, lo:hi])
        total = active.sum(axis=0)
        active_mean[lo:hi] = total / n
        te[lo:hi] = dispersion(np.einsum("ij,ij->j", active, active), total, n) * np.sqrt(
            float(TRADING_DAYS)
        )
    ir = active_mean * TRADING_DAYS / te
    result = {"beta": beta, "jensen_alpha": alpha, "tracking_error": te, "information_ratio": ir}
    return {k: np.where(has, v, np.nan) for k, v in result.items()}


def compute_metrics(
    nav: np.ndarray, market: Market, as_of: pd.Timestamp, periods: Sequence[str] = tuple(PERIODS)
) -> dict[str, dict[str, np.ndarray]]:
    """``{period: {metric: values per fund}}``; NaN where the window is longer than a fund's history.

    ``nav`` is dates × funds on ``market.dates``; windows end at ``as_of`` (rows after it are ignored).
    """
    funds = nav.shape[1]
    result = {p: {m: np.full(funds, np.nan) for m in METRICS} for p in periods}
    end = row_on_or_before(market.dates, pd.Timestamp(as_of))
    if end is None:
        return result
    e = end
    starts = {p: window_start_row(market.dates, pd.Timestamp(as_of), PERIODS[p]) for p in periods}
    usable = {p: st for p, st in starts.items() if st is not None and e - st >= 2}
    if not usable:
        return result
    longest = e - min(usable.values())
    lo = e - longest
    col = market.bench_of_fund
    order = None if col is None or np.all(col[:-1] <= col[1:]) else np.argsort(col, kind="stable")
    window_nav = nav[lo : e + 1] if order is None else nav[lo : e + 1][:, order]
    sub = Market(
        dates=market.dates[lo : e + 1],
        rf_annual=market.rf_annual[lo : e + 1],
        bench_levels=None if market.bench_levels is None else market.bench_levels[lo : e + 1],
        bench_of_fund=None if col is None else (col if order is None else col[order]),
    )
    scratch = np.empty((longest + 1, funds))
    with np.errstate(all="ignore"):
        # excess returns x = r − rf_d for the longest window, in one buffer; shorter windows are its tail
        x_all = np.divide(window_nav[1:], window_nav[:-1], out=np.empty((longest, funds)))
        rf_all = (1.0 + sub.rf_annual[1:]) ** (1.0 / TRADING_DAYS) - 1.0
        x_all -= 1.0
        x_all -= rf_all[0] if np.all(rf_all == rf_all[0]) else rf_all[:, None]
        end_row = longest
        for period, s in usable.items():
            start_row = s - lo
            valid = np.isfinite(window_nav[start_row]) & np.isfinite(window_nav[end_row])
            values = _window_metrics(
                window_nav[start_row:], x_all[start_row:], sub, start_row, end_row, scratch
            )
            result[period] = {m: np.where(valid & np.isfinite(values[m]), values[m], np.nan) for m in METRICS}
    if order is not None:
        inverse = np.empty_like(order)
        inverse[order] = np.arange(funds)
        result = {p: {m: v[inverse] for m, v in by_metric.items()} for p, by_metric in result.items()}
    return result


@dataclass(frozen=True)
class KnownMetrics:
    """Window metrics already measured for some funds at one as-of date (a grade history's cross-date pass).

    ``codes``: the funds in the engine's order; ``measured``: which of them ``values`` holds; the rest are
    measured here. The grade history hands its last date's metrics to the engine for the ``latest/``
    reports, so they are not computed twice and agree with the history's last row.
    """

    codes: list[str]
    as_of: pd.Timestamp
    measured: np.ndarray
    values: dict[str, dict[str, np.ndarray]]
    nav: np.ndarray | None = None
    """The NAV rows up to ``as_of`` as a dates × ``codes`` matrix (what the engine's preparation copies first)."""


def metrics_for(
    nav: np.ndarray, market: Market, as_of: pd.Timestamp, codes: Sequence[str], known: KnownMetrics | None
) -> dict[str, dict[str, np.ndarray]]:
    """:func:`compute_metrics`, taking the funds ``known`` holds from it (when it is for these funds and date)."""
    if known is None or list(codes) != known.codes or pd.Timestamp(as_of) != known.as_of:
        return compute_metrics(nav, market, as_of)
    out = {p: {m: np.array(v, dtype=float) for m, v in known.values[p].items()} for p in PERIODS}
    rest = np.flatnonzero(~known.measured)
    if rest.size:
        col = market.bench_of_fund
        sub = Market(
            dates=market.dates,
            rf_annual=market.rf_annual,
            bench_levels=market.bench_levels,
            bench_of_fund=None if col is None else col[rest],
        )
        own = compute_metrics(nav[:, rest], sub, as_of)
        for p, by_metric in own.items():
            for m, values in by_metric.items():
                out[p][m][rest] = values
    return out
