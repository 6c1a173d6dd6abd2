"""Ingest of the rules firms publish beyond one ranking: English–Korean wording, 가등급, stars, weights per 유형."""

from __future__ import annotations

import pytest

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_lexicon import metric_id
from evaluator.methodology.ingest_provisional import provisional_sentences, read_provisional
from evaluator.methodology.ingest_rules import read_eligibility, read_periods
from evaluator.methodology.ingest_tables import Sentence
from evaluator.methodology.ingest_text import clean, split_sentences


@pytest.mark.parametrize(
    ("name", "metric"),
    [
        ("Sharpe ratio 샤프지수", "sharpe"),
        ("샤프지수 Sharpe ratio", "sharpe"),
        ("Annualized return 연환산 수익률", "annualized_return"),
        ("Max drawdown 최대낙폭", "max_drawdown"),
        ("Standard deviation 표준편차", "annualized_volatility"),
        ("Information ratio 정보비율(IR)", "information_ratio"),
        ("Sharpe ratio 샤프", "sharpe"),
    ],
)
def test_mixed_cells_are_read_by_either_name(name: str, metric: str) -> None:
    assert metric_id(name) == (metric, None)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Sharpe ratio 표준편차", "names two different metrics"),
        ("Risk-adjusted return 위험조정수익률", "family"),
        ("Alpha 베타", "names two different metrics"),
    ],
)
def test_mixed_cells_that_disagree_or_name_a_family_are_reported(name: str, words: str) -> None:
    mid, why = metric_id(name)
    assert mid is None and words in (why or "")


def _sentences(text: str) -> list[Sentence]:
    return [Sentence(s, 1, "text") for s in split_sentences(clean(text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Minimum track record: 3 years. Minimum fund size: KRW 10 billion (100억원). "
            "A peer group needs at least 5 eligible funds.",
            {"min_history_years": 3, "min_set_amount_krw": 10_000_000_000, "min_peer_group_size": 5},
        ),
        (
            "Funds with a track record of at least 36 months and net assets of at least KRW 20 billion are rated. "
            "Peer groups with fewer than 10 funds are not rated.",
            {"min_history_years": 3, "min_set_amount_krw": 20_000_000_000, "min_peer_group_size": 10},
        ),
        (
            "Minimum track record: 5 years. Minimum fund size: 300억원. Peer groups need at least 8 rated funds.",
            {"min_history_years": 5, "min_set_amount_krw": 30_000_000_000, "min_peer_group_size": 8},
        ),
    ],
)
def test_english_eligibility_sentences(text: str, expected: dict) -> None:
    f = Findings("test")
    assert read_eligibility(_sentences(text), ["주식형", "채권형"], f) == expected, f.problems


def test_two_english_minimums_are_ambiguous() -> None:
    f = Findings("test")
    text = "Minimum track record: 3 years. Funds need a track record of at least 5 years. Minimum fund size: 100억원."
    read_eligibility(_sentences(text), [], f)
    assert any(p["kind"] == "ambiguous" and p["field"] == "eligibility.min_history_years" for p in f.problems)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("운용기간 1년 이상 3년 미만인 펀드는 1년 성과로 가등급을 부여한다.", {"min_history_years": 1, "max_history_years": 3, "window": "1y"}),
        ("설정 후 12개월 이상 36개월 미만인 펀드는 최근 1년 수익률로 잠정등급을 산출한다.",
         {"min_history_years": 1, "max_history_years": 3, "window": "1y", "label_prefix": "잠정"}),
        ("가 등 급 : 운용기간 2년 이상 5년 미만 펀드, 평가기간 1년 성과 기준", {"min_history_years": 2, "max_history_years": 5, "window": "1y"}),
        ("Funds with 1 year or more but under 3 years of track record receive a provisional rating on 1-year performance.",
         {"min_history_years": 1, "max_history_years": 3, "window": "1y"}),
    ],
)
def test_provisional_rule_sentences(text: str, rule: dict) -> None:
    f = Findings("test")
    marked, rest = provisional_sentences(_sentences(text) + _sentences("운용기간 3년 이상인 펀드를 평가한다."))
    assert len(rest) == 1 and read_provisional(marked, f) == rule, f.problems


def test_평가등급_is_not_a_provisional_grade() -> None:
    text = "평가등급은 운용기간 3년 이상인 펀드에 부여한다. 펀드평가 등급 산정 기준. 가 등급은 1년 성과로 매긴다."
    marked, rest = provisional_sentences(_sentences(text))
    assert [s.text.rstrip(".") for s in rest] == ["평가등급은 운용기간 3년 이상인 펀드에 부여한다", "펀드평가 등급 산정 기준"]
    assert len(marked) == 1


def test_two_provisional_rules_are_ambiguous_and_the_regular_minimum_is_kept() -> None:
    text = (
        "운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다. "
        "운용기간 1년 이상 3년 미만인 펀드는 1년 성과로 가등급을 부여한다. "
        "운용기간 2년 이상 3년 미만인 펀드는 1년 성과로 가등급을 부여한다."
    )
    f = Findings("test")
    marked, rest = provisional_sentences(_sentences(text))
    assert read_provisional(marked, f) is None and f.problems[0]["kind"] == "ambiguous"
    assert read_eligibility(rest, [], f)["min_history_years"] == 3  # the 가등급 '1년 이상' is not a second minimum


def test_english_period_sentences() -> None:
    f = Findings("test")
    text = "Funds with 3 years or more use 3Y 100%. Funds with 5 years or more use 3Y 40%, 5Y 60%."
    assert read_periods([], _sentences(text), 3, f) == [
        {"min_history_years": 3, "weights": {"3y": 100.0}},
        {"min_history_years": 5, "weights": {"3y": 40.0, "5y": 60.0}},
    ], f.problems
