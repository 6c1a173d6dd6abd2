"""Detecting 결산 resets in NAVs that were not adjusted for distributions.

When a fund settles, its gain is paid out and reinvested and 기준가격 drops back to about 1,000; on raw
기준가격 that looks like a one-day loss. Without an adjusted NAV or a distribution column the engine
cannot compute the true return, so such a fund must not be graded as if it had lost money.

A candidate reset on day t (all conditions must hold):

* the fund's return that day, less its beta times its market's (the benchmark's return, else its peer
  group's median return), is below ``−max(MIN_DROP, Z_DROP · σ)``, σ being the standard deviation of
  the fund's other daily excess returns (the candidate days left out);
* the NAV lands within ``LANDING`` of where 1,000 (the base a 결산 resets to) would be after that day's
  market move, ``1,000 · (1 + β·market)``.

Limits (documented in ``domains/fund/README.md``): funds that retain gains (유보) never reset; monthly or
quarterly payers (월지급식) pay amounts too small to stand out; a drop smaller than the thresholds, or a
fund whose base is not 1,000, is not seen. Only an adjusted column makes those exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.parameters import PARAMETERS
from evaluator.domains.fund.engine.total_return import cells

# The detector's thresholds under the names its docstring uses; the values (and what each means) are
# declared once in :class:`~evaluator.domains.fund.engine.parameters.EngineParameters`.
MIN_DROP, Z_DROP, LANDING = PARAMETERS.reset_min_drop, PARAMETERS.reset_z_drop, PARAMETERS.reset_landing
STRIDE, WIDE, BASE, PREFILTER = (
    PARAMETERS.reset_stride, PARAMETERS.reset_wide, PARAMETERS.reset_base, PARAMETERS.reset_prefilter
)


@dataclass(frozen=True)
class Resets:
    """Per fund column: the rows of the candidate resets (only funds with at least one)."""

    rows: dict[int, list[int]]


class _Market:
    """Market returns per fund: its benchmark's, else its peer group's median (each computed once)."""

    def __init__(
        self, nav: np.ndarray, groups: np.ndarray, bench_returns: tuple[np.ndarray, np.ndarray] | None
    ) -> None:
        self.nav, self.groups, self.bench = nav, groups, bench_returns
        self.cache: dict[object, np.ndarray] = {}

    def key(self, cols: np.ndarray) -> list[object]:
        """Per listed fund: its benchmark column, or ``("peers", group)`` when it has none."""
        of = np.full(cols.size, -1) if self.bench is None else self.bench[1][cols]
        peers = self.groups[cols].tolist()
        return [int(b) if b >= 0 else ("peers", g) for b, g in zip(of.tolist(), peers, strict=True)]

    def returns(self, key: object) -> np.ndarray:
        """(dates − 1) × 1 market returns for rows 1.. of ``nav`` (NaN read as 0)."""
        if key not in self.cache:
            if isinstance(key, int):
                out = np.nan_to_num(self.bench[0][1:, key], nan=0.0)  # type: ignore[index]
            else:
                peers = np.flatnonzero(self.groups == key[1])  # type: ignore[index]
                out = np.zeros(self.nav.shape[0] - 1)
                if peers.size > 2:
                    with np.errstate(all="ignore"):
                        peer = self.nav[1:, peers] / self.nav[:-1, peers] - 1.0
                    out = np.nan_to_num(pd.DataFrame(peer).median(axis=1).to_numpy(), nan=0.0)
            self.cache[key] = out[:, None]
        return self.cache[key]


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Column-wise Σ a·b for one market column ``b`` (dates × 1), as one BLAS matrix-vector product."""
    return a.T @ b[:, 0]


def _blocks(cols: np.ndarray, keys: list[object], chunk: int) -> list[tuple[object, np.ndarray]]:
    """Candidate funds in blocks of at most ``chunk`` that share one market (funds keep their order within
    a block; the engine orders funds by benchmark, so a benchmark's funds are mostly one run)."""
    by_key: dict[object, list[int]] = {}
    for c, k in zip(cols.tolist(), keys, strict=True):
        by_key.setdefault(k, []).append(c)
    out = []
    for k, members in by_key.items():
        arr = np.asarray(members, dtype=int)
        out.extend((k, arr[lo : lo + chunk]) for lo in range(0, arr.size, chunk))
    return out


def _columns(nav: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``nav[:, cols]``; a view when the columns are one run (no copy of the block)."""
    if cols[-1] - cols[0] + 1 == cols.size:
        return nav[:, int(cols[0]) : int(cols[-1]) + 1]
    return nav[:, cols]


def detect_resets(
    nav: np.ndarray,
    candidates: np.ndarray,
    groups: np.ndarray,
    bench_returns: tuple[np.ndarray, np.ndarray] | None = None,
    chunk: int = 256,
) -> Resets:
    """Candidate resets for the funds where ``candidates`` is true.

    ``nav``: dates × funds (NaN where none); ``groups``: each fund's peer group; ``bench_returns``: dates ×
    benchmarks returns aligned to ``nav``'s rows with each fund's benchmark column (−1 for none), or None.
    The fund's beta and the spread of its excess returns come from column sums over every ``STRIDE``-th
    day (no excess-return matrix); the spread leaves out the candidate days themselves, so resets do not
    hide each other. Works on blocks of at most ``chunk`` funds that share one market return series (one
    broadcast column, never a dates × funds market matrix), so the temporaries stay small.
    """
    found: dict[int, list[int]] = {}
    market = _Market(nav, groups, bench_returns)
    todo = np.flatnonzero(candidates)
    if todo.size == 0:
        return Resets(rows=found)
    for key, cols in _blocks(todo, market.key(todo), chunk):
        x = _columns(nav, cols)
        with np.errstate(all="ignore"):
            r = x[1:] / x[:-1] - 1.0
            # |x − BASE| ≤ WIDE·BASE, written as two comparisons (x − 1000 is exact near the bounds)
            near = x[1:] >= (1.0 - WIDE) * BASE
            near &= x[1:] <= (1.0 + WIDE) * BASE
            near &= r <= PREFILTER
        rows, js = cells(near)
        if rows.size == 0:
            continue
        m = market.returns(key)
        # beta and spread from every STRIDE-th day: plenty for a 6σ threshold, a third of the work
        rs, ms = r[::STRIDE], m[::STRIDE]
        ok = np.isfinite(rs)
        if ok.all():  # every fund priced on every sampled day: market sums are plain totals
            r0, n = rs, np.full(cols.size, float(len(rs)))
            s_m = np.broadcast_to(ms.sum(axis=0), cols.size)
            s_mm = np.broadcast_to((ms * ms).sum(axis=0), cols.size)
        else:
            r0 = np.where(ok, rs, 0.0)
            okf = ok.astype(float)
            n = np.maximum(okf.sum(axis=0), 2.0)
            s_m, s_mm = _dot(okf, ms), _dot(okf, ms * ms)
        s_rm, s_r, s_rr = _dot(r0, ms), r0.sum(axis=0), np.einsum("ij,ij->j", r0, r0)
        with np.errstate(all="ignore"):
            beta = np.clip(np.nan_to_num((s_rm - s_r * s_m / n) / (s_mm - s_m * s_m / n)), 0.0, 2.0)
        move = beta[js] * m[rows, 0]
        excess = r[rows, js] - move
        with np.errstate(all="ignore"):
            lands = np.abs(x[rows + 1, js] / (BASE * (1.0 + move)) - 1.0) <= LANDING
        keep = lands & (excess <= -MIN_DROP)  # a reset needs an unexplained drop of at least MIN_DROP
        if not keep.any():
            continue
        rows, js, excess = rows[keep], js[keep], excess[keep]
        # spread of the excess returns e = r − β·m over the sampled days, leaving out candidate days
        sampled = rows % STRIDE == 0
        out_j, out_e = js[sampled], excess[sampled]
        s_e = s_r - beta * s_m - np.bincount(out_j, weights=out_e, minlength=cols.size)
        s_ee = (
            s_rr
            - 2 * beta * s_rm
            + beta**2 * s_mm
            - np.bincount(out_j, weights=out_e**2, minlength=cols.size)
        )
        k = n - np.bincount(out_j, minlength=cols.size)
        with np.errstate(all="ignore"):
            sd = np.sqrt(np.maximum((s_ee - s_e * s_e / k) / (k - 1), 0.0))
        limit = -np.maximum(MIN_DROP, Z_DROP * np.nan_to_num(sd, nan=0.0))
        hit = excess <= limit[js]
        for row, j in zip(rows[hit].tolist(), js[hit].tolist(), strict=True):
            found.setdefault(int(cols[j]), []).append(row + 1)
    return Resets(rows={c: found[c] for c in sorted(found)})


def describe(rows: list[int], dates: pd.DatetimeIndex, nav: np.ndarray) -> str:
    """Korean detail for a report: the dates and sizes of the drops found."""
    parts = [f"{dates[r]:%Y-%m-%d} {nav[r] / nav[r - 1] - 1:+.1%}" for r in rows[:5]]
    more = f" 외 {len(rows) - 5}건" if len(rows) > 5 else ""
    return ", ".join(parts) + more
