"""Market calendars (a weekend-priced fund changes nobody else's result) and share classes (each class of a
k-class portfolio counts 1/k in the peer rating scale)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.data.readers import DataError
from evaluator.domains.fund.engine.engine import ERROR, OK, evaluate_universe
from evaluator.domains.fund.engine.scoring import (
    assign_grades,
    class_counts,
    top_percent,
    weighted_top_percent,
)
from evaluator.domains.fund.reports.report import build_summary, grade_distribution_by_portfolio
from evaluator.domains.fund.rubric import default_rubric


def _navs(funds: int, years: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=int(252 * years))
    r = rng.normal(3e-4, 0.01, (len(dates), funds)) + rng.normal(0, 2e-4, funds)
    return pd.DataFrame(
        1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"F{i:03d}" for i in range(funds)]
    )


def _meta(codes: list[str], **extra: object) -> pd.DataFrame:
    return pd.DataFrame({"type": "국내주식형", "set_amount": 1e11, **extra}, index=codes)


def _mmf(start: pd.Timestamp, end: pd.Timestamp) -> pd.Series:
    days = pd.date_range(start, end, freq="D")
    return pd.Series(1000 * (1 + 0.03 / 365) ** np.arange(len(days)), index=days, name="MMF01")


def test_a_weekend_priced_fund_changes_no_other_funds_result() -> None:
    navs = _navs(30, 4, seed=1)
    bench = pd.Series(
        1000 * np.cumprod(1 + np.random.default_rng(2).normal(3e-4, 0.01, len(navs))), index=navs.index
    )
    base = evaluate_universe(navs, _meta(list(navs.columns)))
    base_b = evaluate_universe(navs, _meta(list(navs.columns)), benchmark=bench)
    mmf = _mmf(navs.index[0], navs.index[-1] + pd.Timedelta(days=2))  # ends on a Sunday
    mixed = pd.concat([navs, mmf], axis=1).sort_index()
    meta = _meta(list(mixed.columns))
    meta.loc["MMF01", "type"] = "MMF"  # its own 유형: only its calendar could change the others
    for before, bm in ((base, None), (base_b, bench)):
        after = evaluate_universe(mixed, meta, benchmark=bm)
        assert after.as_of == before.as_of == dt.date(2025, 6, 30)
        for f in before.funds:
            g = after.fund(f.fund_code)
            assert (g.status, g.grade, g.metrics, g.warnings) == (f.status, f.grade, f.metrics, f.warnings)
        m = after.fund("MMF01")
        assert m.status != ERROR and any("주말·휴일" in w for w in m.warnings)
        assert after.inputs["calendar"]["calendar"] == "majority"


def test_short_holes_are_filled_forward_with_a_warning_and_long_ones_are_errors() -> None:
    navs = _navs(12, 4, seed=3)
    navs.iloc[500:502, 0] = np.nan  # two market dates: filled
    navs.iloc[600:604, 1] = np.nan  # four: beyond the limit
    ev = evaluate_universe(navs, _meta(list(navs.columns)))
    f0, f1 = ev.fund("F000"), ev.fund("F001")
    assert f0.status == OK and any("직전 기준가격을 이어 썼습니다" in w for w in f0.warnings)
    assert f1.status == ERROR and "4개 기준일" in f1.errors[0]
    filled = navs["F000"].ffill()  # an independent forward fill gives the same figures
    alone = evaluate_universe(navs.assign(F000=filled), _meta(list(navs.columns)))
    assert alone.fund("F000").metrics == f0.metrics


def test_a_calendar_file_decides_the_market_dates() -> None:
    navs = _navs(10, 3, seed=4)
    mixed = pd.concat([navs, _mmf(navs.index[0], navs.index[-1])], axis=1).sort_index()
    cal = pd.DatetimeIndex(navs.index)
    ev = evaluate_universe(mixed, _meta(list(mixed.columns)), calendar=cal)
    assert ev.inputs["calendar"] == {"calendar": "file", "calendar_dates": len(cal), "fill_limit": 3}
    plain = evaluate_universe(navs, _meta(list(navs.columns)))
    assert all(ev.fund(f.fund_code).metrics == f.metrics for f in plain.funds)


def test_a_sparse_benchmark_or_calendar_never_turns_daily_returns_into_weekly_ones() -> None:
    navs = _navs(10, 3, seed=6)
    weekly = pd.Series(np.linspace(1000, 1200, len(navs.index[::5])), index=navs.index[::5])
    with pytest.raises(DataError, match="BENCHMARK has no level on 4 consecutive market dates"):
        evaluate_universe(navs, _meta(list(navs.columns)), benchmark=weekly)
    with pytest.raises(DataError, match="--calendar holds"):
        evaluate_universe(navs, _meta(list(navs.columns)), calendar=pd.DatetimeIndex(navs.index[::5]))


def _independent_top(score: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """100 · (weight scoring strictly higher + own weight) / total weight."""
    return np.array(
        [(weight[score > s].sum() + w) / weight.sum() * 100 for s, w in zip(score, weight, strict=True)]
    )


def test_an_eight_class_portfolio_takes_one_portfolio_worth_of_the_scale() -> None:
    # 40 portfolios: the best has 8 classes (fee differences give slightly different scores), 39 single funds
    classes = 90.0 - 0.1 * np.arange(8)
    others = 80.0 - np.arange(39, dtype=float)
    score = np.r_[classes, others]
    families = np.array(["P00"] * 8 + [f"P{i:02d}" for i in range(1, 40)], dtype=object)
    groups = np.full(47, "국내주식형", dtype=object)
    weight = np.r_[np.full(8, 1 / 8), np.ones(39)]
    assert list(class_counts(groups, families, np.ones(47, dtype=bool))) == [8] * 8 + [1] * 39
    top, size = weighted_top_percent(score, groups, np.ones(47, dtype=bool), weight)
    np.testing.assert_allclose(top, _independent_top(score, weight), rtol=1e-12)
    grade = assign_grades(top, default_rubric())
    assert list(grade[:8]) == [1] * 8  # every class of the best portfolio
    assert grade[8] == 1 and grade[9] == 1  # 2nd and 3rd best portfolios
    assert top[10] == pytest.approx(10.0) and grade[10] == 1  # 4th: exactly on the 10 % boundary (≤ 10)
    assert top[11] == pytest.approx(12.5) and grade[11] == 2  # 5th
    assert grade[12] == 2  # 6th
    assert set(size) == {47}
    # counted as 47 funds instead, the classes would push the 2nd best portfolio to 2등급
    plain, _ = top_percent(score, groups, np.ones(47, dtype=bool))
    assert assign_grades(plain, default_rubric())[9] == 2


@pytest.mark.parametrize("seed", range(40))
def test_fractional_class_weights_never_put_a_fund_past_100_percent(seed: int) -> None:
    """Weights 1/k summed in another order than the total can land the last fund at 100.00000000000003;
    the report schema refuses that and a batch holding it could not be stored."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    weight = 1.0 / rng.integers(1, 9, n)
    score = rng.normal(size=n)
    groups = rng.choice(np.array(["a", "b"], dtype=object), n)
    top, _ = weighted_top_percent(score, groups, np.ones(n, dtype=bool), weight)
    assert np.nanmax(top) <= 100.0 and np.nanmin(top) > 0.0
    for g in ("a", "b"):
        inside = groups == g
        if inside.any():
            np.testing.assert_allclose(top[inside], _independent_top(score[inside], weight[inside]), rtol=1e-12)
            assert top[inside][np.argmin(score[inside])] == pytest.approx(100.0, abs=1e-9)  # the worst: the bottom


def test_weights_that_once_summed_past_the_total_give_exactly_100() -> None:
    weight = 1.0 / np.array([7.0, 4.0, 3.0, 5.0])
    top, _ = weighted_top_percent(np.array([4.0, 3.0, 2.0, 1.0]), np.full(4, "a", dtype=object),
                                  np.ones(4, dtype=bool), weight)
    assert top[-1] == 100.0


def test_unit_weights_reproduce_the_unweighted_rule_with_ties() -> None:
    rng = np.random.default_rng(9)
    score = rng.integers(0, 20, 300).astype(float)
    groups = rng.choice(np.array(["a", "b", "c"], dtype=object), 300)
    mask = rng.random(300) < 0.9
    weighted, wsize = weighted_top_percent(score, groups, mask, np.ones(300))
    plain, psize = top_percent(score, groups, mask)
    np.testing.assert_allclose(weighted, plain, rtol=1e-12)
    assert (wsize == psize).all()


def test_engine_groups_classes_and_reports_portfolios() -> None:
    navs = _navs(24, 4, seed=5)
    codes = list(navs.columns)
    lead = navs["F000"].to_numpy()
    for k, c in enumerate(
        codes[1:8], start=1
    ):  # seven more classes of F000's portfolio, slightly higher fees
        navs[c] = lead * np.cumprod(np.r_[1.0, np.full(len(lead) - 1, 1 - k * 2e-6)])
    family = ["P0"] * 8 + [f"P{i}" for i in range(1, 17)]
    ev = evaluate_universe(navs, _meta(codes, family_code=family))
    grouped = {f.fund_code: f for f in ev.funds}
    assert all(grouped[c].portfolio_code == "P0" and grouped[c].portfolio_classes == 8 for c in codes[:8])
    assert grouped["F010"].portfolio_classes == 1
    plain = evaluate_universe(navs, _meta(codes))
    for f in plain.funds:  # scores and metric percentiles are unchanged; only the position counts portfolios
        assert grouped[f.fund_code].score == f.score and f.portfolio_code is None
    by_portfolio = grade_distribution_by_portfolio(ev.funds)
    assert by_portfolio is not None
    row = by_portfolio["국내주식형"]
    assert row["portfolios"] == 17 and sum(row[str(g)] for g in range(1, 6)) == pytest.approx(17)
    summary = build_summary(plain, {})
    assert summary["grade_distribution_by_portfolio"] is None and summary["share_classes"]["grouped"] is False
