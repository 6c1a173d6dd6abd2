"""The engine's faster code paths give exactly (bit for bit) what the plain formulation gives.

Each fast path is checked against an independent, obvious computation on many random inputs with the
awkward cases (ties, ±0, NaN, gaps, repeated events, column-major input, missing codes).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.engine.checks import lifespans
from evaluator.domains.fund.engine.prepare import fund_matrix
from evaluator.domains.fund.engine.scoring import group_codes, group_order, group_percentile
from evaluator.domains.fund.engine.total_return import Events, apply_distributions, cells, peer_mean_returns


def _pandas_percentile(values: np.ndarray, groups: np.ndarray, mask: np.ndarray, higher: bool) -> np.ndarray:
    v = np.where(mask & np.isfinite(values), values, np.nan)
    by = pd.DataFrame({"g": groups, "v": v}).groupby("g", sort=False)["v"]
    rank = by.rank(method="average", ascending=higher).to_numpy(dtype=float)
    count = by.transform("count").to_numpy(dtype=float)
    with np.errstate(all="ignore"):
        pct = np.where(count > 1, (rank - 1.0) / (count - 1.0) * 100.0, 50.0)
    return np.where(np.isfinite(v), pct, np.nan)


def test_group_percentile_equals_pandas_average_ranks_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    for trial in range(240):
        n = int(rng.integers(0, 60))
        values = [
            rng.normal(size=n),
            rng.integers(-2, 3, n).astype(float),  # many ties
            np.where(rng.random(n) < 0.5, 0.0, -0.0),  # signed zeros tie
            np.where(rng.random(n) < 0.2, np.inf, rng.normal(size=n)),
        ][trial % 4]
        values[rng.random(n) < 0.15] = np.nan
        groups = np.array(rng.choice(["국내주식형", "채권형", ""], n), dtype=object)
        mask = rng.random(n) < 0.85
        for higher in (True, False):
            want = _pandas_percentile(values, groups, mask, higher)
            got = group_percentile(values, groups, mask, higher)
            assert np.array_equal(got, want, equal_nan=True), (trial, higher)
            shared = group_percentile(values, groups, mask, higher, codes=group_codes(groups))
            assert np.array_equal(shared, want, equal_nan=True), (trial, higher)


def test_group_percentile_with_more_groups_than_int16_codes() -> None:
    """Past 32,767 peer groups the codes are sorted as int64; the ranks still equal pandas'."""
    rng = np.random.default_rng(3)
    n = 80_000
    groups = np.array([f"g{k}" for k in rng.integers(0, 40_000, n)], dtype=object)
    values = rng.integers(-3, 4, n).astype(float)
    mask = rng.random(n) < 0.9
    want = _pandas_percentile(values, groups, mask, True)
    assert np.array_equal(group_percentile(values, groups, mask, True), want, equal_nan=True)


def test_group_percentile_sorting_each_group_on_its_own_equals_pandas() -> None:
    """With ``order`` the values are sorted group by group (few, large groups) or, with many small groups,
    all at once: both give pandas' ranks, funds without a group included."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        n = int(rng.integers(1, 6000))
        kinds = int(rng.choice([1, 3, 30, 400]))
        values = [
            rng.normal(size=n),
            rng.integers(-4, 5, n).astype(float),
            np.where(rng.random(n) < 0.5, 0.0, -0.0),
            np.where(rng.random(n) < 0.1, -np.inf, rng.normal(size=n).round(2)),
        ][trial % 4]
        values[rng.random(n) < 0.1] = np.nan
        groups = np.array([f"유형{k}" for k in rng.integers(0, kinds, n)], dtype=object)
        groups[rng.random(n) < 0.05] = None
        mask = rng.random(n) < 0.9
        codes = group_codes(groups)
        for higher in (True, False):
            want = _pandas_percentile(values, groups, mask, higher)
            got = group_percentile(values, groups, mask, higher, codes=codes, order=group_order(codes))
            assert np.array_equal(got, want, equal_nan=True), (trial, kinds, higher)


def _dense_levels(nav: np.ndarray, events: Events) -> np.ndarray:
    """NAV × cumulative product down a dates × funds matrix of (1 + D/NAV) factors."""
    with np.errstate(all="ignore"):
        factor = 1.0 + events.values / nav[events.rows, events.cols]
    jumps = np.ones_like(nav)
    np.multiply.at(jumps, (events.rows, events.cols), factor)
    return nav * np.cumprod(jumps, axis=0)


def test_distributions_applied_per_event_row_equal_the_dense_cumulative_product() -> None:
    rng = np.random.default_rng(1)
    for trial in range(300):
        rows, funds = int(rng.integers(2, 50)), int(rng.integers(1, 30))
        nav = 1000 * np.cumprod(1 + rng.normal(0, 0.01, (rows, funds)), axis=0)
        nav[rng.random((rows, funds)) < 0.05] = np.nan
        if trial % 2:
            nav = np.asfortranarray(nav)
        n = int(rng.integers(0, 3 * funds)) if trial % 3 else int(rng.integers(0, max(funds // 4, 1) + 1))
        # repeated cells included: they must combine as 1 · f₁ · f₂ in event order
        events = Events(rng.integers(0, rows, n), rng.integers(0, funds, n), rng.uniform(0, 80, n))
        want = _dense_levels(nav, events)
        assert np.array_equal(apply_distributions(nav, events), want, equal_nan=True), trial
        inplace = nav.copy()
        apply_distributions(inplace, events, out=inplace)
        assert np.array_equal(inplace, want, equal_nan=True), trial


def test_fund_matrix_is_row_major_and_matches_pandas_reindex() -> None:
    rng = np.random.default_rng(2)
    dates = pd.bdate_range("2024-01-01", periods=37)
    frame = pd.DataFrame(rng.normal(size=(37, 300)), index=dates, columns=[f"F{i}" for i in range(300)])
    frame = pd.DataFrame(frame.to_numpy().copy(order="F"), index=dates, columns=frame.columns)
    codes = [f"F{i}" for i in rng.permutation(300)] + ["MISSING"]
    got = fund_matrix(frame, codes)
    assert got.flags.c_contiguous
    want = frame.reindex(columns=codes).to_numpy(dtype=float)
    assert np.array_equal(got, want, equal_nan=True)
    row_major = pd.DataFrame(np.ascontiguousarray(want[:, :-1]), index=dates, columns=codes[:-1], copy=False)
    assert row_major.to_numpy().flags.c_contiguous
    assert np.array_equal(fund_matrix(row_major, codes), want, equal_nan=True)
    numbered = pd.DataFrame(frame.to_numpy(), index=dates, columns=range(300))  # non-string column labels
    assert np.array_equal(fund_matrix(numbered, ["5", "0", "x"])[:, :2], frame[["F5", "F0"]].to_numpy())
    with pytest.raises(ValueError):
        fund_matrix(pd.concat([frame, frame[["F1"]]], axis=1), codes)  # duplicate fund columns


def test_lifespans_and_cells_match_the_plain_numpy_forms() -> None:
    rng = np.random.default_rng(3)
    for trial in range(300):
        nav = rng.random((int(rng.integers(1, 15)), int(rng.integers(0, 10))))
        nav[rng.random(nav.shape) < rng.random()] = np.nan
        present = np.isfinite(nav)
        span = lifespans(np.asfortranarray(nav) if trial % 2 else nav)
        has_any = present.any(axis=0)
        assert np.array_equal(span.first, np.where(has_any, present.argmax(axis=0), -1))
        assert np.array_equal(
            span.last, np.where(has_any, nav.shape[0] - 1 - present[::-1].argmax(axis=0), -1)
        )
        mask = present if trial % 3 else np.asfortranarray(present)
        for got, want in zip(cells(mask), np.nonzero(mask), strict=True):
            assert np.array_equal(got, want)


def test_peer_means_on_a_few_rows_equal_those_of_every_row() -> None:
    rng = np.random.default_rng(4)
    nav = 1000 * np.cumprod(1 + rng.normal(0, 0.03, (60, 40)), axis=0)
    nav[rng.random(nav.shape) < 0.1] = np.nan
    groups = np.array(rng.choice(["a", "b"], 40), dtype=object)
    cols = np.arange(40)
    every = peer_mean_returns(nav, groups, cols, most=25)
    rows = np.array([0, 3, 3, 17, 59])
    some = peer_mean_returns(nav, groups, cols, most=25, rows=rows)
    for g in every:
        peers = np.flatnonzero(groups == g)[:25]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = nav[1:, peers] / nav[:-1, peers] - 1.0
            r[np.abs(r) > 0.05] = np.nan
            want = np.r_[0.0, np.nan_to_num(np.nanmean(r, axis=1))]
        assert np.array_equal(every[g], want)
        assert np.array_equal(some[g][rows], want[rows])


def test_class_counts_equal_the_pandas_group_by() -> None:
    from evaluator.domains.fund.engine.scoring import class_counts

    rng = np.random.default_rng(3)
    for n in (1, 7, 500, 5000):
        groups = rng.choice(np.array(["국내주식형", "채권형", "", "혼합형"], dtype=object), n)
        families = rng.choice(np.array([f"P{i}" for i in range(max(n // 3, 1))], dtype=object), n)
        mask = rng.random(n) < 0.7
        frame = pd.DataFrame({"g": groups, "f": families, "m": mask.astype(int)})
        want = np.where(mask, frame.groupby(["g", "f"], sort=False)["m"].transform("sum").to_numpy(dtype=int), 0)
        assert class_counts(groups, families, mask).tolist() == want.tolist()
        ints = rng.integers(0, 40, n)  # the grade history's stacked integer groups
        frame = pd.DataFrame({"g": ints, "f": families, "m": mask.astype(int)})
        want = np.where(mask, frame.groupby(["g", "f"], sort=False)["m"].transform("sum").to_numpy(dtype=int), 0)
        assert class_counts(ints, families, mask).tolist() == want.tolist()
    with_missing = np.array(["A", None, "A", None], dtype=object)  # a missing key is a key of its own
    families = np.array(["P", "P", "P", "P"], dtype=object)
    assert class_counts(with_missing, families, np.ones(4, dtype=bool)).tolist() == [2, 2, 2, 2]
    assert class_counts(with_missing, families, np.array([True, True, False, False])).tolist() == [1, 1, 0, 0]
    assert class_counts(np.array([], dtype=object), np.array([], dtype=object), np.zeros(0, dtype=bool)).size == 0
