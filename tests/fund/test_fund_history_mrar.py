"""The history's MRAR from shared month terms equals the engine's month-point function on every window."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.engine.metrics import Market, mrar
from evaluator.domains.fund.history.metrics import WindowSums, window_starts


@pytest.mark.parametrize("seed", range(4))
def test_every_window_matches_the_engine_mrar(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cal = pd.bdate_range("2014-01-01", "2024-12-31")
    cal = cal[rng.random(len(cal)) > 0.02]  # holidays: some month-ends move to the day before
    funds = 12
    levels = 1000.0 * np.cumprod(1.0 + rng.normal(3e-4, 0.01, (len(cal), funds)), axis=0)
    levels[:400, 0] = np.nan  # launches late
    levels[-300:, 1] = np.nan  # stops
    levels[1500:1510, 2] = np.nan  # a hole inside some windows (the engine gives NaN there)
    rf = np.repeat(rng.uniform(0.0, 0.04, 11), -(-len(cal) // 11))[: len(cal)]  # yearly steps
    keys = cal.year * 12 + cal.month
    month_ends = np.flatnonzero(np.r_[keys[1:] != keys[:-1], True])
    ends = sorted(int(r) for r in month_ends[-60::7])
    sums = WindowSums(levels, cal, rf, None, None, ends)
    market = Market(dates=cal, rf_annual=rf)
    checked, worst = 0, 0.0
    for e in ends:
        for _, s in window_starts(cal, e).items():
            got = sums._mrar(s, e)
            want = mrar(levels[s : e + 1], market, s, e)
            assert np.array_equal(np.isnan(got), np.isnan(want))
            ok = ~np.isnan(want)
            worst = max(worst, float(np.max(np.abs(got[ok] - want[ok]), initial=0.0)))
            assert np.allclose(got[ok], want[ok], rtol=1e-9, atol=0.0)
            checked += int(ok.sum())
    assert checked > 100
    assert worst < 1e-12  # summation order only: the engine's mean against a difference of running sums
