"""Grades, eligibility, per-fund data errors, period weights, qualitative scores and peer context."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.data.readers import DataError
from evaluator.domains.fund.engine import EngineInputs
from evaluator.domains.fund.engine.engine import ERROR, NOT_RATED, OK, evaluate_universe
from evaluator.domains.fund.rubric import default_rubric
from evaluator.domains.registry import get_pack


def _navs(funds: int, years: float, seed: int = 0, end: str = "2025-06-30") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end=end, periods=int(252 * years))
    r = rng.normal(3e-4, 0.01, (len(dates), funds)) + rng.normal(0, 2e-4, funds)
    return pd.DataFrame(
        1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"F{i:03d}" for i in range(funds)]
    )


def _meta(codes: list[str], fund_type: str = "국내주식형", **extra: object) -> pd.DataFrame:
    return pd.DataFrame(
        {"fund_name": [f"펀드 {c}" for c in codes], "type": fund_type, "set_amount": 1e11, **extra},
        index=codes,
    )


def test_grade_bands_follow_the_top_percent_within_the_peer_group() -> None:
    navs = _navs(40, 4)
    ev = evaluate_universe(navs, _meta(list(navs.columns)))
    rated = [f for f in ev.funds if f.status == OK]
    assert len(rated) == 40
    assert Counter(f.grade for f in rated) == {1: 4, 2: 9, 3: 14, 4: 9, 5: 4}
    by_score = sorted(rated, key=lambda f: -f.score)
    assert [f.peer_percentile for f in by_score] == pytest.approx([100 * (i + 1) / 40 for i in range(40)])
    assert [f.grade for f in by_score] == sorted(f.grade for f in rated)  # better score, never a worse grade
    assert all(f.grade_label == f"{f.grade}등급" and f.peer_group_size == 40 for f in rated)


def test_composite_is_the_weighted_criteria_and_ties_share_a_grade() -> None:
    navs = _navs(12, 4, seed=1)
    navs["F011"] = navs["F010"]  # identical twins
    ev = evaluate_universe(navs, _meta(list(navs.columns)))
    rubric = default_rubric()
    weights = {c["id"]: c["weight"] for c in rubric["criteria"]}
    for f in ev.funds:
        scores = {k: v for k, v in f.criterion_scores.items() if v is not None}
        assert set(scores) == {"return", "risk_adjusted", "risk"}  # no benchmark given
        want = sum(weights[k] * v for k, v in scores.items()) / sum(weights[k] for k in scores)
        assert f.score == pytest.approx(want, rel=1e-12)
        assert 0 <= f.score <= 100
    twins = ev.fund("F010"), ev.fund("F011")
    assert twins[0].score == twins[1].score and twins[0].grade == twins[1].grade
    assert twins[0].peer_percentile == twins[1].peer_percentile


def test_period_weights_depend_on_history_length() -> None:
    navs = _navs(15, 11, seed=2)
    navs.iloc[: len(navs) - 252 * 4, :5] = np.nan  # ~4 years: 3y only
    navs.iloc[: len(navs) - 252 * 7, 5:10] = np.nan  # ~7 years: 5y 60 / 3y 40
    ev = evaluate_universe(navs, _meta(list(navs.columns)))
    weights = [ev.fund(c).period_weights for c in navs.columns]
    assert weights[:5] == [{"3y": 100.0}] * 5
    assert weights[5:10] == [{"5y": 60.0, "3y": 40.0}] * 5
    assert weights[10:] == [{"10y": 50.0, "5y": 30.0, "3y": 20.0}] * 5


def test_eligibility_reasons_and_small_peer_groups() -> None:
    navs = _navs(9, 5, seed=3)
    meta = _meta(list(navs.columns))
    navs.iloc[: len(navs) - 500, 0] = np.nan  # two years of history
    meta.loc["F001", "set_amount"] = 3e9  # 30억 < 50억
    meta.loc["F002", "type"] = "부동산형"  # not a peer group of the rubric
    meta = meta.drop(index="F003")  # no metadata at all
    meta.loc[["F007", "F008"], "type"] = "채권형"  # only two bond funds
    ev = evaluate_universe(navs, meta)
    reasons = {f.fund_code: " ".join(f.errors) for f in ev.funds if f.status == NOT_RATED}
    assert "최소 3년" in reasons["F000"]
    assert "설정액 30.0억원" in reasons["F001"]
    assert "부동산형" in reasons["F002"]
    assert "유형" in reasons["F003"]
    assert "채권형" in reasons["F007"] and "최소 5개" in reasons["F007"]
    # only three 국내주식형 funds remain eligible, fewer than five, so nobody is graded
    assert not [f for f in ev.funds if f.status == OK]
    assert "국내주식형" in reasons["F004"] and "3개" in reasons["F004"]
    assert ev.fund("F000").metrics["1y"] is not None and ev.fund("F000").metrics["3y"] is None
    assert all(f.grade is None and f.score is None for f in ev.funds)


def test_data_errors_are_per_fund_and_the_batch_goes_on() -> None:
    navs = _navs(10, 4, seed=4)
    navs.iloc[400:410, 0] = np.nan  # hole inside the history
    navs.iloc[300, 1] = -5.0  # negative NAV
    navs.iloc[-30:, 2] = np.nan  # stops a month before the as-of date
    ev = evaluate_universe(
        navs,
        _meta(list(navs.columns)),
        issues={"F003": ["기준일자 2024-01-02가 중복되어 있습니다"], "GONE": ["읽을 수 없는 기준일자"]},
    )
    f0, f1, f2, f3, gone = (ev.fund(c) for c in ("F000", "F001", "F002", "F003", "GONE"))
    assert f0.status == ERROR and "10개 기준일" in f0.errors[0]
    assert f1.status == ERROR and "-5" in f1.errors[0]
    assert f2.status == NOT_RATED and "마지막 기준가격" in f2.errors[0]
    assert f3.status == ERROR and f3.errors == ("기준일자 2024-01-02가 중복되어 있습니다",)
    assert gone.status == ERROR and gone.metrics == {"1y": None, "3y": None, "5y": None, "10y": None}
    assert all(f.metrics["1y"] is None for f in (f0, f1, f3))
    assert sum(f.status == OK for f in ev.funds) == 6  # the other funds are still graded


def test_calendar_gap_is_an_error_for_funds_spanning_it() -> None:
    navs = _navs(6, 4, seed=5)
    navs = navs.drop(navs.index[500:520])  # four weeks with no dates at all
    ev = evaluate_universe(navs, _meta(list(navs.columns)))
    assert all(f.status == ERROR and "공백" in f.errors[0] for f in ev.funds)


def test_qualitative_scores_blend_into_the_final_score() -> None:
    navs = _navs(10, 4, seed=6)
    codes = list(navs.columns)
    meta = _meta(codes, 운용철학=[5] * 10, 조직안정성=[4] * 10, risk_management=[3] * 10)
    meta.loc["F009", "운용철학"] = 7
    ev = evaluate_universe(navs, meta)
    f = ev.fund("F000")
    assert f.qualitative_scores == {"philosophy": 5.0, "organization": 4.0, "risk_management": 3.0}
    qual = (40 * 100 + 30 * 75 + 30 * 50) / 100
    assert f.score == pytest.approx(0.8 * f.quantitative_score + 0.2 * qual, rel=1e-12)
    bad = ev.fund("F009")
    assert bad.status == ERROR and "운용철학" in bad.errors[0]


def test_benchmark_per_type_and_missing_type_warns() -> None:
    navs = _navs(10, 4, seed=7)
    meta = _meta(list(navs.columns))
    meta.loc[["F008", "F009"], "type"] = "채권형"
    bench = pd.DataFrame({"국내주식형": navs.mean(axis=1)}, index=navs.index)
    ev = evaluate_universe(navs, meta, benchmark=bench)
    assert ev.fund("F000").metrics["3y"]["beta"] is not None
    assert ev.fund("F008").metrics["3y"]["beta"] is None
    assert "채권형" in ev.fund("F008").warnings[0]


def test_peer_context_is_the_rated_funds_statistics() -> None:
    navs = _navs(20, 4, seed=8)
    navs.iloc[300, 0] = 0.0  # an error fund stays out of the peer figures
    ev = evaluate_universe(navs, _meta(list(navs.columns)))
    peer = ev.peer("국내주식형")
    rated = [f for f in ev.funds if f.status == OK]
    assert peer["funds_rated"] == len(rated) == 19
    sharpe = [f.metrics["3y"]["sharpe"] for f in rated]
    stats = peer["metrics"]["3y"]["sharpe"]
    assert stats["median"] == pytest.approx(float(np.median(sharpe)))
    assert stats["mean"] == pytest.approx(float(np.mean(sharpe)))
    assert sum(peer["grade_counts"].values()) == 19
    assert ev.peer("채권형") is None


def test_as_of_before_the_data_is_a_clear_error() -> None:
    navs = _navs(3, 2)
    with pytest.raises(DataError, match="before the first NAV date"):
        evaluate_universe(navs, _meta(list(navs.columns)), as_of=dt.date(2001, 1, 1))


def test_fund_pack_exposes_the_engine_rubric() -> None:
    pack = get_pack("fund")
    assert pack.rubric() == default_rubric()
    assert pack.styles == ("json",)
    assert pack.default_weights() == {
        "json_format": 10.0,
        "grade_accuracy": 50.0,
        "reasoning_quality": 30.0,
        "consistency": 10.0,
    }
    assert list(pack.reward_functions()) == ["json_format", "grade_accuracy", "reasoning_quality", "consistency"]


def test_the_engine_inputs_as_one_value_or_as_keywords_grade_alike() -> None:
    """A caller hands the inputs as one :class:`EngineInputs` or names a few of its fields; both grade alike, a
    keyword overrides the value's field, and a misspelt keyword is refused (an ignored as-of would be a wrong grade)."""
    navs = _navs(12, 4, seed=3)
    meta = _meta(list(navs.columns))
    day = dt.date(2024, 12, 31)
    by_value = evaluate_universe(navs, meta, inputs=EngineInputs(as_of=day, risk_free=0.02, outliers="repair"))
    by_keywords = evaluate_universe(navs, meta, as_of=day, risk_free=0.02, outliers="repair")
    earlier = EngineInputs(as_of=dt.date(2023, 6, 30), risk_free=0.02, outliers="repair")
    overridden = evaluate_universe(navs, meta, inputs=earlier, as_of=day)

    def graded(ev: object) -> list[tuple[str, str, int | None, float | None]]:
        return [(f.fund_code, f.status, f.grade, f.score) for f in ev.funds]  # type: ignore[attr-defined]

    assert by_value.as_of == day != evaluate_universe(navs, meta).as_of
    assert graded(by_value) == graded(by_keywords) == graded(overridden)
    assert by_value.inputs == by_keywords.inputs
    assert by_value.inputs["risk_free"] == {"kind": "constant", "annual_rate": 0.02}
    assert by_value.inputs["outliers"]["mode"] == "repair"
    with pytest.raises(TypeError, match="as_off"):
        evaluate_universe(navs, meta, as_off=day)
