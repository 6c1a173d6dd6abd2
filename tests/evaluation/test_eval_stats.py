"""The report statistics against independent computations (scipy, brute-force enumeration)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from evaluator.evaluation import stats


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (3, 9), (10, 10), (2, 17), (40, 25)])
def test_mcnemar_matches_exact_binomial_test(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert stats.mcnemar(b, c) == pytest.approx(expected, rel=1e-9)
    assert stats.mcnemar(b, c) == stats.mcnemar(c, b)


def test_mcnemar_small_counts_are_not_significant_large_imbalance_is() -> None:
    assert stats.mcnemar(0, 5) == pytest.approx(0.0625)
    assert stats.mcnemar(0, 6) < 0.05


@pytest.mark.parametrize(("n", "c", "k"), [(4, 0, 1), (4, 1, 2), (5, 2, 3), (6, 3, 4), (8, 1, 8), (8, 8, 2)])
def test_pass_at_k_equals_enumerating_every_subset(n: int, c: int, k: int) -> None:
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    brute = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
    assert stats.pass_at_k(n, c, k) == pytest.approx(brute)


def test_pass_at_k_rejects_k_above_n() -> None:
    with pytest.raises(ValueError, match="at least 5 samples"):
        stats.pass_at_k(4, 1, 5)


def test_ks_for_reports_powers_of_two_and_k() -> None:
    assert stats.ks_for(1) == [1]
    assert stats.ks_for(4) == [1, 2, 4]
    assert stats.ks_for(6) == [1, 2, 4, 6]
    assert stats.ks_for(16) == [1, 2, 4, 8, 16]


def test_majority_vote_ties_go_to_first_seen_and_empty_answers_do_not_vote() -> None:
    assert stats.majority_vote(["3", None, "4", "4", "3", ""]) == "3"
    assert stats.majority_vote([None, "", "7"]) == "7"
    assert stats.majority_vote([None, None]) is None
    assert stats.majority_vote(["18.0", "18", "5"], key=lambda a: float(a)) == "18.0"


def test_bootstrap_ci_brackets_the_mean_and_narrows_with_more_items() -> None:
    rng = np.random.default_rng(1)
    small = (rng.random(50) < 0.6).astype(float)
    large = (rng.random(2000) < 0.6).astype(float)
    lo_s, hi_s = stats.bootstrap_ci(small, seed=0)
    lo_l, hi_l = stats.bootstrap_ci(large, seed=0)
    assert lo_s <= small.mean() <= hi_s
    assert lo_l <= large.mean() <= hi_l
    assert (hi_l - lo_l) < (hi_s - lo_s) / 3
    # Normal-approximation width for a proportion, as an independent yardstick.
    p = large.mean()
    half = 1.96 * math.sqrt(p * (1 - p) / len(large))
    assert (hi_l - lo_l) / 2 == pytest.approx(half, rel=0.1)
    assert stats.bootstrap_ci(small, seed=0) == [lo_s, hi_s]  # seeded: reproducible
    assert stats.bootstrap_ci([], seed=0) is None
    assert stats.bootstrap_ci([1.0, 1.0], seed=0) == [1.0, 1.0]


def test_paired_bootstrap_uses_pairing() -> None:
    rng = np.random.default_rng(2)
    a = (rng.random(400) < 0.5).astype(float)
    b = a.copy()
    flip = rng.choice(400, size=20, replace=False)
    b[flip] = 1.0  # B fixes up to 20 items, never breaks one
    gained = float((b - a).sum())
    out = stats.paired_bootstrap_delta(a, b, seed=0)
    assert out["delta"] == pytest.approx(gained / 400)
    lo, hi = out["ci95"]
    assert 0 <= lo <= out["delta"] <= hi  # a one-sided change: the paired interval cannot go below 0
    unpaired = stats.bootstrap_ci(b, seed=0)
    assert hi - lo < (unpaired[1] - unpaired[0]) / 2  # pairing removes the shared item variance
    with pytest.raises(ValueError):
        stats.paired_bootstrap_delta([1.0], [1.0, 0.0])


def test_mean_or_none_skips_abstentions() -> None:
    assert stats.mean_or_none([1.0, None, 0.0, float("nan")]) == 0.5
    assert stats.mean_or_none([None, None]) is None
