"""The Korean number reader on its own: unit notation, Hangul numerals, hedges, and numbers rendered at random."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evaluator.core.korean_numbers import hangul_numeral, is_hedged, rewrite_units
from evaluator.domains.gsm8k.numbers import single_value


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("7만 2천", "72000"),
        ("7만2천", "72000"),
        ("정답은 7만 2천 원입니다.", "정답은 72000 원입니다."),
        ("150만", "1500000"),
        ("1,500만 원", "15000000 원"),
        ("7.2만", "72000"),
        ("1.5억", "150000000"),
        ("0.5만 원", "5000 원"),
        ("3억 5천만", "350000000"),
        ("3억5천만원", "350000000원"),
        ("1만 2,500", "12500"),
        ("1만 2500원", "12500원"),
        ("7만2000", "72000"),
        ("3천5백만", "35000000"),
        ("3천 500원", "3500원"),
        ("5백", "500"),
        ("2.5천", "2500"),
        ("1억 2345만 6789", "123456789"),
        ("1조 2000억 원", "1200000000000 원"),
        ("-7만", "-70000"),
        ("10만 명", "100000 명"),
        ("5만 권", "50000 권"),
        ("72,000원", "72,000원"),  # no unit: left for the plain reader
        ("피자 3조각", "피자 3조각"),  # 조각 is a counter, not 조 + 각
        ("3개만 남았다", "3개만 남았다"),  # 만 after a counter is the particle "only"
        ("7만 8만", "70000 80000"),  # two numbers stay two
        ("1만 15000", "10000 15000"),  # 15000 cannot fill the places below 만
        ("2천 5000", "2000 5000"),
        ("3만 2.5", "30000 2.5"),
        ("7만~8만", "70000~80000"),
        ("7만 천", "71000"),  # 칠만 천: a bare 천 is one thousand
        ("2천 만 원", "20000000 원"),
        ("3.5만 2.5천", "37500"),
    ],
)
def test_unit_numbers_are_rewritten_as_digits(text: str, rewritten: str) -> None:
    assert rewrite_units(text) == (rewritten, False)


@pytest.mark.parametrize("text", ["12천", "15백", "7만 이천", "7만 오천 원", "5조", "7 만 이천"])
def test_units_that_cannot_be_read_are_flagged(text: str) -> None:
    assert rewrite_units(text).unreadable


def test_a_text_without_units_is_returned_as_it_is() -> None:
    text = "She makes 9 * 2 = $18 every day.\n#### 18"
    assert rewrite_units(text).text is text


@pytest.mark.parametrize(
    "text",
    [
        "약 70000",
        "대략 7만",
        "7만 원 정도",
        "3시간쯤",
        "10여 명",
        "5개 이상",
        "5개 이하",
        "최소 3명",
        "7만 원가량",
        "거의 100",
    ],
)
def test_korean_hedges_are_found(text: str) -> None:
    assert is_hedged(rewrite_units(text).text)


@pytest.mark.parametrize(
    "text", ["72000원", "정답은 72000원입니다", "18명", "3개만", "예약 18건", "18명이 여행을 갔다", "18 여기"]
)
def test_plain_answers_are_not_hedges(text: str) -> None:
    assert not is_hedged(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("칠만 이천", 72000),
        ("칠만이천 원입니다", 72000),
        ("삼억 오천만", 350_000_000),
        ("만 원", 10_000),
        ("천 원", 1000),
        ("백이십", 120),
        ("사십이", 42),
        ("이천", 2000),
        ("일억", 100_000_000),
        ("열다섯", 15),
        ("열다섯 개", 15),
        ("스물두 살이에요", 22),
        ("서른둘", 32),
        ("스무 명", 20),
        ("세 개", 3),
        ("하나", 1),
        ("아흔아홉", 99),
        ("일곱 명입니다.", 7),
        ("열 개", 10),
        ("오십 세", 50),
    ],
)
def test_whole_hangul_numerals(text: str, value: int) -> None:
    assert hangul_numeral(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "이",  # "this", a particle, or two
        "구",  # a district, or nine
        "만",  # "only", or ten thousand
        "천",
        "열",  # heat, a row, or ten
        "세",  # age, the world, or three
        "열세",  # thirteen, or ten years old
        "이십일",  # twenty-one, or twenty days
        "이오",  # two digit syllables: no Sino-Korean number
        "사과",
        "칠만 이천 또는 팔만",
        "스무하나",
        "",
    ],
)
def test_ambiguous_or_non_numeral_hangul_is_not_read(text: str) -> None:
    assert hangul_numeral(text) is None


# --- property checks: any integer, rendered the ways Korean writers render it, reads back as itself ---

_GROUP_UNITS = ("", "만", "억", "조")
_SINO_DIGITS = "_일이삼사오육칠팔구"


def _groups(n: int) -> list[tuple[int, str]]:
    """(part, unit) from the largest unit down, zero parts skipped: 3억 0만 25 → [(3, 억), (25, '')]."""
    parts = []
    for unit in _GROUP_UNITS:
        n, part = divmod(n, 10_000)
        if part:
            parts.append((part, unit))
    return parts[::-1]


def _small(part: int, digit: object) -> str:
    """A part below 10,000 with 천/백/십 (``3천5백2십1``); ``digit`` renders one digit (None drops a 1)."""
    out = ""
    for place, unit in ((1000, "천"), (100, "백"), (10, "십")):
        d = part // place % 10
        if d:
            out += (digit(d) or "") + unit  # type: ignore[operator]
    return out + (digit(part % 10, last=True) if part % 10 else "")  # type: ignore[operator]


def render(n: int, how: str, space: str) -> str:
    groups = _groups(n)
    if how == "digits":  # 7만 2000
        pieces = [f"{part}{unit}" for part, unit in groups]
    elif how == "commas":  # 1,500만 2,500
        pieces = [f"{part:,}{unit}" for part, unit in groups]
    elif how == "subunits":  # 3천5백만
        pieces = [_small(part, lambda d, last=False: str(d)) + unit for part, unit in groups]
    else:  # hangul: 삼천오백만, with the 1 before 십/백/천 (and a leading 만) left out as Koreans write it
        pieces = [
            "만"
            if (part, unit) == (1, "만")
            else _small(part, lambda d, last=False: _SINO_DIGITS[d] if (d != 1 or last) else None) + unit
            for part, unit in groups
        ]
    return space.join(pieces)


_VALUES = st.integers(min_value=1, max_value=10**13 - 1)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.sampled_from(["digits", "commas", "subunits", "hangul"]), st.sampled_from(["", " "]))
def test_rendered_integers_read_back(n: int, how: str, space: str) -> None:
    text = render(n, how, space) + " 원"
    if how == "hangul":
        assume(n >= 10)  # a bare Hangul digit (일 원) is not read
        assert hangul_numeral(text) == n
    else:
        assert single_value(text) == n


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=99_999), st.integers(min_value=1, max_value=9))
def test_decimal_before_a_unit_reads_exactly(tenths: int, scale: int) -> None:
    """``7.2만`` is 72,000 exactly, for every one-decimal coefficient and unit."""
    unit, power = [("만", 4), ("억", 8)][scale % 2]
    coef = Fraction(tenths, 10)
    if coef >= 10_000 or coef.denominator == 1:
        return
    assert single_value(f"{float(coef):g}{unit}") == coef * 10**power


@settings(max_examples=200, deadline=None)
@given(_VALUES, st.sampled_from(["digits", "subunits"]))
def test_one_value_in_both_notations_is_one_answer_and_hedges_are_none(n: int, how: str) -> None:
    korean = render(n, how, " ")
    assert single_value(f"{n:,}원 ({korean} 원)") == n
    assert single_value(f"약 {korean} 원") is None
    assert single_value(f"{korean} 원 정도") is None
    assert single_value(f"{korean} 원 또는 {n + 1:,}원") is None


def _native(n: int, counter: bool) -> str:
    tens = ["", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔"][n // 10]
    ones = ["", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉"][n % 10]
    if counter and n % 10 in (1, 2, 3, 4):
        ones = "_한두세네"[n % 10]
    if counter and n == 20:
        tens = "스무"
    return tens + ones


@pytest.mark.parametrize("n", range(1, 100))
def test_native_numerals_read_back(n: int) -> None:
    assert hangul_numeral(_native(n, counter=True) + " 명") == n
    if n not in (10,):  # 열 alone is not read
        assert hangul_numeral(_native(n, counter=False)) == n
