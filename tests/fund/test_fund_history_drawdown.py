"""The history's segment drawdowns equal the engine's formula bit for bit, whatever the window layout."""

from __future__ import annotations

import numpy as np
import pytest

from evaluator.domains.fund.history.drawdown import DrawdownSegments, sweep_drawdowns


def engine_drawdown(levels: np.ndarray, s: int, e: int) -> np.ndarray:
    """The single-date engine's expression (metrics.py): running maximum, quotient, column minimum."""
    window = levels[s : e + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        peaks = np.maximum.accumulate(window, axis=0)
        return (window / peaks).min(axis=0) - 1.0


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal as floats, NaN where NaN (bit for bit for the finite values)."""
    return bool(np.array_equal(a, b, equal_nan=True))


def random_levels(rng: np.random.Generator, rows: int, funds: int) -> np.ndarray:
    steps = 1.0 + rng.normal(0.0, rng.uniform(0.001, 0.04, funds), (rows, funds))
    levels = 1000.0 * np.cumprod(steps, axis=0)
    levels[rng.random((rows, funds)) < 0.002] = np.nan  # scattered holes
    levels[: rng.integers(0, rows // 2), 0] = np.nan  # a fund that starts late
    levels[rng.integers(rows // 2, rows) :, 1] = np.nan  # one that stops
    levels[:, 2] = 500.0  # flat: no drawdown at all
    levels[::7, 3] = levels[::7, 3] * 0.5  # spikes down, recovering next row
    return levels


@pytest.mark.parametrize("seed", range(6))
def test_every_window_equals_the_engine_formula_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, funds = int(rng.integers(60, 400)), 40
    levels = random_levels(rng, rows, funds)
    ends = sorted(rng.choice(np.arange(20, rows), size=8, replace=False).tolist())
    starts = {e: {f"w{k}": int(rng.integers(0, e - 2)) for k in range(4)} for e in ends}
    starts[ends[-1]]["same_as_w0"] = starts[ends[-1]]["w0"]  # two windows on one start row
    boundaries = sorted({*ends, *(s for st in starts.values() for s in st.values())})
    segments = DrawdownSegments(levels, boundaries)
    measured = rng.random(funds) < 0.9
    for e in ends:
        got = segments.drawdowns(starts[e], e, measured)
        swept = sweep_drawdowns(levels, starts[e], e, measured)
        for p, s in starts[e].items():
            want = np.where(measured, engine_drawdown(levels, s, e), np.nan)
            assert same(got[p], want), (seed, e, p)
            assert same(swept[p], want), (seed, e, p)


def test_a_nan_inside_the_window_gives_nan_and_outside_it_does_not() -> None:
    levels = np.array([[100.0], [90.0], [np.nan], [95.0], [80.0], [85.0]])
    segments = DrawdownSegments(levels, [0, 1, 3, 5])
    whole = segments.drawdowns({"all": 0}, 5, np.array([True]))["all"]
    late = segments.drawdowns({"late": 3}, 5, np.array([True]))["late"]
    assert np.isnan(whole[0])
    assert late[0] == 80.0 / 95.0 - 1.0


def test_hand_computed_drawdown_across_segments() -> None:
    # peak 120 in the first segment, trough 60 in the last: the combination must divide across segments
    levels = np.array([[100.0], [120.0], [110.0], [130.0], [90.0], [60.0], [70.0]])
    segments = DrawdownSegments(levels, [0, 2, 4, 6])
    got = segments.drawdowns({"a": 0, "b": 2, "c": 4}, 6, np.array([True]))
    assert got["a"][0] == 60.0 / 130.0 - 1.0
    assert got["b"][0] == 60.0 / 130.0 - 1.0
    assert got["c"][0] == 60.0 / 90.0 - 1.0


def test_zero_negative_or_infinite_levels_take_the_row_sweep() -> None:
    rng = np.random.default_rng(7)
    levels = 100.0 + np.cumsum(rng.normal(0.0, 1.0, (50, 4)), axis=0)
    levels[10, 0] = 0.0
    levels[20:25, 1] = -5.0
    levels[30, 2] = np.inf
    segments = DrawdownSegments(levels, [0, 5, 18, 33, 49])
    assert segments.odd.tolist() == [True, True, True, False]
    measured = np.ones(4, dtype=bool)
    got = segments.drawdowns({"x": 0, "y": 18}, 49, measured)
    assert same(got["x"], engine_drawdown(levels, 0, 49))
    assert same(got["y"], engine_drawdown(levels, 18, 49))
