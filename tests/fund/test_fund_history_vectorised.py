"""The history's cross-date path against single-date runs, on a universe built to break shortcuts.

Funds that launch and stop mid-history, a fund priced on every calendar day, yearly 결산 with a 분배금
column (one fund's amounts dated on the ex-date, one's a row early on the 결산일), a settling fund with no
adjustment information (the reset detector must catch it from its first reset on), share classes of one
portfolio, a fund too small to rate, a fund with a hole, a fund missing its NAV on a quarter-end, per-유형
benchmarks and a risk-free rate that changes every year. Every column of every quarter-end row must equal
``evaluate_loaded(as_of=D)`` (1e-9, nulls included), and no date may fall back to the single-date engine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from history_compare import cell, same

from evaluator.domains.fund.data.loaders import Universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.engine.total_return import Adjustments
from evaluator.domains.fund.history.prep import CrossDate
from evaluator.domains.fund.history.run import COLUMNS, as_of_dates, history_row, parse_month, run_history
from evaluator.domains.fund.rubric import default_rubric

HOLIDAYS = ["2016-02-08", "2016-02-09", "2019-09-12", "2019-09-13", "2021-09-20", "2021-09-21", "2023-06-30"]


def _settle(levels: np.ndarray, every: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """Yearly 결산: the gain above 1,000 is paid on the ex-date row; returns (paid NAV, amounts by ex-row)."""
    nav = levels.copy()
    paid = np.zeros(len(levels))
    for e in range(first, len(levels), every):
        d = max(nav[e - 1] - 1000.0, 0.0)
        nav_e = nav[e - 1] * levels[e] / levels[e - 1] - d
        nav[e:] = levels[e:] * (nav_e / levels[e])
        paid[e] = d
    return nav, paid


@pytest.fixture(scope="module")
def universe() -> Universe:
    rng = np.random.default_rng(5)
    days = pd.bdate_range("2013-07-01", "2024-12-31")
    days = days[~days.isin(pd.DatetimeIndex(HOLIDAYS))]
    everyday = pd.date_range(days[0], days[-1])
    t = len(days)
    market = {"국내주식형": rng.normal(3e-4, 0.011, t), "채권형": rng.normal(1e-4, 0.002, t)}
    codes = [f"K{i:02d}" for i in range(10)] + [f"B{i:02d}" for i in range(8)]
    types = ["국내주식형"] * 10 + ["채권형"] * 8
    nav = np.empty((t, len(codes)))
    for j, kind in enumerate(types):
        beta = rng.uniform(0.7, 1.2)
        noise = 0.004 if kind == "국내주식형" else 0.0008
        nav[:, j] = 1000 * np.cumprod(1 + beta * market[kind] + rng.normal(2e-5, noise, t))
    # share classes: K06–K08 are one portfolio differing only in fees
    for j, fee in ((7, 0.004), (8, 0.009)):
        nav[:, j] = nav[:, 6] * np.cumprod(np.full(t, 1 - fee / 252))
    nav[:, 5] = 1000 * np.cumprod(1 + market["국내주식형"] + rng.normal(6e-4, 0.003, t))  # grows: resets show
    dist = pd.DataFrame(np.nan, index=days, columns=["K03", "K04"])
    # K04's first 결산일 is a quarter-end: graded on that date, its amount sits on the last row and the
    # engine reads it as ex-dated, unlike the whole file (the cross-date path rebuilds its levels then)
    firsts = {3: 231, 4: int(days.get_loc(pd.Timestamp("2016-06-30"))) + 1, 5: 305}
    for j, code, early in ((3, "K03", False), (4, "K04", True), (5, "K05", None)):
        settled, paid = _settle(nav[:, j], 250, firsts[j])
        nav[:, j] = settled
        if early is not None:
            rows = np.flatnonzero(paid > 0)
            dist.iloc[rows - 1 if early else rows, dist.columns.get_loc(code)] = paid[rows]
    navs = pd.DataFrame(nav, index=days, columns=codes).reindex(everyday)
    # K02 is priced on every calendar day (weekends and holidays too), like an MMF
    daily = 1000 * np.cumprod(1 + rng.normal(1e-4, 0.002, len(everyday)))
    navs["K02"] = daily
    navs.loc[: pd.Timestamp("2019-05-14"), "K00"] = np.nan  # launched mid-history
    navs.loc[pd.Timestamp("2022-03-11") :, "K01"] = np.nan  # stopped reporting
    navs.loc[pd.Timestamp("2020-04-01") : pd.Timestamp("2020-04-10"), "B03"] = np.nan  # a hole: an error
    navs.loc[: pd.Timestamp("2020-12-31"), "B05"] = np.nan  # young: rated once it has 3 years
    navs.loc[pd.Timestamp("2022-09-30"), "B04"] = np.nan  # no NAV on a quarter-end (carried forward later)
    navs.loc[pd.Timestamp("2022-09-30"), "K09"] = np.nan
    navs = navs.dropna(how="all")
    meta = pd.DataFrame(
        {
            "type": types,
            "set_amount": [1e11] * 9 + [1e9] + [5e10] * 8,
            "family_code": ["K00", "K01", "K02", "K03", "K04", "K05", "P1", "P1", "P1", "K09", *codes[10:]],
        },
        index=pd.Index(codes, name="fund_code"),
    )
    bench = pd.DataFrame({k: 1000 * np.cumprod(1 + v) for k, v in market.items()}, index=days)
    rf = pd.Series([0.015, 0.012, 0.02, 0.025, 0.01, 0.005, 0.008, 0.03, 0.035, 0.032, 0.03, 0.028])
    rf.index = pd.DatetimeIndex([f"{y}-01-01" for y in range(2013, 2025)])
    return Universe(
        navs=navs,
        meta=meta,
        issues={},
        benchmark=bench,
        risk_free=rf,
        adjustments=Adjustments(distribution=dist),
    )


def test_every_column_of_every_date_equals_its_single_date_run(universe: Universe) -> None:
    rubric = default_rubric()
    dates = as_of_dates(universe, parse_month("2016-03", "--from"), parse_month("2024-12", "--to"), "Q")
    hist = run_history(universe, rubric, dates)
    assert hist.fallback_dates == 0  # every date came from the cross-date path
    seen: dict[str, set[object]] = {"status": set(), "reasons": set()}
    windows_with_values: set[str] = set()
    for when in dates:
        single = evaluate_loaded(universe, rubric, as_of=when)
        day = hist.table[hist.table["as_of"] == single.as_of.isoformat()].set_index("fund_code")
        assert list(day.index) == [f.fund_code for f in single.funds]
        for fund in single.funds:
            expected = history_row(fund, str(rubric["version"]))
            got = day.loc[fund.fund_code]
            for col in COLUMNS[2:]:
                assert same(cell(got[col]), expected[col]), (single.as_of, fund.fund_code, col)
                if col.startswith("sharpe_") and expected[col] is not None:
                    windows_with_values.add(col)
            seen["status"].add(fund.status)
            seen["reasons"].update(fund.reason_codes)
    # the universe did exercise what it was built for
    assert seen["status"] == {"ok", "not_rated", "error"}
    assert "unadjusted_distribution" in seen["reasons"]
    assert windows_with_values == {"sharpe_1y", "sharpe_3y", "sharpe_5y", "sharpe_10y"}
    table = hist.table.set_index(["fund_code", "as_of"])
    assert table.loc[("K02", "2024-12-31"), "status"] == "ok"  # the calendar-day fund is rated
    assert table.loc[("K00", "2019-06-28"), "status"] == "not_rated"
    assert table.loc[("K01", "2022-06-30"), "status"] == "not_rated"
    assert table.loc[("B03", "2021-03-31"), "status"] == "error"
    assert table.loc[("B04", "2022-09-30"), "status"] == "not_rated"
    assert table.loc[("B04", "2022-12-30"), "status"] == "ok"
    assert table.loc[("K04", "2024-12-31"), "status"] == "ok"  # early-dated 분배금 moved to its ex-date
    prep = CrossDate(universe, rubric)
    assert prep.shifted[prep.codes.index("K04")]
    redated = prep.flags(pd.Timestamp("2016-06-30")).redated
    assert redated is not None and prep.codes.index("K04") in redated[0].tolist()


def test_a_date_the_shared_preparation_cannot_reproduce_is_graded_by_the_engine(universe: Universe) -> None:
    # Without a benchmark the reset detector measures K05 against its peers' median; on 2022-09-30 K09
    # (a peer) has no NAV, which the whole file carries forward but the truncated data does not, so that
    # median differs: the date goes to the single-date engine, and still equals it.
    no_bench = Universe(
        navs=universe.navs,
        meta=universe.meta,
        issues={},
        risk_free=universe.risk_free,
        adjustments=universe.adjustments,
    )
    rubric = default_rubric()
    dates = as_of_dates(no_bench, parse_month("2022-06", "--from"), parse_month("2022-12", "--to"), "Q")
    hist = run_history(no_bench, rubric, dates)
    assert hist.fallback_dates == 1
    _assert_equals_single_dates(hist.table, no_bench, rubric, dates)


def test_allow_unadjusted_grades_the_resetting_fund_as_single_date_runs_do(universe: Universe) -> None:
    rubric = default_rubric()
    dates = as_of_dates(universe, parse_month("2023-12", "--from"), parse_month("2024-12", "--to"), "Q")
    hist = run_history(universe, rubric, dates, allow_unadjusted=True)
    assert hist.fallback_dates == 0
    _assert_equals_single_dates(hist.table, universe, rubric, dates, allow_unadjusted=True)
    assert (hist.table[hist.table["fund_code"] == "K05"]["status"] == "ok").all()


def _assert_equals_single_dates(
    table: pd.DataFrame, universe: Universe, rubric: dict, dates: list, **options: object
) -> None:
    """Every history column of every date equals that date's single-date run."""
    for when in dates:
        single = evaluate_loaded(universe, rubric, as_of=when, **options)
        day = table[table["as_of"] == single.as_of.isoformat()].set_index("fund_code")
        for fund in single.funds:
            expected = history_row(fund, str(rubric["version"]))
            for col in COLUMNS[2:]:
                assert same(cell(day.loc[fund.fund_code, col]), expected[col]), (
                    single.as_of,
                    fund.fund_code,
                    col,
                )


def _close(a: object, b: object, where: str) -> None:
    """Recursively equal: floats to 1e-9 relative, everything else exactly."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    else:
        assert same(cell(a), cell(b)), (where, a, b)


@pytest.mark.parametrize("last", ["2022-09", "2024-12"])
def test_latest_reports_equal_a_single_date_run_in_every_field(universe: Universe, last: str) -> None:
    # The last date's full evaluation reuses the cross-date pass's window metrics; every field of every
    # fund (all metrics of all windows, scores, grades, reasons) and the peer context must still be the
    # single-date engine's. 2022-09-30: B04 and K09 have no NAV of their own (measured by the engine);
    # 2024-12-31: K01 has stopped reporting, K04's 분배금 is redated.
    from dataclasses import asdict

    rubric = default_rubric()
    dates = as_of_dates(universe, parse_month("2021-01", "--from"), parse_month(last, "--to"), "Q")
    hist = run_history(universe, rubric, dates)
    single = evaluate_loaded(universe, rubric, as_of=dates[-1])
    assert [f.fund_code for f in hist.last.funds] == [f.fund_code for f in single.funds]
    for got, want in zip(hist.last.funds, single.funds, strict=True):
        _close(asdict(got), asdict(want), got.fund_code)
    _close(hist.last.peers, single.peers, "peers")
    assert hist.last.inputs == single.inputs
    statuses = {f.fund_code: f.status for f in single.funds}
    assert statuses["K01"] == "not_rated"
    if last == "2022-09":
        assert statuses["B04"] == "not_rated"
    rated = [f for f in hist.last.funds if f.status == "ok"]
    assert rated and all(f.metrics["3y"]["sharpe"] is not None for f in rated)
