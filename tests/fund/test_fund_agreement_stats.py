"""Quadratic-weighted κ, agreement rates and the fund-cluster bootstrap, against hand computation and sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evaluator.domains.fund.agreement.stats import Pairs, bootstrap, compare, confusion, quadratic_kappa

LABELS = [1, 2, 3, 4, 5]


def _kappa(a: list[int], b: list[int], k: int = 5) -> float | None:
    return quadratic_kappa(confusion(a, b, k))


def test_hand_computed_three_grades() -> None:
    # K=3, pairs (1,1) (2,2) (3,3) (1,2): O = [[1,1,0],[0,1,0],[0,0,1]], n=4
    # rows (2,1,1), cols (1,2,1); weights (i-j)^2/4: observed = 1 * 1/4 = 0.25
    # expected E_ij = r_i c_j / 4: sum w E = [2*2*(1/4) + 2*1*1 + 1*1*(1/4) + 1*1*(1/4) + 1*1*1 + 1*2*(1/4)] / 4
    #   = (1 + 2 + 0.25 + 0.25 + 1 + 0.5) / 4 = 1.25 ;  κ = 1 - 0.25 / 1.25 = 0.8
    assert _kappa([1, 2, 3, 1], [1, 2, 3, 2], k=3) == pytest.approx(0.8)


def test_grade_nobody_received_keeps_value_distances() -> None:
    # K=5, nobody got grade 3. Pairs (1,1) (2,4) (4,2) (5,5) (4,4), n=5.
    # rows (1,1,0,2,1), cols (1,1,0,2,1) ; w = d^2/16 ; observed = 2 * 4/16 = 0.5
    # expected: sum_ij r_i c_j d^2 / (16*5). r=c=(1,1,0,2,1) at grades 1,2,4,5 (weights on grade 3 are 0)
    # S = sum r_i c_j d^2 over (g,h) in {1,2,4,5}: compute by hand:
    #   g=1: h=2:1*1*1, h=4:1*2*9=18, h=5:1*1*16 -> 35
    #   g=2: h=1:1, h=4:2*4=8, h=5:1*9=9 -> 18
    #   g=4: h=1:2*9=18, h=2:2*4=8, h=5:2*1=2 -> 28
    #   g=5: h=1:16, h=2:9, h=4:2*1=2 -> 27          S = 108
    # expected = 108 / 80 = 1.35 ; κ = 1 - 0.5 / 1.35 = 0.62963
    a, b = [1, 2, 4, 5, 4], [1, 4, 2, 5, 4]
    assert _kappa(a, b) == pytest.approx(1 - 0.5 / 1.35)
    # with only the used labels, sklearn treats 2 and 4 as neighbours and gives a different (wrong here) value
    compact = cohen_kappa_score(a, b, weights="quadratic")
    assert compact != pytest.approx(1 - 0.5 / 1.35)
    assert cohen_kappa_score(a, b, weights="quadratic", labels=LABELS) == pytest.approx(1 - 0.5 / 1.35)


def test_perfect_and_undefined() -> None:
    assert _kappa([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert _kappa([3, 3, 3], [3, 3, 3]) is None  # both graders used one and the same grade
    assert _kappa([3, 3, 3], [2, 3, 4]) == pytest.approx(0.0)  # one side constant: no information
    assert quadratic_kappa(np.zeros((5, 5))) is None


def test_reversed_ranking_is_negative() -> None:
    assert _kappa([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]) == pytest.approx(-1.0)


@pytest.mark.parametrize("seed", range(12))
def test_matches_sklearn_on_random_grades(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    a = rng.integers(1, 6, size=n)
    noise = rng.integers(-2, 3, size=n) * (rng.random(n) < 0.5)
    b = np.clip(a + noise, 1, 5)
    if seed % 3 == 0:  # a grade no fund received on either side
        a, b = np.where(a == 3, 2, a), np.where(b == 3, 4, b)
    ours = _kappa(a.tolist(), b.tolist())
    oracle = cohen_kappa_score(a, b, weights="quadratic", labels=LABELS)
    assert ours == pytest.approx(oracle, abs=1e-12)


def test_compare_rates_and_confusion() -> None:
    block = compare(Pairs(["a", "b", "c", "d"], [1, 2, 3, 5], [1, 3, 5, 5]), 5, resamples=200)
    assert block["pairs"] == 4 and block["funds"] == 4
    assert block["exact"] == {"count": 2, "rate": 0.5, "ci95": block["exact"]["ci95"]}
    assert block["within_one"]["count"] == 3 and block["within_one"]["rate"] == 0.75
    assert (
        block["confusion"][2][4] == 1
        and block["confusion"][4][4] == 1
        and sum(map(sum, block["confusion"])) == 4
    )
    lo, hi = block["kappa_ci95"]
    assert lo <= block["kappa"] <= hi


def test_confusion_refuses_grades_outside_range() -> None:
    with pytest.raises(ValueError, match="1…5"):
        confusion([1, 6], [1, 2], 5)


def test_bootstrap_matches_a_plain_loop_and_is_reproducible() -> None:
    rng = np.random.default_rng(3)
    n = 120
    a = rng.integers(1, 6, size=n)
    b = np.clip(a + rng.integers(-1, 2, size=n), 1, 5)
    codes = [f"F{i:03d}" for i in range(n)]
    ci = bootstrap(Pairs(codes, a, b), 5, resamples=2000, seed=11)
    again = bootstrap(Pairs(codes, a, b), 5, resamples=2000, seed=11)
    assert ci == again
    # an independent, naive percentile bootstrap (index resampling, sklearn κ) lands on the same interval
    loop = np.random.default_rng(99)
    values = []
    for _ in range(600):
        idx = loop.integers(0, n, size=n)
        values.append(cohen_kappa_score(a[idx], b[idx], weights="quadratic", labels=LABELS))
    naive = np.percentile(values, [2.5, 97.5])
    assert ci["kappa"][0] == pytest.approx(naive[0], abs=0.03)
    assert ci["kappa"][1] == pytest.approx(naive[1], abs=0.03)


def test_bootstrap_resamples_funds_not_pairs() -> None:
    # 40 funds each graded by 3 analysts identically: pairs are perfectly correlated within a fund.
    rng = np.random.default_rng(5)
    grades = rng.integers(1, 6, size=40)
    engine = np.clip(grades + rng.integers(-1, 2, size=40), 1, 5)
    clustered = Pairs(
        [f"F{i}" for i in range(40) for _ in range(3)], np.repeat(grades, 3), np.repeat(engine, 3)
    )
    independent = Pairs([f"P{i}" for i in range(120)], np.repeat(grades, 3), np.repeat(engine, 3))
    wide = bootstrap(clustered, 5, seed=1)["kappa"]
    narrow = bootstrap(independent, 5, seed=1)["kappa"]
    assert (wide[1] - wide[0]) > 1.3 * (narrow[1] - narrow[0])  # ~sqrt(3) wider when funds are the unit


def test_tiny_samples() -> None:
    assert bootstrap(Pairs(["a"], [1], [2]), 5) is None
    one = compare(Pairs(["a"], [1], [2]), 5)
    assert one["kappa_ci95"] is None and one["exact"]["rate"] == 0.0
    empty = compare(Pairs([], [], []), 5)
    assert empty["pairs"] == 0 and empty["kappa"] is None and empty["exact"]["rate"] is None
