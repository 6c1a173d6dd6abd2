"""Which raw-NAV funds the reset detector must look at on each as-of date of a history.

:func:`~evaluator.domains.fund.engine.resets.detect_resets` estimates each fund's beta and spread from every
third day up to the as-of date, so its answer changes with the date, and running it on every raw-NAV
fund at every date costs more than the rest of the history. This screen redoes its arithmetic for all
dates at once (cumulative sums over the sampled days, the candidate days as a short list) and clears
the funds whose every candidate day misses the detector's tests by a clear margin (``TOL``, far above
the rounding differences of a different summation order). The detector itself still decides every fund
that is not cleared, so the screen only saves work: it never answers in the detector's place.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluator.domains.fund.engine import PARAMETERS

# The detector's own thresholds (this screen redoes its arithmetic, so it must read the very same values).
BASE, LANDING, MIN_DROP, PREFILTER = (
    PARAMETERS.reset_base, PARAMETERS.reset_landing, PARAMETERS.reset_min_drop, PARAMETERS.reset_prefilter
)
STRIDE, WIDE, Z_DROP = PARAMETERS.reset_stride, PARAMETERS.reset_wide, PARAMETERS.reset_z_drop

TOL = 1e-7
"""Margin on returns and landing ratios within which a candidate day is left to the detector."""
_CHUNK = 2048
"""Funds per step of the one-time pass (bounds its temporaries)."""


class ResetScreen:
    """The detector's sums for raw-NAV funds (``cols``), for every as-of row at once.

    ``bench_col``: each fund's benchmark column of ``bench_returns`` (−1: none). A fund without a
    benchmark is measured against peer medians, which this screen does not redo: such a fund is left to
    the detector from its first candidate day on.
    """

    def __init__(
        self,
        levels: np.ndarray,
        cols: np.ndarray,
        bench_returns: np.ndarray | None,
        bench_col: np.ndarray,
        ends: Sequence[int] | None = None,
    ):
        self.cols = cols
        self.bench = bench_col >= 0
        parts: dict[str, list[np.ndarray]] = {k: [] for k in ("n", "m", "mm", "rm", "r", "rr")}
        cells: list[tuple[np.ndarray, ...]] = []
        sampled = len(range(0, max(levels.shape[0] - 1, 0), STRIDE))
        # the sums are kept only where an as-of row needs them (all sampled rows when not told)
        qs = sorted(range(sampled)) if ends is None else sorted({(e - 1) // STRIDE for e in ends if e > 0})
        qs = [q for q in qs if q < sampled]
        self.q_index = {q: i for i, q in enumerate(qs)}
        starts = np.r_[0, np.array(qs[:-1], dtype=int) + 1] if qs else np.zeros(0, dtype=int)
        for lo in range(0, cols.size, _CHUNK):
            part = slice(lo, lo + _CHUNK)
            x = levels[:, cols[part]]
            with np.errstate(all="ignore"):
                r = x[1:] / x[:-1] - 1.0
            m = np.zeros_like(r)
            has = self.bench[part]
            if bench_returns is not None and has.any():
                m[:, has] = np.nan_to_num(bench_returns[1:][:, bench_col[part][has]], nan=0.0)
            rs, ms = r[::STRIDE], m[::STRIDE]
            ok = np.isfinite(rs)
            r0 = np.where(ok, rs, 0.0)
            okf = ok.astype(float)
            for key, v in (
                ("n", okf),
                ("m", okf * ms),
                ("mm", okf * ms * ms),
                ("rm", r0 * ms),
                ("r", r0),
                ("rr", r0 * r0),
            ):
                segments = np.add.reduceat(v[: qs[-1] + 1], starts, axis=0) if qs else v[:0]
                parts[key].append(np.cumsum(segments, axis=0))
            with np.errstate(invalid="ignore"):
                rows, js = np.nonzero((np.abs(x[1:] - BASE) <= WIDE * BASE) & (r <= PREFILTER))
            cr, cm, nav = r[rows, js], m[rows, js], x[rows + 1, js]
            # could the day pass the landing and drop tests for some beta in [0, 2]? (beta·m spans
            # [min(0, 2m), max(0, 2m)]; landing bounds beta·m by the NAV, the drop test bounds it below)
            low = np.maximum.reduce(
                [np.minimum(0.0, 2.0 * cm), nav / (BASE * (1.0 + LANDING)) - 1.0, cr + MIN_DROP]
            )
            high = np.minimum(np.maximum(0.0, 2.0 * cm), nav / (BASE * (1.0 - LANDING)) - 1.0)
            keep = (low - TOL <= high + TOL) | ~has[js]
            cells.append((rows[keep], js[keep] + lo, cr[keep], cm[keep], nav[keep]))
        self.sums = {k: np.concatenate(v, axis=1) for k, v in parts.items()}
        self.rows, self.js, self.r, self.m, self.nav = (np.concatenate(c) for c in zip(*cells, strict=True))
        self.first_row = np.full(cols.size, levels.shape[0])
        np.minimum.at(self.first_row, self.js, self.rows + 1)
        """Per fund: the level row of its first possible reset (levels.shape[0] when none)."""

    def must_run(self, e: int) -> np.ndarray:
        """Per fund of ``cols``: whether the detector has to decide it for the as-of row ``e``."""
        q = (e - 1) // STRIDE  # last sampled return row (return rows 0 … e − 1)
        if q < 1:
            return self.first_row <= e
        out = ~self.bench & (self.first_row <= e)
        at = self.q_index.get(q)
        if at is None:  # a row the sums were not kept for: the detector decides every candidate
            return self.first_row <= e
        s = {k: v[at] for k, v in self.sums.items()}
        n = np.maximum(s["n"], 2.0)
        with np.errstate(all="ignore"):
            beta = np.clip(
                np.nan_to_num((s["rm"] - s["r"] * s["m"] / n) / (s["mm"] - s["m"] * s["m"] / n)), 0.0, 2.0
            )
        sel = (self.rows <= e - 1) & self.bench[self.js]
        rows, js = self.rows[sel], self.js[sel]
        move = beta[js] * self.m[sel]
        excess = self.r[sel] - move
        with np.errstate(all="ignore"):
            landing = np.abs(self.nav[sel] / (BASE * (1.0 + move)) - 1.0)
        surely = (landing <= LANDING - TOL) & (excess <= -MIN_DROP - TOL)
        maybe = (landing <= LANDING + TOL) & (excess <= -MIN_DROP + TOL)
        out[js[maybe & ~surely]] = True  # too close to call which days the spread leaves out
        left = surely & (rows % STRIDE == 0)
        lj, le = js[left], excess[left]
        size = self.cols.size
        s_e = s["r"] - beta * s["m"] - np.bincount(lj, weights=le, minlength=size)
        s_ee = (
            s["rr"] - 2 * beta * s["rm"] + beta**2 * s["mm"] - np.bincount(lj, weights=le**2, minlength=size)
        )
        k = n - np.bincount(lj, minlength=size)
        with np.errstate(all="ignore"):
            sd = np.sqrt(np.maximum((s_ee - s_e * s_e / k) / (k - 1), 0.0))
        limit = -np.maximum(MIN_DROP, Z_DROP * np.nan_to_num(sd, nan=0.0))
        out[js[maybe & (excess <= limit[js] + TOL)]] = True
        return out
