"""Statistics for evaluation reports: bootstrap intervals, McNemar's test, pass@k and maj@k.

Pure functions over plain numbers so every figure in a report can be recomputed and tested by hand.
Intervals resample *items* (not samples): the K samples drawn for one prompt are not independent.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from statistics import NormalDist

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


def wilson_ci(successes: float, n: int, level: float = 0.95) -> list[float] | None:
    """Wilson score interval for a proportion (``successes`` of ``n``); None when ``n`` is 0.

    Unlike a bootstrap or the normal approximation it stays inside [0, 1] and does not collapse to a point
    at 0/n or n/n (0/20 → [0, 0.161]). A few lines of closed form, so no statistics package at run time."""
    if n <= 0:
        return None
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes <= 0 else max(0.0, centre - half)  # exact ends, not rounding noise
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return [low, high]


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


# ---- experiments: several seeds of several arms on the same items ----------------------------------------


def clustered_bootstrap(
    values: Sequence[Sequence[float]] | np.ndarray,
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    level: float = 0.95,
    resample_seeds: bool = True,
) -> dict[str, float]:
    """Mean of a ``seeds × items`` matrix with a bootstrap interval clustered by item.

    Items are the clusters: a replicate draws items with replacement and keeps every seed's value for each
    drawn item, so the interval respects that one hard problem is hard for every seed. With
    ``resample_seeds`` the seeds are drawn with replacement too (two-stage), so seed-to-seed swings — the
    5–15 points RL runs differ by — widen the interval instead of hiding in a fixed set of seeds.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError("clustered_bootstrap needs a non-empty seeds × items matrix")
    mean = float(arr.mean())
    if np.all(arr == arr.flat[0]):
        return {"mean": mean, "ci_low": mean, "ci_high": mean}
    rng = np.random.default_rng(seed)
    n_seeds, n_items = arr.shape
    out = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        stop = min(n_boot, start + _CHUNK)
        items = rng.integers(0, n_items, size=(stop - start, n_items))
        per_seed = arr[:, items].mean(axis=2).T  # (replicates, seeds): each seed's mean over the drawn items
        if resample_seeds and n_seeds > 1:
            pick = rng.integers(0, n_seeds, size=(stop - start, n_seeds))
            per_seed = np.take_along_axis(per_seed, pick, axis=1)
        out[start:stop] = per_seed.mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(out, [alpha, 1.0 - alpha])
    return {"mean": mean, "ci_low": float(lo), "ci_high": float(hi)}


EXACT_SIGN_FLIP = 16
"""Up to this many non-zero paired differences the sign-flip test enumerates every assignment."""


def paired_sign_flip(diffs: Sequence[float], *, seed: int = 0, n_perm: int = N_BOOT) -> float:
    """Two-sided paired permutation (sign-flip) p-value for mean(diffs) = 0.

    Under no difference each item's difference is as likely to have either sign. Exact for at most
    ``EXACT_SIGN_FLIP`` non-zero differences; otherwise Monte Carlo with the (1 + hits) / (1 + n) rule,
    which never reports p = 0. Works for binary and graded metrics alike (no normality assumed).
    """
    d = np.asarray(diffs, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    observed = abs(d.mean()) - 1e-12  # ties count as at least as extreme
    if d.size <= EXACT_SIGN_FLIP:
        signs = ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
        means = np.abs((signs * d).mean(axis=1))
        return float(np.mean(means >= observed))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_perm, _CHUNK):
        stop = min(n_perm, start + _CHUNK)
        signs = rng.integers(0, 2, size=(stop - start, d.size)) * 2 - 1
        hits += int(np.sum(np.abs((signs * d).mean(axis=1)) >= observed))
    return float((1 + hits) / (1 + n_perm))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1), in the input order."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adjusted[idx] = running
    return [float(x) for x in adjusted]
