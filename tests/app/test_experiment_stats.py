"""Experiment statistics against independent computations: scipy's permutation test, statsmodels' Holm,
and a plain-Python two-stage bootstrap, on planted differences (none, small, large)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from evaluator.evaluation.stats import EXACT_SIGN_FLIP, clustered_bootstrap, holm, paired_sign_flip


def planted(n_seeds: int, n_items: int, base: float, gain: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Binary correctness of a baseline and an arm on the same items: item difficulty shared, a planted gain."""
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0, 1, n_items)
    a = (rng.uniform(0, 1, (n_seeds, n_items)) < np.clip(base + 0.4 * (difficulty - 0.5), 0, 1)).astype(float)
    b = (rng.uniform(0, 1, (n_seeds, n_items)) < np.clip(base + gain + 0.4 * (difficulty - 0.5), 0, 1)).astype(float)
    return a, b


def naive_two_stage(values: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    """The same two-stage resampling written as plain loops (random, not numpy)."""
    rng = random.Random(seed)
    n_seeds, n_items = values.shape
    rows = values.tolist()
    means = []
    for _ in range(n_boot):
        items = [rng.randrange(n_items) for _ in range(n_items)]
        seeds = [rng.randrange(n_seeds) for _ in range(n_seeds)]
        per_seed = [sum(rows[s][i] for i in items) / n_items for s in seeds]
        means.append(sum(per_seed) / n_seeds)
    means.sort()
    return means[int(0.025 * n_boot)], means[int(0.975 * n_boot) - 1]


@pytest.mark.parametrize("gain", [0.0, 0.15])
def test_clustered_bootstrap_matches_a_naive_implementation(gain: float) -> None:
    a, b = planted(3, 120, 0.5, gain, seed=1)
    diff = b - a
    ours = clustered_bootstrap(diff, seed=3, n_boot=4000)
    lo, hi = naive_two_stage(diff, 4000, seed=9)
    assert ours["mean"] == pytest.approx(diff.mean())
    assert ours["ci_low"] == pytest.approx(lo, abs=0.02) and ours["ci_high"] == pytest.approx(hi, abs=0.02)


def test_clustered_interval_is_wider_than_an_item_only_one_when_seeds_disagree() -> None:
    rng = np.random.default_rng(0)
    values = (rng.uniform(0, 1, (3, 200)) < np.array([[0.3], [0.5], [0.7]])).astype(float)  # seeds swing
    two_stage = clustered_bootstrap(values, seed=0, n_boot=3000)
    items_only = clustered_bootstrap(values, seed=0, n_boot=3000, resample_seeds=False)
    assert two_stage["ci_high"] - two_stage["ci_low"] > 1.5 * (items_only["ci_high"] - items_only["ci_low"])


def test_planted_differences_are_found_and_no_difference_is_not() -> None:
    found, false_alarms = 0, 0
    for rep in range(20):
        a, b = planted(3, 150, 0.45, 0.20, seed=100 + rep)
        ci = clustered_bootstrap(b - a, seed=rep, n_boot=2000)
        found += ci["ci_low"] > 0 and paired_sign_flip((b - a).mean(axis=0), seed=rep, n_perm=2000) < 0.05
        a0, b0 = planted(3, 150, 0.45, 0.0, seed=200 + rep)
        ci0 = clustered_bootstrap(b0 - a0, seed=rep, n_boot=2000)
        false_alarms += not (ci0["ci_low"] <= 0 <= ci0["ci_high"])
    assert found >= 18
    assert false_alarms <= 3  # 5 % expected; allow the noise of 20 draws


def _scipy_sign_flip(d: np.ndarray, n_resamples: int) -> float:
    res = sps.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
        n_resamples=n_resamples, alternative="two-sided", random_state=0,
    )
    return float(res.pvalue)


@pytest.mark.parametrize("values", [[1, 1, 1, 0, -1, 1, 1, 0, 1], [0.5, -0.25, 0.75, 0.1, -0.3, 0.6, 0.2], [0, 0, 0]])
def test_sign_flip_exact_matches_scipy(values: list[float]) -> None:
    d = np.asarray(values, dtype=float)
    if not np.any(d):
        assert paired_sign_flip(d) == 1.0
        return
    assert paired_sign_flip(d) == pytest.approx(_scipy_sign_flip(d[d != 0], np.inf), abs=1e-9)


def test_sign_flip_monte_carlo_matches_scipy_and_planted_size() -> None:
    rng = np.random.default_rng(5)
    for shift in (0.0, 0.15):
        d = rng.choice([-1.0, 0.0, 1.0], size=80, p=[0.25 - shift / 2, 0.5, 0.25 + shift / 2])
        assert np.count_nonzero(d) > EXACT_SIGN_FLIP
        ours = paired_sign_flip(d, seed=1, n_perm=20_000)
        assert ours == pytest.approx(_scipy_sign_flip(d, 20_000), abs=0.02)


def test_holm_matches_statsmodels() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 9)).tolist()
        assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
