"""The ko-grammar answer parser (format reward and splitter in one) on varied, realistic and hostile answers."""

from __future__ import annotations

import pytest

from evaluator.domains.ko_grammar.answer import (
    format_answer,
    has_batchim,
    last_hangul,
    normalize_sentence,
    parse_answer,
    subject_particle,
)
from evaluator.domains.ko_grammar.sources import synthetic_pool

REASON = "의존 명사는 앞말과 띄어 쓴다."

# (answer, ok under strict, sentence read strictly, reason read strictly)
CASES: list[tuple[str, bool, str | None, str]] = [
    ('"너도 할 수 있다."가 옳다. ' + REASON, True, "너도 할 수 있다.", REASON),
    ('"가을에 나뭇잎"이 옳다. 사이시옷을 적는다.', True, "가을에 나뭇잎", "사이시옷을 적는다."),
    ('“오늘은 왠지 기분이 좋다.”가 옳다. 왜인지의 준말이다.', True, "오늘은 왠지 기분이 좋다.", "왜인지의 준말이다."),
    ('  "이제 가도 돼요." 가 옳다.  되어의 준말이다.', True, "이제 가도 돼요.", "되어의 준말이다."),
    ('"2024년"이 옳다. 숫자 뒤 단위는 붙여 쓸 수 있다.', True, "2024년", "숫자 뒤 단위는 붙여 쓸 수 있다."),
    # the rule reads the last Hangul syllable (털), whatever Latin letters follow it
    ('"디지털 TV"이 옳다. 외래어 표기법에 따른다.', True, "디지털 TV", "외래어 표기법에 따른다."),
    ('"디지털 TV"가 옳다. 외래어 표기법에 따른다.', False, "디지털 TV", "외래어 표기법에 따른다."),
    ('"생일 케이크!"가 옳다.\n외래어 표기법에 따른다.', True, "생일 케이크!", "외래어 표기법에 따른다."),
    # particle disagrees with the last syllable's 받침
    ('"너도 할 수 있다."이 옳다. ' + REASON, False, "너도 할 수 있다.", REASON),
    ('"가을에 나뭇잎"가 옳다. 사이시옷.', False, "가을에 나뭇잎", "사이시옷."),
    # no reason, no full stop, no particle, wrong order
    ('"너도 할 수 있다."가 옳다.', False, "너도 할 수 있다.", ""),
    ('"너도 할 수 있다."가 옳다 ' + REASON, False, "너도 할 수 있다.", REASON),
    ('"너도 할 수 있다." 옳다. ' + REASON, False, None, ""),
    ("정답은 " + '"너도 할 수 있다."가 옳다. ' + REASON, False, None, ""),
    ("너도 할 수 있다가 옳다. " + REASON, False, None, ""),
    ('"TV"가 옳다. 영어만 있다.', False, "TV", "영어만 있다."),
    ('""가 옳다. 비었다.', False, None, ""),
    ('"너도 할 수 있다.가 옳다. 따옴표가 하나뿐이다.', False, None, ""),
    # hedges: two sentences claimed right
    ('"할 수 있다."가 옳다. 또는 "할수 있다."가 옳다.', False, "할 수 있다.", '또는 "할수 있다."가 옳다.'),
    ("", False, None, ""),
    ("<think>고민</think>" + '"할 수 있다."가 옳다. ' + REASON, False, None, ""),
]


@pytest.mark.parametrize(("text", "ok", "sentence", "reason"), CASES)
def test_strict_reading(text: str, ok: bool, sentence: str | None, reason: str) -> None:
    parsed = parse_answer(text)
    assert parsed.ok is ok, parsed.problems
    assert parsed.sentence == sentence
    assert parsed.reason == reason
    if not ok:
        assert parsed.problems


def test_flexible_reading_finds_an_answer_after_other_text() -> None:
    text = "<think>고민</think>\n정답: " + '"할 수 있다."가 옳다. ' + REASON
    assert parse_answer(text).sentence is None
    flexible = parse_answer(text, strict=False)
    assert flexible.sentence == "할 수 있다." and flexible.reason == REASON and flexible.ok


def test_particle_problem_says_which_particle() -> None:
    parsed = parse_answer('"나뭇잎"가 옳다. 이유.')
    assert any("받침" in p and "이" in p for p in parsed.problems)


@pytest.mark.parametrize(
    ("ch", "batchim"), [("각", True), ("가", False), ("닭", True), ("의", False), ("힣", True), ("다", False), ("율", True)]
)
def test_batchim(ch: str, batchim: bool) -> None:
    assert has_batchim(ch) is batchim


def test_batchim_refuses_non_hangul() -> None:
    with pytest.raises(ValueError):
        has_batchim("A")
    with pytest.raises(ValueError):
        has_batchim("ㄱ")  # a jamo, not a syllable


def test_last_hangul_skips_punctuation_digits_and_latin() -> None:
    assert last_hangul("생일 케이크 2개!!") == "개"
    assert last_hangul("디지털 TV.") == "털"
    assert last_hangul("abc") is None
    assert subject_particle("디지털 TV.") == "이" and subject_particle("커피") == "가"


def test_format_answer_round_trips_every_synthetic_item() -> None:
    for item in synthetic_pool():
        parsed = parse_answer(item.answer)
        assert parsed.ok, (item.id, parsed.problems)
        assert format_answer(parsed.sentence or "", parsed.reason) == item.answer
    with pytest.raises(ValueError):
        format_answer("OK", "이유")


def test_whitespace_normalisation_keeps_spacing_that_matters() -> None:
    assert normalize_sentence("  할 수   있다. ") == "할 수 있다."
    assert normalize_sentence("할 수\t있다.") == "할 수 있다."
    assert normalize_sentence("할수 있다.") != normalize_sentence("할 수 있다.")
