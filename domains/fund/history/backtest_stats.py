"""Statistics of a grade backtest: rank IC, Newey-West t, moving-block bootstrap, migration.

Small and explicit on purpose: each is a few lines of numpy, checked in the tests against hand-computed
values and (Newey-West) against ``statsmodels``, which stays a test-only dependency.

* Spearman IC: Pearson correlation of average ranks; null below :data:`MIN_FUNDS` funds or with no spread.
* Newey-West: Bartlett weights ``1 − j/(L+1)``, ``j ≤ L``, no small-sample correction;
  ``t = mean / sqrt(S/T)`` with ``S = γ0 + 2 Σ w_j γ_j``, ``γ_j = Σ u_t u_{t−j} / T``.
* Moving-block bootstrap over dates: blocks of ``L`` consecutive dates, starts drawn uniformly from
  ``[0, T−L]``, ``ceil(T/L)`` blocks concatenated and cut to ``T``; 95 % percentile interval.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

MIN_FUNDS = 5
"""Fewest funds on a date for a rank IC."""
MIN_DATES = 3
"""Fewest dates for a mean with a t-stat."""
BOOT = 1000
SEED = 20240601


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Rank correlation with average ranks for ties; None when too few pairs or no spread."""
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < MIN_FUNDS:
        return None
    ra = pd.Series(a[ok]).rank().to_numpy(dtype=float, copy=True)
    rb = pd.Series(b[ok]).rank().to_numpy(dtype=float, copy=True)
    ra -= ra.mean()
    rb -= rb.mean()
    den = np.sqrt((ra @ ra) * (rb @ rb))
    return float(ra @ rb / den) if den > 0 else None


def newey_west_t(x: np.ndarray, lag: int) -> float | None:
    """t-stat of the mean of ``x`` with a Bartlett-kernel HAC variance (None when undefined)."""
    x = np.asarray(x, dtype=float)
    t = len(x)
    if t < MIN_DATES:
        return None
    u = x - x.mean()
    s = u @ u / t
    for j in range(1, min(lag, t - 1) + 1):
        s += 2.0 * (1.0 - j / (lag + 1.0)) * (u[j:] @ u[:-j]) / t
    if not s > 0:
        return None
    return float(x.mean() / np.sqrt(s / t))


def block_indices(t: int, block: int, reps: int = BOOT, seed: int = SEED) -> np.ndarray:
    """``reps × t`` date indices of a moving-block bootstrap (block length ``block``)."""
    rng = np.random.default_rng(seed)
    block = max(1, min(block, t))
    n_blocks = -(-t // block)
    starts = rng.integers(0, t - block + 1, size=(reps, n_blocks))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(reps, -1)
    return idx[:, :t]


def block_ci(
    t: int, block: int, stat: Callable[[np.ndarray], float], *, reps: int = BOOT, seed: int = SEED
) -> tuple[list[float] | None, str | None]:
    """95 % interval of ``stat(date indices)`` over bootstrap replicates, or (None, reason)."""
    if t < 2 * block or t < MIN_DATES:
        return (
            None,
            f"{t} dates are fewer than two bootstrap blocks of {block} (need {max(2 * block, MIN_DATES)})",
        )
    values = np.array([stat(idx) for idx in block_indices(t, block, reps, seed)], dtype=float)
    values = values[np.isfinite(values)]
    if len(values) < reps // 2:
        return None, "the statistic is undefined on most bootstrap samples"
    lo, hi = np.percentile(values, [2.5, 97.5])
    return [float(lo), float(hi)], None


def mean_summary(values: np.ndarray, lag: int, block: int, *, reps: int = BOOT) -> dict[str, object]:
    """Mean of a per-date series with its Newey-West t, block-bootstrap CI and share above zero."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    out: dict[str, object] = {"dates": len(v)}
    if len(v) < MIN_DATES:
        reason = f"{len(v)} dates with a value, fewer than {MIN_DATES}"
        return out | {"mean": None, "t_stat": None, "ci95": None, "share_positive": None, "reason": reason}
    ci, why = block_ci(len(v), block, lambda idx: float(v[idx].mean()), reps=reps)
    return out | {
        "mean": float(v.mean()),
        "t_stat": newey_west_t(v, lag),
        "ci95": ci,
        "share_positive": float((v > 0).mean()),
        "reason": why,
    }


def migration(
    before: np.ndarray, after: np.ndarray, grades: tuple[str, ...] = ("1", "2", "3", "4", "5")
) -> dict[str, object]:
    """Counts grade(t) → grade(t+h) (``after`` NaN = no grade then) and P(same grade | graded at both).

    ``grades``: every grade of the scale, best first (the rows' and columns' order)."""
    labels = list(grades)
    matrix = {g: {**{h: 0 for h in labels}, "unrated": 0} for g in labels}
    for g0, g1 in zip(before, after, strict=True):
        if not np.isfinite(g0) or str(int(g0)) not in matrix:
            continue
        row = matrix[str(int(g0))]
        row[str(int(g1)) if np.isfinite(g1) and str(int(g1)) in matrix else "unrated"] += 1
    both = sum(row[h] for row in matrix.values() for h in labels)
    same = sum(matrix[g][g] for g in labels)
    return {
        "matrix": matrix,
        "graded_at_both": both,
        "persistence": same / both if both else None,
        "reason": None if both else "no fund was graded at both ends of a horizon",
    }
