"""The grade history's level table (what ``fund backtest`` takes forward returns from) equals, fund by fund
and date by date, the fund's last positive level on or before the as-of date, found by a plain scan.

Levels with holes, zeros and negative values, funds that start late or stop, as-of dates before the first
NAV row, between NAV rows, repeated and out of order, and funds given in another order than the levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.data import Universe
from evaluator.domains.fund.history.run import level_table


def plain_scan(
    lv: np.ndarray, nav_days: pd.DatetimeIndex, day: pd.Timestamp, col: int
) -> tuple[float, str | None]:
    for r in range(len(nav_days) - 1, -1, -1):
        v = lv[r, col]
        if nav_days[r] <= day and np.isfinite(v) and v > 0:
            return float(v), nav_days[r].strftime("%Y-%m-%d")
    return float("nan"), None


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("storage", ["pyarrow", "python"])
def test_levels_are_each_funds_last_positive_level_on_or_before_the_date(seed: int, storage: str) -> None:
    rng = np.random.default_rng(seed)
    rows, funds = int(rng.integers(5, 120)), int(rng.integers(1, 40))
    nav_days = pd.bdate_range("2020-01-01", periods=rows)
    lv = 1000.0 * np.cumprod(1 + rng.normal(0, 0.01, (rows, funds)), axis=0)
    lv[rng.random((rows, funds)) < 0.1] = np.nan
    lv[rng.random((rows, funds)) < 0.03] = 0.0
    lv[rng.random((rows, funds)) < 0.03] = -5.0
    lv[: rng.integers(0, rows), 0] = np.nan  # starts late
    if funds > 1:
        lv[rng.integers(0, rows) :, 1] = np.nan  # stops
    if funds > 2:
        lv[:, 2] = np.nan  # never priced
    built_codes = [f"F{i:03d}" for i in range(funds)]
    codes = list(rng.permutation(built_codes))  # the input's order differs from the levels'
    navs = pd.DataFrame(np.ones((rows, funds)), index=nav_days, columns=codes)
    meta = pd.DataFrame({"type": "채권형"}, index=codes)
    universe = Universe(navs=navs, meta=meta, issues={})
    picks = list(rng.choice(nav_days, size=min(rows, 8), replace=True))  # repeats, any order
    dates = [*picks, nav_days[0] - pd.Timedelta(days=3), nav_days[-1] + pd.Timedelta(days=10)]
    dates += [nav_days[rows // 2] + pd.Timedelta(hours=12)]  # between two NAV rows
    with pd.option_context("mode.string_storage", storage):  # the text columns with and without Arrow
        table = level_table(universe, dates, (lv, built_codes))
    assert len(table) == len(dates) * funds
    k = 0
    for day in dates:
        for code in codes:
            level, when = plain_scan(lv, nav_days, pd.Timestamp(day), built_codes.index(code))
            row = table.iloc[k]
            assert row["fund_code"] == code and row["as_of"] == pd.Timestamp(day).strftime("%Y-%m-%d")
            assert (np.isnan(level) and np.isnan(row["level"])) or row["level"] == level, (day, code)
            assert (pd.isna(row["level_date"]) and when is None) or row["level_date"] == when, (day, code)
            k += 1
