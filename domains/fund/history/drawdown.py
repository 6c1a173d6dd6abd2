"""Max drawdowns of every as-of date's windows from per-segment summaries, bit-identical to the engine's.

The engine's drawdown of a window is ``min_t fl(L_t / P_t) − 1`` with ``P_t`` the running maximum of the
levels from the window's first row. A history needs it for ~4 windows at each of ~60 dates, mostly over
the same rows; sweeping every window's rows again is the history's slowest part. The rows between
consecutive window boundaries (starts and ends) form segments, each summarised once by its maximum
``M``, minimum ``m`` and internal low ``ℓ`` (the same formula with the running maximum restarted at the
segment's first row). Two adjacent pieces A, B combine exactly::

    ℓ(AB) = min(ℓ(A), ℓ(B), fl(m(B) / M(A))),   M(AB) = max(M(A), M(B)),   m(AB) = min(m(A), m(B))

because for positive levels ``fl(L / max(a, b)) = min(fl(L / a), fl(L / b))`` and ``fl(L / a)`` grows
with ``L`` (correctly rounded division is monotone), so the same floats are compared as in the engine's
row-by-row pass and the minimum is the same float. NaN anywhere in a window gives NaN, as in the engine.
Columns with a zero, negative or infinite level break the monotonicity argument; they take the row sweep
(:func:`sweep_drawdowns`), as does any fund when ``levels`` are not positive. Hand-written because no
library offers a range query for this non-commutative combination.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


class DrawdownSegments:
    """Segment summaries of ``levels`` between consecutive ``rows`` (sorted window starts and ends)."""

    def __init__(self, levels: np.ndarray, rows: Sequence[int]) -> None:
        self.levels = levels
        self.rows = list(rows)
        self.at = {r: j for j, r in enumerate(self.rows)}
        funds = levels.shape[1]
        with np.errstate(invalid="ignore"):
            fine = np.isnan(levels) | (np.isfinite(levels) & (levels > 0))
        self.odd = ~fine.all(axis=0)
        """Columns with a zero, negative or infinite level: the row sweep handles them."""
        count = len(self.rows)
        self.hi = np.empty((count, funds))
        self.lo = np.empty((count, funds))
        self.low = np.empty((count, funds))
        if not count:
            return
        ratio = np.empty(funds)
        with np.errstate(invalid="ignore", divide="ignore"):
            first = levels[self.rows[0]]
            self.hi[0], self.lo[0], self.low[0] = first, first, first / first
            for j in range(1, count):
                seg = levels[self.rows[j - 1] + 1 : self.rows[j] + 1]
                peak, low = self.hi[j], self.low[j]
                peak[:] = seg[0]
                np.divide(seg[0], seg[0], out=low)
                for row in seg[1:]:
                    np.maximum(peak, row, out=peak)
                    np.divide(row, peak, out=ratio)
                    np.minimum(low, ratio, out=low)
                np.min(seg, axis=0, out=self.lo[j])

    def drawdowns(
        self, starts: Mapping[str, int], e: int, measured: np.ndarray
    ) -> dict[str, np.ndarray]:
        """Per window ``[starts[p], e]``: its max drawdown (≤ 0), NaN outside ``measured``."""
        funds = self.levels.shape[1]
        out = {p: np.full(funds, np.nan) for p in starts}
        if not starts or not measured.any():
            return out
        want: dict[int, list[str]] = {}
        for p, s in starts.items():
            want.setdefault(self.at[s], []).append(p)
        stop = min(want)
        j = self.at[e]
        hi, lo, low = self.hi[j].copy(), self.lo[j].copy(), self.low[j].copy()
        tmp = np.empty(funds)
        with np.errstate(invalid="ignore", divide="ignore"):
            while True:
                j -= 1
                if j in want:  # the window starts on row rows[j]: put that single row in front
                    first = self.levels[self.rows[j]]
                    value = np.divide(first, first)
                    np.minimum(value, low, out=value)
                    np.divide(lo, first, out=tmp)
                    np.minimum(value, tmp, out=value)
                    value -= 1.0
                    for p in want[j]:
                        out[p] = np.where(measured, value, np.nan)
                if j <= stop:
                    break
                np.divide(lo, self.hi[j], out=tmp)  # segment j in front of the accumulated pieces
                np.minimum(low, tmp, out=low)
                np.minimum(low, self.low[j], out=low)
                np.maximum(hi, self.hi[j], out=hi)
                np.minimum(lo, self.lo[j], out=lo)
        odd = measured & self.odd
        if odd.any():
            swept = sweep_drawdowns(self.levels, starts, e, odd)
            for p in starts:
                out[p][odd] = swept[p][odd]
        return out


def sweep_drawdowns(
    levels: np.ndarray, starts: Mapping[str, int], e: int, measured: np.ndarray
) -> dict[str, np.ndarray]:
    """Per window ending at ``e``: min over its rows of level / running maximum − 1 (the engine's formula).

    Row by row over the measured funds (a whole row is one contiguous vector; ``np.maximum.accumulate``
    down a column of a row-major matrix is several times slower): the same maxima and the same quotients,
    so the values are bit-identical to the engine's, whatever the levels.
    """
    funds = levels.shape[1]
    out = {p: np.full(funds, np.nan) for p in starts}
    cols = np.flatnonzero(measured)
    if cols.size == 0 or not starts:
        return out
    lo = min(starts.values())
    block = levels[lo : e + 1] if cols.size == funds else levels[lo : e + 1][:, cols]
    order = sorted(starts.items(), key=lambda kv: kv[1])  # the longest window first
    peaks: dict[str, np.ndarray] = {}
    lows: dict[str, np.ndarray] = {}
    ratio = np.empty(cols.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        for t, row in enumerate(block, lo):  # one sweep: each row is read once for every window
            for p, s in order:
                if t < s:
                    break
                if t == s:
                    peaks[p], lows[p] = row.copy(), np.divide(row, row)  # level / peak on the first row
                    continue
                np.maximum(peaks[p], row, out=peaks[p])
                np.divide(row, peaks[p], out=ratio)
                np.minimum(lows[p], ratio, out=lows[p])
    for p in starts:
        out[p][cols] = lows[p] - 1.0
    return out
