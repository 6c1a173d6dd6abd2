"""Numbers written in Korean notation: ``7만 2천``, ``3억 5천만``, ``1.5억``, ``1만 2,500``, ``칠만 이천``, ``열다섯``.

Hand-written because the PyPI readers (``korean-number``, ``korcount``, ``kornum``, ``kr-number``) read
Hangul digits only, not digits mixed with units (``7.2만``, ``1만 2,500``), and skip what they do not know,
so ``약 7만`` and ``12천`` come out as numbers. A grader must refuse those instead.

- :func:`rewrite_units` rewrites each digits-with-units number as plain digits (``7만 2천 원`` →
  ``72000 원``) and says when a unit could not be read (``12천``, ``7만 이천``, a bare ``5조`` that may
  mean five groups): such text commits to no clear number.
- :func:`is_hedged` finds Korean hedges around a number (``약 7만``, ``3개 정도``, ``5만 원 이상``).
- :func:`hangul_numeral` reads an answer written only in Hangul — Sino-Korean with units (``칠만 이천 원``)
  or a native numeral below 100 (``열다섯 개``) — and only when that numeral is the whole answer
  (bare Hangul digits like ``이`` or ``구`` are ordinary words too often).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

SMALL_UNITS = {"십": 10, "백": 100, "천": 1000}
BIG_UNITS = {"만": 10**4, "억": 10**8, "조": 10**12}

_GAP = r"[ \t]?"
_HAS_UNIT = re.compile(r"\d" + _GAP + r"[십백천만억조]")
_START = re.compile(r"(?<![\d.,])\d+(?:,\d{3})*(?:\.\d+)?" + _GAP + r"[십백천만억조]")
_TOKEN = re.compile(
    _GAP + r"(?:(?P<num>\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?P<frac>\.\d+)?|(?P<unit>[십백천만억조]))"
)
# Words after a number that start with a unit syllable but are no unit: 3조각 = three slices.
_NOT_UNIT = re.compile(r"조각|조금|만약|만일|만큼|만들|만나|만족|백분|천천|억울|십자")
_DANGLING = re.compile(_GAP + r"[일이삼사오육칠팔구]?[십백천만억조]")
_CURRENCY_AFTER = re.compile(_GAP + r"(?:원|달러|위안|엔|유로)")

_HEDGE_BEFORE = re.compile(
    r"(?<![가-힣])(?:약|대략|대략적으로|대충|얼추|거의|어림잡아|최소|최소한|최대|적어도|많아야)\s*-?\d"
)
_HEDGE_AFTER = re.compile(
    r"\d\s*(?:[가-힣]{1,2}\s*)?(?:정도|쯤|가량|남짓|내외|안팎|이상|이하|미만|초과|넘게|넘는)|\d여\s*[가-힣]"
)

_SINO = dict(zip("일이삼사오육칠팔구", "123456789", strict=True))
_NATIVE_ONES = {"하나": 1, "둘": 2, "셋": 3, "넷": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_NATIVE_ONES_BEFORE_COUNTER = {"한": 1, "두": 2, "세": 3, "네": 4}
_NATIVE_TENS = {
    "열": 10,
    "스물": 20,
    "서른": 30,
    "마흔": 40,
    "쉰": 50,
    "예순": 60,
    "일흔": 70,
    "여든": 80,
    "아흔": 90,
}
_NATIVE_TENS_BEFORE_COUNTER = {"스무": 20}
_COUNTER_WORDS = (
    "원 달러 명 사람 개 권 시간 분 초 살 세 마리 대 장 병 잔 번 회 일 주 주일 개월 달 년 점 쪽 페이지 송이 켤레 벌 채 곳 칸 상자 봉지 조각 자루 줄 "
    "판 통 캔 컵 그릇 알 포기 쌍 층 군데 가지 배 인분 킬로그램 그램 킬로미터 미터 센티미터 리터 밀리리터 km kg m g L 퍼센트 %"
)
COUNTERS = tuple(_COUNTER_WORDS.split())  # counters and currency that may follow a number
_ONLY_HANGUL = re.compile(r"[가-힣 %A-Za-z]+")
_ENDING = re.compile(r"\s*(?:입니다|이에요|예요)?\s*[.!。]?\s*$")
_SINO_WORD = re.compile(r"[일이삼사오육칠팔구십백천만억조 ]+")


class UnitReading(NamedTuple):
    """``text`` with every unit number in plain digits; ``unreadable`` when a unit could not be read."""

    text: str
    unreadable: bool


class _State:
    """Running value of one unit number while its tokens are read left to right."""

    def __init__(self, implicit_big: bool) -> None:
        self.total = Decimal(0)
        self.group = Decimal(0)
        self.small_limit = 10**4  # the next 천/백/십 must be below this
        self.big_limit = 10**16  # the next 만/억/조 must be below this
        self.used_unit = False
        self.implicit_big = implicit_big  # Hangul: a leading 만/억 means one of it

    def small(self, unit: int, coef: Decimal | None, is_decimal: bool) -> bool:
        coef = Decimal(1) if coef is None else coef
        if unit >= self.small_limit or not 0 < coef < 10 or (is_decimal and self.group):
            return False
        self.group += coef * unit
        self.small_limit = unit
        return True

    def big(self, unit: int, coef: Decimal | None, is_decimal: bool) -> bool:
        first = not self.used_unit and coef is None
        group = self.group + (coef or 0)
        if first and self.implicit_big:
            group = Decimal(1)
        if unit >= self.big_limit or not 0 < group < 10**4 or (is_decimal and self.group):
            return False
        self.total += group * unit
        self.group, self.small_limit, self.big_limit = Decimal(0), 10**4, unit
        return True

    def tail_ok(self, value: Decimal, is_decimal: bool) -> bool:
        """A plain number after the units fills the places below the last unit: ``1만 2,500``, ``3천 500``."""
        return self.used_unit and not is_decimal and value < min(self.small_limit, 10**4)


def _scan(text: str, start: int, implicit_big: bool = False) -> tuple[int, Decimal] | None:
    """The longest well-formed unit number from ``start``: (end, value); None when no unit could be read."""
    state, pos, best = _State(implicit_big), start, None
    pending: tuple[Decimal, bool, int] | None = None  # (value, has decimals, end)
    while (token := _TOKEN.match(text, pos)) is not None:
        if token.group("num") is not None:
            if pending is not None:
                break
            digits = token.group("num").replace(",", "") + (token.group("frac") or "")
            pending = (Decimal(digits), token.group("frac") is not None, token.end())
            pos = token.end()
            continue
        unit = token.group("unit")
        if _NOT_UNIT.match(text, token.start("unit")):
            break
        coef, is_decimal = (pending[0], pending[1]) if pending else (None, False)
        step = state.small if unit in SMALL_UNITS else state.big
        if not step({**SMALL_UNITS, **BIG_UNITS}[unit], coef, is_decimal):
            pending = None  # the number before a unit that does not fit belongs to the next reading
            break
        state.used_unit, pending, pos = True, None, token.end()
        best = (pos, state.total + state.group)
    if pending is not None and state.tail_ok(pending[0], pending[1]):
        best = (pending[2], state.total + state.group + pending[0])
    return best


def _digits(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def rewrite_units(text: str) -> UnitReading:
    """Rewrite each digits-with-units number in ``text`` as plain digits (see the module notes)."""
    if not _HAS_UNIT.search(text):
        return UnitReading(text, False)
    parts, pos, unreadable = [], 0, False
    for match in _START.finditer(text):
        if match.start() < pos:
            continue
        found = _scan(text, match.start())
        if found is None:
            unreadable = unreadable or not _NOT_UNIT.match(text, match.end() - 1)
            continue
        end, value = found
        dangling = _DANGLING.match(text, end)
        if dangling and not _NOT_UNIT.match(text, dangling.end() - 1):
            unreadable = True
        if text[end - 1] == "조" and not _CURRENCY_AFTER.match(text, end):
            unreadable = True  # 5조 may be five groups; 5조 원 is money
        parts += [text[pos : match.start()], _digits(value)]
        pos = end
    parts.append(text[pos:])
    return UnitReading("".join(parts), unreadable)


def is_hedged(text: str) -> bool:
    """True when a Korean hedge qualifies a number: ``약 7만``, ``7만 원 정도``, ``10여 명``, ``5개 이상``."""
    return bool(_HEDGE_BEFORE.search(text) or _HEDGE_AFTER.search(text))


def _sino(word: str) -> int | None:
    if not any(ch in SMALL_UNITS or ch in BIG_UNITS for ch in word):
        return None  # bare Hangul digits (이, 구, 오) are ordinary words too
    if re.search(r"[일이삼사오육칠팔구]\s*[일이삼사오육칠팔구]", word):
        return None  # two digit syllables in a row are no Sino-Korean number
    digits = "".join(_SINO.get(ch, ch) for ch in word)
    found = _scan(digits, 0, implicit_big=True)
    if found is None or found[0] != len(digits) or found[1] != found[1].to_integral_value():
        return None
    return int(found[1])


def _native(word: str, counter: bool) -> int | None:
    tens_table = _NATIVE_TENS | (_NATIVE_TENS_BEFORE_COUNTER if counter else {})
    ones_table = _NATIVE_ONES | (_NATIVE_ONES_BEFORE_COUNTER if counter else {})
    if word == "열" and not counter:
        return None  # 열 alone is also heat, a row, or "open"
    for cut in range(len(word) + 1):
        tens, ones = word[:cut], word[cut:]
        if tens == "스무" and ones:
            continue  # 스무 only stands alone before a counter; 21 is 스물하나
        if (not tens or tens in tens_table) and (not ones or ones in ones_table) and (tens or ones):
            return tens_table.get(tens, 0) + ones_table.get(ones, 0)
    return None


def _numeral(word: str, counter: bool) -> int | None:
    word = word.strip()
    if not word:
        return None
    if _SINO_WORD.fullmatch(word):
        value = _sino(word)
        if value is not None and (counter or len(word.replace(" ", "")) > 1):
            return value
    return _native(word.replace(" ", ""), counter)


def hangul_numeral(text: str) -> int | None:
    """The value of an answer written wholly as one Hangul numeral (optionally a counter and 입니다); else None.

    Every split into numeral and counter is tried; two different readings are ambiguous and give None
    (열세 is thirteen or ten years old, 이십일 twenty-one or twenty days).
    """
    body = _ENDING.sub("", text.strip())
    if not body or not _ONLY_HANGUL.fullmatch(body):
        return None
    readings = {_numeral(body, counter=False)}
    for counter in COUNTERS:
        if body.endswith(counter) and len(body) > len(counter):
            readings.add(_numeral(body[: -len(counter)], counter=True))
    readings.discard(None)
    if readings:
        readings.add(_native(body.replace(" ", ""), counter=True))  # a counter form before an elided counter
        readings.discard(None)
    return readings.pop() if len(readings) == 1 else None
