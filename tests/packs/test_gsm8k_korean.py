"""GSM8K answers in Korean number notation: graded by value in every reading, refused when they hedge or waver."""

from __future__ import annotations

import pytest

from evaluator.domains.gsm8k.numbers import answers_match, parse_gold
from evaluator.domains.registry import get_pack
from evaluator.evaluation.scoring import score_rows

PACK = get_pack("gsm8k")
SLOTS = {
    "xml": "<reasoning>\n계산합니다.\n</reasoning>\n<answer>\n{}\n</answer>",
    "think-solution": "<THINK>\n계산합니다.\n</THINK>\n<SOLUTION>{}</SOLUTION>",
    "qwen3-think": "<think>\n계산합니다.\n</think>\n\n정답: {}",
}


def correctness(text: str, gold: str, style: str = "xml") -> float | None:
    return PACK.reward_functions()["correctness"]([text], answer=[gold], style=[style])[0]


@pytest.mark.parametrize(
    ("completion", "mode", "gold"),
    [  # the issue's table: each was graded wrong before
        ("<answer>7만 2천</answer>", "strict", "72000"),
        ("정답은 7만 2천 원입니다.", "flexible", "72000"),
        ("<answer>150만</answer>", "strict", "1500000"),
        ("<answer>7.2만</answer>", "strict", "72000"),
        ("<answer>72,000원</answer>", "strict", "72000"),
        ("<answer>3억 5천만</answer>", "strict", "350000000"),
    ],
)
def test_the_issue_table_is_graded_right(completion: str, mode: str, gold: str) -> None:
    assert PACK.extract(completion, style="xml", mode=mode) == gold
    assert PACK.grade(completion, {"answer": gold}, style="xml", extract=mode).correct
    if mode == "strict":
        assert correctness(completion, gold) == 1.0


KOREAN_RIGHT = [
    ("7만 2천", 72000),
    ("7만2천원", 72000),
    ("7만 2천 원입니다", 72000),
    ("72,000원 (7만 2천 원)", 72000),
    ("7만 2천 원 (72,000원)", 72000),
    ("150만 원", 1_500_000),
    ("1,500만 원", 15_000_000),
    ("7.2만", 72000),
    ("1.5억 원", 150_000_000),
    ("3억 5천만 원", 350_000_000),
    ("1만 2,500원", 12500),
    ("1만 2500", 12500),
    ("3천 500원", 3500),
    ("5백 명", 500),
    ("2천 명", 2000),
    ("10만 권", 100_000),
    ("12만 개", 120_000),
    ("3만 시간", 30000),
    ("**7만 2천 원**", 72000),
    ("\\boxed{7만 2천}", 72000),
    ("$7만 2천$", 72000),
    ("총 7만 2천 원", 72000),
    ("칠만 이천 원", 72000),
    ("삼억 오천만 원", 350_000_000),
    ("열다섯 개", 15),
    ("스물두 명입니다", 22),
    ("１５０만", 1_500_000),  # full-width digits
    ("18개", 18),
    ("1,080원", 1080),
]


@pytest.mark.parametrize("style", list(SLOTS))
@pytest.mark.parametrize(("answer", "value"), KOREAN_RIGHT)
def test_korean_answers_in_every_slot_read_as_their_value(style: str, answer: str, value: int) -> None:
    text = SLOTS[style].format(answer)
    for mode in ("strict", "flexible"):
        assert PACK.extract(text, style=style, mode=mode) == str(value)
    assert correctness(text, str(value), style) == 1.0


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("사과가 7만 2천 개 있었고 2천 개를 팔았습니다. 따라서 정답은 7만 개입니다.", "70000"),
        ("한 권에 1만 2천 원이므로 3권은 3만 6천 원입니다.\n#### 3만 6천", "36000"),
        ("1만 2천 원 × 3 = 3만 6천 원\n답: 3만 6천 원", "36000"),
        ("한 권에 1만 2천 원이므로 3권이면 모두 3만 6천 원", "36000"),  # no marker: the last number
        ("답은 칠만 이천 원입니다.", "72000"),
        ("The answer is 7만 2천.", "72000"),
    ],
)
def test_flexible_reads_korean_markers_and_the_last_korean_number(text: str, value: str) -> None:
    assert PACK.extract(text, style="xml", mode="flexible") == value


@pytest.mark.parametrize(
    "answer",
    [
        "약 7만",  # hedges
        "대략 7만 2천 원",
        "7만 원 정도",
        "7만 2천 원쯤",
        "7만 원 이상",
        "7만 원가량",
        "최소 7만 원",
        "10여 명",
        "약 72000",
        "7만~8만 원",  # ranges
        "7~8만 원",
        "7만-8만",
        "7만에서 8만 사이",
        "7만 또는 8만",  # two different values
        "72,000원 (7만 3천 원)",
        "7만 2천 원, 8만 원",
        "12천",  # units that cannot be read
        "7만 이천",
        "5조",  # five trillion, or five groups
        "칠만 이천 또는 팔만",
        "열세",  # thirteen, or ten years old
        "",
    ],
)
def test_hedges_ranges_two_values_and_unreadable_units_are_no_answer(answer: str) -> None:
    for style, template in SLOTS.items():
        text = template.format(answer)
        assert PACK.extract(text, style=style, mode="strict") is None, (style, answer)
        assert PACK.extract(text, style=style, mode="flexible") is None, (style, answer)
        for gold in ("70000", "72000", "80000", "10", "12000", "5", "13"):
            assert correctness(text, gold, style) == 0.0


@pytest.mark.parametrize(
    ("answer", "gold"),
    [  # a unit that changes the magnitude is wrong, never "close"
        ("7천", "70000"),
        ("7만", "7000"),
        ("72만", "72000"),
        ("7.2천", "72000"),
        ("150만", "150"),
        ("1억 5천", "150000000"),
        ("3억 5천", "350000000"),
        ("7만 2천", "7.2"),
        ("7만 원", "7"),  # "몇 만 원" asked in units of 10,000: the literal value is 70,000
        ("열다섯", "50"),
        ("오십", "15"),
    ],
)
def test_wrong_magnitude_is_wrong(answer: str, gold: str) -> None:
    assert not answers_match(answer, gold)
    assert correctness(f"<answer>{answer}</answer>", gold) == 0.0


@pytest.mark.parametrize(
    "answer",
    [  # the question's own numbers and units echoed beside the result
        "1만 2천 원짜리 3권, 3만 6천 원",
        "3권 × 1만 2천 원 = 3만 6천 원",
        "3권",
        "1만 2천 원",
        "4시간 30분",
        "3만 6천 원 (책 3권)",
    ],
)
def test_units_echoed_from_the_question_do_not_fool_the_grader(answer: str) -> None:
    """Question: 한 권에 1만 2천 원인 책을 3권 샀습니다. 모두 얼마입니까? (36,000)."""
    text = f"<answer>{answer}</answer>"
    assert correctness(text, "36000") == 0.0
    assert PACK.grade(text, {"answer": "36000"}, style="xml", extract="flexible").correct is False


def test_counters_after_the_number_are_not_read_as_numbers() -> None:
    assert PACK.extract("<answer>3만 6천 원 (36,000원)</answer>", style="xml") == "36000"
    assert PACK.extract("<answer>피자 3조각</answer>", style="xml") == "3"
    assert PACK.extract("<answer>3개만</answer>", style="xml") == "3"


def test_korean_gold_answers_are_read_too() -> None:
    assert parse_gold("계산하면 7만 2천 원입니다.\n#### 7만 2천") == "72000"
    assert PACK.is_correct("72000", {"answer": "7만 2천"})
    assert correctness("<answer>72,000</answer>", "#### 7만 2천") == 1.0


def test_the_evaluations_answer_field_holds_the_value() -> None:
    rows = [
        {"id": "k1", "question": "q", "answer": "72000"},
        {"id": "k2", "question": "q", "answer": "72000"},
    ]
    completions = ["<answer>7만 2천 원</answer>", "<answer>약 7만 2천 원</answer>"]
    for extract in ("strict", "flexible"):
        summary, samples = score_rows(PACK, rows, completions, style="xml", extract=extract)
        assert [s["extracted"] for s in samples] == ["72000", None]
        assert [s["correct"] for s in samples] == [True, False]
        assert summary["accuracy"]["strict"]["value"] == summary["accuracy"]["flexible"]["value"] == 0.5


def test_english_hedges_and_answers_read_as_before() -> None:
    """The Korean reader adds nothing to English text: the plain grader's readings stand."""
    assert PACK.extract("<answer>about 18</answer>", style="xml") == "18"
    assert PACK.extract("<answer>17 or 18</answer>", style="xml") is None
    assert PACK.extract("She makes 9 * 2 = $18.\n#### 18", style="xml", mode="flexible") == "18"
