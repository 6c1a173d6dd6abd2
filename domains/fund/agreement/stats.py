"""Agreement statistics between two graders on grades 1…K: exact, within one, quadratic-weighted κ.

κ is computed here, not with scikit-learn (a test-only oracle), because it needs two things sklearn does
not give: the weights come from grade *values* over the full label set 1…K (so a grade nobody received
neither vanishes nor moves its neighbours closer), and a cluster bootstrap over funds (a fund graded by
three analysts is one draw, not three) vectorised over thousands of resamples.

    κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij,   w_ij = (i − j)² / (K − 1)²,   E = outer(row sums, col sums) / n

κ is undefined (None) when Σ w E = 0, i.e. both graders put every fund in one and the same grade.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RESAMPLES = 2000
SEED = 0
CHUNK = 256


@dataclass(frozen=True)
class Pairs:
    """Graded pairs: ``rows`` (the reference, e.g. the analysts) against ``cols`` (e.g. the engine).

    ``cluster`` names the fund each pair belongs to; the bootstrap resamples funds, not pairs.
    """

    cluster: Sequence[str]
    rows: Sequence[int]
    cols: Sequence[int]


def weights(k: int) -> np.ndarray:
    """Quadratic disagreement weights on grades 1…k (0 on the diagonal, 1 for the farthest grades)."""
    i = np.arange(k)
    return (i[:, None] - i[None, :]) ** 2 / max(k - 1, 1) ** 2


def confusion(rows: Sequence[int], cols: Sequence[int], k: int) -> np.ndarray:
    """k×k counts: entry [a-1, b-1] is how many pairs had grade a in ``rows`` and b in ``cols``."""
    out = np.zeros((k, k), dtype=np.int64)
    r = np.asarray(rows, dtype=np.int64) - 1
    c = np.asarray(cols, dtype=np.int64) - 1
    if len(r) and (r.min() < 0 or c.min() < 0 or r.max() >= k or c.max() >= k):
        raise ValueError(f"grades must lie in 1…{k}")
    np.add.at(out, (r, c), 1)
    return out


def kappa_many(matrices: np.ndarray) -> np.ndarray:
    """Quadratic-weighted κ for a stack of k×k count matrices (NaN where undefined)."""
    m = np.asarray(matrices, dtype=float)
    k = m.shape[-1]
    w = weights(k)
    n = m.sum(axis=(-2, -1))
    expected = m.sum(axis=-1)[..., :, None] * m.sum(axis=-2)[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = expected / n[..., None, None]
        observed = (w * m).sum(axis=(-2, -1))
        chance = (w * expected).sum(axis=(-2, -1))
        out = 1.0 - observed / chance
    return np.where((n > 0) & (chance > 1e-12), out, np.nan)


def quadratic_kappa(matrix: np.ndarray) -> float | None:
    """Quadratic-weighted κ of one confusion matrix, or None when it is undefined."""
    value = float(kappa_many(np.asarray(matrix)[None])[0])
    return None if np.isnan(value) else value


def _cluster_cells(pairs: Pairs, k: int) -> np.ndarray:
    """One row per fund: its pairs' counts over the k·k cells."""
    names, index = np.unique(np.asarray(pairs.cluster, dtype=object).astype(str), return_inverse=True)
    cells = (np.asarray(pairs.rows) - 1) * k + (np.asarray(pairs.cols) - 1)
    out = np.zeros((len(names), k * k))
    np.add.at(out, (index, cells), 1)
    return out


def bootstrap(
    pairs: Pairs, k: int, *, resamples: int = RESAMPLES, seed: int = SEED
) -> dict[str, list[float] | int] | None:
    """95 % percentile intervals for κ, exact and within-one agreement, resampling funds with replacement."""
    per_fund = _cluster_cells(pairs, k)
    n = len(per_fund)
    if n < 2 or resamples < 1:
        return None
    rng = np.random.default_rng(seed)
    near = (np.abs(np.subtract.outer(np.arange(k), np.arange(k))) <= 1).ravel()
    diag = np.eye(k, dtype=bool).ravel()
    kappas, exact, within = [], [], []
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        picks = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        draws = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        cells = draws.astype(float) @ per_fund  # counts stay exact in float64; BLAS makes it fast
        total = cells.sum(axis=1)
        kappas.append(kappa_many(cells.reshape(size, k, k)))
        exact.append(cells[:, diag].sum(axis=1) / total)
        within.append(cells[:, near].sum(axis=1) / total)
    ks = np.concatenate(kappas)
    finite = ks[np.isfinite(ks)]

    def interval(values: np.ndarray) -> list[float] | None:
        return [float(v) for v in np.percentile(values, [2.5, 97.5])] if len(values) else None

    return {
        "kappa": interval(finite),
        "exact": interval(np.concatenate(exact)),
        "within_one": interval(np.concatenate(within)),
        "kappa_resamples_used": len(finite),
    }


def compare(pairs: Pairs, k: int, *, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Exact and within-one agreement, κ with bootstrap CIs, and the confusion matrix of ``pairs``."""
    matrix = confusion(pairs.rows, pairs.cols, k)
    n = int(matrix.sum())
    diff = np.abs(np.asarray(pairs.rows, dtype=int) - np.asarray(pairs.cols, dtype=int))
    ci = bootstrap(pairs, k, resamples=resamples, seed=seed) if n else None
    kappa = quadratic_kappa(matrix) if n else None
    exact = int((diff == 0).sum())
    within = int((diff <= 1).sum())
    return {
        "pairs": n,
        "funds": len(set(pairs.cluster)),
        "exact": {"count": exact, "rate": exact / n if n else None, "ci95": ci["exact"] if ci else None},
        "within_one": {
            "count": within,
            "rate": within / n if n else None,
            "ci95": ci["within_one"] if ci else None,
        },
        "kappa": kappa,
        "kappa_ci95": ci["kappa"] if ci and kappa is not None else None,
        "kappa_resamples_used": ci["kappa_resamples_used"] if ci else 0,
        "confusion": matrix.tolist(),
    }
