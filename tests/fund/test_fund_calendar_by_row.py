"""The market calendar as of every row from one pass (:class:`MajorityByRow`) equals cutting the matrix and
asking :func:`majority_dates` again, on varied layouts: weekend-priced funds, funds that start late, stop
early or leave holes, empty columns, a single fund, no fund."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.engine.calendar import MajorityByRow, majority_dates


def _layout(seed: int) -> tuple[np.ndarray, pd.DatetimeIndex]:
    rng = np.random.default_rng(seed)
    dates = pd.date_range("2024-01-01", periods=int(rng.integers(5, 90)), freq="D")
    funds = int(rng.integers(0, 30))
    weekday = np.asarray(dates.dayofweek < 5)
    present = np.zeros((len(dates), funds), dtype=bool)
    for j in range(funds):
        kind = rng.integers(0, 5)
        start, stop = sorted(rng.integers(0, len(dates) + 1, 2))
        rows = np.zeros(len(dates), dtype=bool)
        rows[start:stop] = True
        if kind == 0:  # an MMF: every calendar day
            present[:, j] = rows
        elif kind == 1:  # business days with random holes
            present[:, j] = rows & weekday & (rng.random(len(dates)) > 0.2)
        elif kind == 2:  # never priced
            continue
        else:
            present[:, j] = rows & weekday
    return present, dates


@pytest.mark.parametrize("seed", range(60))
def test_every_row_cut_gives_the_same_dates(seed: int) -> None:
    present, dates = _layout(seed)
    by_row = MajorityByRow(present, dates)
    for k in range(len(dates)):
        expected = majority_dates(present[: k + 1], dates[: k + 1])
        assert by_row.upto(k).equals(expected), k


def test_long_histories_use_wide_row_indices() -> None:
    dates = pd.date_range("1900-01-01", periods=40_000, freq="D")
    present = np.zeros((len(dates), 2), dtype=bool)
    present[:, 0] = True
    present[35_000:36_000, 1] = True
    by_row = MajorityByRow(present, dates)
    for k in (34_999, 35_500, 36_010, 39_999):
        assert by_row.upto(k).equals(majority_dates(present[: k + 1], dates[: k + 1])), k
