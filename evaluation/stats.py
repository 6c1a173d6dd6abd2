"""Statistics for evaluation reports: bootstrap intervals, McNemar's test, pass@k and maj@k.

Pure functions over plain numbers so every figure in a report can be recomputed and tested by hand.
Intervals resample *items* (not samples): the K samples drawn for one prompt are not independent.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence

import numpy as np

N_BOOT = 10_000
_CHUNK = 1_000


def _boot_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_boot`` resamples (with replacement) of ``values`` along axis 0."""
    n = len(values)
    out = np.empty((n_boot, *values.shape[1:]), dtype=float)
    for start in range(0, n_boot, _CHUNK):
        stop = min(n_boot, start + _CHUNK)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = values[idx].mean(axis=1)
    return out


def bootstrap_ci(
    values: Sequence[float], *, seed: int = 0, n_boot: int = N_BOOT, level: float = 0.95
) -> list[float] | None:
    """Percentile bootstrap interval for the mean of per-item ``values``; None when there are none."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    if np.all(arr == arr[0]):
        return [float(arr[0]), float(arr[0])]
    means = _boot_means(arr, n_boot, np.random.default_rng(seed))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return [float(lo), float(hi)]


def paired_bootstrap_delta(
    a: Sequence[float], b: Sequence[float], *, seed: int = 0, n_boot: int = N_BOOT, level: float = 0.95
) -> dict[str, float | list[float]]:
    """Mean of ``b - a`` over paired items with a percentile interval from resampling item pairs."""
    arr_a = np.asarray(a, dtype=float)
    arr_b = np.asarray(b, dtype=float)
    if arr_a.shape != arr_b.shape or arr_a.size == 0:
        raise ValueError("paired bootstrap needs two equally long, non-empty sequences")
    diff = arr_b - arr_a
    delta = float(diff.mean())
    if np.all(diff == diff[0]):
        return {"delta": delta, "ci95": [delta, delta]}
    means = _boot_means(diff, n_boot, np.random.default_rng(seed))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return {"delta": delta, "ci95": [float(lo), float(hi)]}


def mcnemar(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs (binomial, p = 1/2).

    The exact form is right at any count, including the handful of flips a small eval produces.
    """
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return float(min(1.0, 2.0 * tail))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` are correct (Chen et al., 2021)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per item, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def ks_for(n: int) -> list[int]:
    """The k values reported for ``n`` samples per item: 1, 2, 4, … and ``n`` itself."""
    ks = [1]
    while ks[-1] * 2 < n:
        ks.append(ks[-1] * 2)
    if n > 1:
        ks.append(n)
    return ks


def majority_vote(
    answers: Sequence[Hashable | None], key: Callable[[Hashable], Hashable] | None = None
) -> Hashable | None:
    """The most frequent non-empty answer (ties go to the one seen first); None when all are empty.

    ``key`` maps an answer to its voting class (e.g. ``"18.0"`` and ``"18"`` to one number).
    """
    present = [a for a in answers if a is not None and a != ""]
    if not present:
        return None
    keyed = [key(a) if key else a for a in present]
    counts = Counter(keyed)
    best = max(counts.values())
    for original, k in zip(present, keyed, strict=True):
        if counts[k] == best:
            return original
    return None  # pragma: no cover - unreachable


def mean_or_none(values: Sequence[float | None]) -> float | None:
    """Mean of the values that are not None (rewards may abstain); None when all abstain."""
    present = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(present) / len(present) if present else None
