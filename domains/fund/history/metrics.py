"""Window metrics for every as-of date of a grade history from one pass over the levels matrix.

The single-date engine (:mod:`evaluator.domains.fund.engine.metrics`) slices each window and sums it. Here the
sums every metric needs (Σx, Σx², Σmin(x, 0)², Σx·y, Σ(x − y), Σ(x − y)², Σrf·x, with x = r − rf_d and y
the fund's benchmark's b − rf_d) are accumulated once, down the dates × funds matrix, and kept only at
the rows where some window starts or ends; a window's sum is the difference of two of them. Σx and Σx²
are taken on x less a per-fund centre (its average daily excess return over the whole file), so the
running totals stay near zero and the differences keep ~1e-15 relative precision (the same formulas as
the engine, so the results agree with single-date runs to far better than 1e-9).

Max drawdown and MRAR are not sums: the drawdown comes from per-segment summaries combined exactly
(:mod:`evaluator.domains.fund.history.drawdown`, bit-identical to the engine's), and MRAR is the engine's
own month-point function on the window's view of the matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine import PARAMETERS, Market, dispersion, mrar, window_start_row
from evaluator.domains.fund.history.drawdown import DrawdownSegments
from evaluator.methodology.rubric import METRICS, PERIODS

TRADING_DAYS, MRAR_GAMMA = PARAMETERS.trading_days, PARAMETERS.mrar_gamma
_ROWS = 256
"""Rows per step of the accumulation pass (bounds its temporaries to 256 × funds)."""


def window_starts(cal: pd.DatetimeIndex, e: int, periods: Sequence[str] = tuple(PERIODS)) -> dict[str, int]:
    """The usable windows ending at row ``e``: period → starting row (the engine's rule: ≥ 2 returns)."""
    out = {}
    for p in periods:
        s = window_start_row(cal[: e + 1], cal[e], PERIODS[p])
        if s is not None and e - s >= 2:
            out[p] = s
    return out


class WindowSums:
    """Running sums of the window statistics, kept at the rows where windows start or end."""

    def __init__(
        self,
        levels: np.ndarray,
        cal: pd.DatetimeIndex,
        rf_annual: np.ndarray,
        bench_returns: np.ndarray | None,
        bench_of_fund: np.ndarray | None,
        ends: Sequence[int],
    ) -> None:
        """``bench_returns``: dates × benchmarks daily returns (NaN on the first row), as the preparation
        (:class:`~evaluator.domains.fund.history.prep.CrossDate`) builds them once for all its users."""
        self.levels, self.cal, self.rf_annual = levels, cal, rf_annual
        self.market = Market(dates=cal, rf_annual=rf_annual)
        self.rf_d = (1.0 + rf_annual) ** (1.0 / TRADING_DAYS) - 1.0
        self.rf_d[0] = np.nan  # no return on the first row
        self.starts = {e: window_starts(cal, e) for e in ends}
        rows = sorted({*ends, *(s for st in self.starts.values() for s in st.values())})
        self.at = {r: j for j, r in enumerate(rows)}
        funds = levels.shape[1]
        self.col = bench_of_fund if bench_of_fund is not None else np.full(funds, -1)
        self.bench = bench_returns if bench_of_fund is not None else None
        rf_rows = self.rf_d[1:]
        self.rf_varies = bool(rf_rows.size and not np.all(rf_rows == rf_rows[0]))
        self.centre = self._centres()
        names = ["x", "xx", "down"]
        if self.bench is not None:
            names += ["xy", "a", "aa"]
        if self.rf_varies:
            names.append("rx")
        self.sums = {k: np.zeros((len(rows), funds)) for k in names}
        self._accumulate(rows)
        self.drawdown = DrawdownSegments(levels, rows)
        self._month_terms(max(ends) if ends else 0)

    def _centres(self) -> np.ndarray:
        """A per-fund centre near its average x (exactness does not matter, only closeness)."""
        lv = self.levels
        present = np.isfinite(lv)
        has = present.any(axis=0)
        first = present.argmax(axis=0)
        last = lv.shape[0] - 1 - present[::-1].argmax(axis=0)
        cols = np.arange(lv.shape[1])
        span = np.maximum(last - first, 1)
        with np.errstate(all="ignore"):
            growth = (lv[last, cols] / lv[first, cols]) ** (1.0 / span) - 1.0
        c = growth - np.nanmean(self.rf_d[1:]) if lv.shape[0] > 1 else np.zeros(lv.shape[1])
        return np.where(has & np.isfinite(c), c, 0.0)

    def _accumulate(self, rows: list[int]) -> None:
        lv, c = self.levels, self.centre
        totals = {k: np.zeros(lv.shape[1]) for k in self.sums}
        col = self.col
        safe = np.maximum(col, 0)
        t = 1
        for j, stop in enumerate(rows):
            while t <= stop:
                b = min(stop + 1, t + _ROWS)
                with np.errstate(all="ignore"):
                    x = np.divide(lv[t:b], lv[t - 1 : b - 1])
                    x -= 1.0
                    rf = self.rf_d[t:b]
                    x -= rf[0] if not self.rf_varies else rf[:, None]
                    ok = np.isfinite(x)
                    x0 = np.where(ok, x, 0.0)
                    xc = np.where(ok, x - c, 0.0)
                    totals["x"] += xc.sum(axis=0)
                    totals["xx"] += np.einsum("ij,ij->j", xc, xc)
                    down = np.minimum(x0, 0.0)
                    totals["down"] += np.einsum("ij,ij->j", down, down)
                    if self.rf_varies:
                        totals["rx"] += rf @ x0
                    if self.bench is not None:
                        y = self.bench[t:b] - rf[:, None]
                        yf = y[:, safe]
                        totals["xy"] += np.einsum("ij,ij->j", x0, np.where(np.isfinite(yf), yf, 0.0))
                        a = np.subtract(x, yf)
                        a = np.where(np.isfinite(a), a, 0.0)
                        totals["a"] += a.sum(axis=0)
                        totals["aa"] += np.einsum("ij,ij->j", a, a)
                t = b
            for k in self.sums:
                self.sums[k][j] = totals[k]

    def window(self, s: int, e: int) -> dict[str, np.ndarray]:
        """The sums over the window's returns (rows s+1 … e)."""
        js, je = self.at[s], self.at[e]
        return {k: v[je] - v[js] for k, v in self.sums.items()}

    def metrics(self, e: int, measured: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
        """``{period: {metric: values}}`` for the windows ending at row ``e``, NaN outside ``measured``."""
        funds = self.levels.shape[1]
        result = {p: {m: np.full(funds, np.nan) for m in METRICS} for p in PERIODS}
        starts = self.starts[e]
        if not starts:
            return result
        drawdowns = self.drawdown.drawdowns(starts, e, measured)
        with np.errstate(all="ignore"):
            for p, s in starts.items():
                values = self._window(s, e)
                values["max_drawdown"] = drawdowns[p]
                values["calmar"] = values["annualized_return"] / np.abs(drawdowns[p])
                values["mrar"] = self._mrar(s, e)
                valid = measured & np.isfinite(self.levels[s]) & np.isfinite(self.levels[e])
                result[p] = {m: np.where(valid & np.isfinite(values[m]), values[m], np.nan) for m in METRICS}
        return result

    def _month_terms(self, last: int) -> None:
        """MRAR's terms (1 + ER_m)^(−γ) between consecutive month-ends, and their running sums.

        Every window's month points are its start row, the month-ends inside it and its end (a month-end
        here): all terms but the first are shared by the windows, so a window's sum is a difference of
        running sums (values near 1: a few 1e-16 from the engine's mean), plus its own first term.
        """
        cal = self.cal[: last + 1]
        keys = cal.year.to_numpy() * 12 + cal.month.to_numpy()
        self.month_ends = np.flatnonzero(np.r_[keys[1:] != keys[:-1], True])
        self.month_at = {int(r): i for i, r in enumerate(self.month_ends)}
        funds = self.levels.shape[1]
        terms = np.zeros((len(self.month_ends), funds))
        with np.errstate(all="ignore"):
            if len(self.month_ends) > 1:
                terms[1:] = self._terms(self.month_ends[:-1], self.month_ends[1:])
        bad = ~np.isfinite(terms)
        self.term_sums = np.cumsum(np.where(bad, 0.0, terms), axis=0)
        self.term_bad = np.cumsum(bad, axis=0)

    def _terms(self, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        """(1 + ER)^(−γ) from row(s) ``a`` to row(s) ``b``: the engine's expression, element by element."""
        monthly = self.levels[b] / self.levels[a] - 1.0
        rf_m = (1.0 + self.rf_annual[b]) ** (1.0 / 12.0) - 1.0
        rf_m = rf_m[:, None] if np.ndim(rf_m) else rf_m
        excess = (1.0 + monthly) / (1.0 + rf_m) - 1.0
        return (1.0 + excess) ** (-MRAR_GAMMA)

    def _mrar(self, s: int, e: int) -> np.ndarray:
        """The window's MRAR; columns with a missing or non-finite term take the engine's own function."""
        at = self.month_at
        inner = self.month_ends[(self.month_ends > s) & (self.month_ends < e)]
        if e not in at or inner.size == 0:
            return mrar(self.levels[s : e + 1], self.market, s, e)
        a, b = at[int(inner[0])], at[e]
        first = self._terms(s, int(inner[0]))
        total = first + (self.term_sums[b] - self.term_sums[a])
        out = (total / (b - a + 1)) ** (-12.0 / MRAR_GAMMA) - 1.0
        odd = np.flatnonzero((self.term_bad[b] != self.term_bad[a]) | ~np.isfinite(first))
        if odd.size:
            out[odd] = mrar(self.levels[s : e + 1][:, odd], self.market, s, e)
        return out

    def _window(self, s: int, e: int) -> dict[str, np.ndarray]:
        n = e - s
        ann = float(TRADING_DAYS)
        w = self.window(s, e)
        c = self.centre
        lv = self.levels
        out: dict[str, np.ndarray] = {"annualized_return": (lv[e] / lv[s]) ** (ann / n) - 1.0}
        x_sum = w["x"] + n * c
        sum_sq = w["xx"] + 2.0 * c * w["x"] + n * c * c
        var = (w["xx"] - w["x"] * w["x"] / n) / (n - 1)
        x_std = np.sqrt(np.where(var > 1e-12 * sum_sq / n, var, 0.0))
        x_mean = x_sum / n
        downside_dev = np.sqrt(w["down"] / n)
        rf_d = self.rf_d[s + 1 : e + 1]
        if np.all(rf_d == rf_d[0]):
            r_std = x_std
        else:
            rf_mean = rf_d.mean()
            rf_c = rf_d - rf_mean
            cross = w["rx"] - rf_mean * x_sum
            r_std = np.sqrt(np.maximum(x_std**2 + (2.0 * cross + rf_c @ rf_c) / (n - 1), 0.0))
        out["annualized_volatility"] = r_std * np.sqrt(ann)
        out["sharpe"] = x_mean / x_std * np.sqrt(ann)
        out["sortino"] = x_mean * ann / (downside_dev * np.sqrt(ann))
        out.update(self._benchmark(w, x_sum, x_mean, rf_d, s, e))
        return out

    def _benchmark(
        self,
        w: Mapping[str, np.ndarray],
        x_sum: np.ndarray,
        x_mean: np.ndarray,
        rf_d: np.ndarray,
        s: int,
        e: int,
    ) -> dict[str, np.ndarray]:
        funds = self.levels.shape[1]
        names = ("beta", "jensen_alpha", "tracking_error", "information_ratio")
        if self.bench is None:
            return {k: np.full(funds, np.nan) for k in names}
        n = e - s
        b = self.bench[s + 1 : e + 1]
        covered = np.isfinite(b).all(axis=0)
        y = b - rf_d[:, None]
        y_mean = y.mean(axis=0)
        yc = y - y_mean
        y_var = np.einsum("ij,ij->j", yc, yc) / (n - 1)
        col = self.col
        has = (col >= 0) & covered[np.maximum(col, 0)]
        g = np.where(has, col, 0)
        cov = (w["xy"] - y_mean[g] * x_sum) / (n - 1)
        beta = cov / y_var[g]
        alpha = (x_mean - beta * y_mean[g]) * TRADING_DAYS
        te = dispersion(w["aa"], w["a"], n) * np.sqrt(float(TRADING_DAYS))
        ir = (w["a"] / n) * TRADING_DAYS / te
        result = {"beta": beta, "jensen_alpha": alpha, "tracking_error": te, "information_ratio": ir}
        return {k: np.where(has, v, np.nan) for k, v in result.items()}

