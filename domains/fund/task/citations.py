"""What a Korean rationale claims: the figures it cites, what each refers to, and direction claims.

The rationale is cut into sentences (``.`` not between digits, ``!``, ``?``, ``;``, line breaks) and
clauses (commas). A subject — a metric (``변동성``), a criterion (``위험조정수익률``) or the overall
result (``종합``) — and a window (``3년``) stay in force until another one is named or the sentence
ends; a qualifier (``평균``, ``백분위``, ``상위``) applies to the next number only. Each number is read with its unit (``%``, ``%p``, ``점``, ``개``, ``위``, ``년``,
``등급``). Direction words (높/낮/크/작, 우수/부진 …) become claims about the subject they follow — or
about the subject right after an attributive form (``높은 변동성``) — and a ``평균`` between the two
makes the claim a comparison with the 유형 average. :mod:`evaluator.domains.fund.task.verify` checks all of it against the facts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

METRIC_ALIASES: dict[str, tuple[str, ...]] = {
    "annualized_return": ("연환산 수익률", "연환산수익률", "연 수익률", "수익률"),
    "annualized_volatility": ("연환산 변동성", "연환산변동성", "변동성", "표준편차"),
    "sharpe": ("샤프지수", "샤프 지수", "샤프비율", "샤프 비율", "샤프"),
    "sortino": ("소르티노 비율", "소르티노비율", "소르티노 지수", "소르티노"),
    "mrar": ("MRAR",),
    "max_drawdown": ("최대낙폭", "최대 낙폭", "최대손실폭", "최대 손실폭", "MDD", "낙폭"),
    "calmar": ("칼마 비율", "칼마비율", "칼마"),
    "beta": ("베타",),
    "jensen_alpha": ("젠센 알파", "젠센알파", "젠슨 알파", "알파"),
    "tracking_error": ("추적오차", "추적 오차"),
    "information_ratio": ("정보비율", "정보 비율"),
}
OVERALL_WORDS = ("종합 점수", "종합점수", "최종 점수", "종합", "총점", "전반적", "전반")
PERIOD_YEARS = {1: "1y", 3: "3y", 5: "5y", 10: "10y"}
QUALIFIERS = {
    "평균": "mean",
    "백분위": "pct",
    "상위": "top",
    "하위": "bottom",
    "가중치": "weight",
    "비중": "weight",
}

HIGH = r"높|많|상회|웃돌|큰|크고|크다|크며|크게|커서|커졌|컸|큽니다"
LOW = r"낮|적은|적고|적다|적으며|적습니다|하회|밑돌|작은|작고|작다|작으며|작아|작았|작습니다"
GOOD = r"우수|양호|뛰어|좋|탁월|강점|선방|개선"
POOR = r"부진|미흡|저조|나쁘|나빠|나쁜|열위|약점|취약|악화|뒤처|떨어"
_ADJECTIVE = re.compile(f"(?P<high>{HIGH})|(?P<low>{LOW})|(?P<good>{GOOD})|(?P<poor>{POOR})")
_ATTRIBUTIVE_END = re.compile(r"^[가-힣]*?(?:은|는|ㄴ|한|난|인|운|쁜|큰)\s*$")
_NEGATION = re.compile(r"^[가-힣]{0,3}지\s*(?:않|못)")

_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<sign>[-+−△▲▼]?)\s?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?"
    r"\s*(?P<unit>%p|%포인트|%|퍼센트|점(?!수)|개(?![선월])|위(?!험)|년|등급|배|bp|월|일)?"
)
_DATE = re.compile(r"\d{4}\s*[-./년]\s*\d{1,2}\s*[-./월]\s*\d{1,2}\s*일?")
DATE_UNITS = ("월", "일")
_SENTENCE = re.compile(r"(?<!\d)\.|\.(?!\d)|[!?;\n。]")
_CLAUSE = re.compile(r",|，|、")
_SAME_PERIOD = re.compile(r"같은 기간|동 ?기간|이 기간|해당 기간")
"""A sentence that refers back to the previous sentence's window (``같은 기간 변동성은 …``)."""
_PROMPT_PAIR = re.compile(
    r"(?P<lead>\d%?\s*)\(\s*(?P<mean>[-−]?\d+(?:\.\d+)?%?)\s*,\s*(?P<pct>\d+(?:\.\d+)?)\s*\)"
)
"""The prompt's ``값 (유형 평균, 백분위)`` notation, read as ``값 (평균 … 백분위 …)``."""

INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier)|disregard|system prompt|"
    r"you are now|as an ai|reward|grader|score (?:this|me)|give (?:this|me) (?:a )?(?:full|max|perfect)|"
    r"<\|im_(?:start|end)\|>|\b(?:system|assistant)\s*:|judge|evaluator|verifier|"
    r"채점자|검증기|심사자|무시하|지시(?:를|는|사항)|지침을|시스템 프롬프트|프롬프트|채점|평가자|"
    r"만점|최고 점수를|점수를 주|보상(?:을|값을?)\s*(?:주|최대|높)|심사위원",
    re.I,
)


@dataclass(frozen=True)
class Figure:
    """One number as the rationale cites it, with what it refers to."""

    text: str
    value: float
    decimals: int
    unit: str
    subject: str | None
    """``metric:<name>``, ``criterion:<id>``, ``overall`` or None."""
    period: str | None
    qualifier: str | None
    clause: str


@dataclass(frozen=True)
class Claim:
    """A direction claim: ``high``/``low`` (size) or ``good``/``poor`` (quality) about a subject."""

    subject: str
    direction: str
    versus_mean: bool
    period: str | None
    text: str


@dataclass(frozen=True)
class Reading:
    figures: tuple[Figure, ...]
    claims: tuple[Claim, ...]
    grade_mentions: tuple[int, ...]
    """Grades the rationale concludes (``N등급입니다``, ``N등급이 적정``, ``등급은 N`` …; not band descriptions)."""
    injection: bool


@lru_cache(maxsize=64)
def _subject_pattern(criteria: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One alternation over every subject word, longest first, so ``위험조정수익률`` beats ``수익률``."""
    words: dict[str, str] = {}
    for metric, aliases in METRIC_ALIASES.items():
        for alias in aliases:
            words[alias] = f"metric:{metric}"
    for cid, name in criteria:
        words[name] = f"criterion:{cid}"
        words[name.replace(" ", "")] = f"criterion:{cid}"
    for word in OVERALL_WORDS:
        words[word] = "overall"
    words.update({k: f"qualifier:{v}" for k, v in QUALIFIERS.items()})
    ordered = sorted(words, key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in ordered), re.I), {w.lower(): s for w, s in words.items()}


_GRADE_MENTION = re.compile(
    r"(?<![0-9.])([1-5])\s*등급(?!\s*(?:[은는이가]\s*)?(?:상위|하위|기준|이상|이하|까지|구간|경계|컷|비중))"
)
"""``3등급입니다``, ``3등급이 적정합니다``, ``3등급.`` — but not a band's description (``1등급은 상위 10%까지``)."""
_GRADE_FIELD_TEXT = re.compile(r"등급\s*(?:[:은는]|으로는)\s*([1-5])(?![0-9.%])")


def sentences(text: str) -> list[str]:
    """The rationale cut into sentences (the same cut the figures and claims are read with)."""
    return _SENTENCE.split(text)


def grade_conclusions(text: str) -> tuple[int, ...]:
    """Grades the text concludes, in order: every ``N등급`` that does not describe a band, and ``등급은 N``."""
    found = [(m.start(), int(m.group(1))) for m in _GRADE_MENTION.finditer(text)]
    found += [(m.start(), int(m.group(1))) for m in _GRADE_FIELD_TEXT.finditer(text)]
    return tuple(g for _, g in sorted(found))


def _number(match: re.Match[str]) -> tuple[float, int]:
    digits = match.group("int").replace(",", "")
    dec = match.group("dec") or ""
    value = float(f"{digits}.{dec}" if dec else digits)
    if match.group("sign") in ("-", "−", "△", "▼"):
        value = -value
    return value, len(dec)


def _claims_in(
    clause: str, subjects: Sequence[tuple[int, int, str]], carried: str | None, period: str | None
) -> list[Claim]:
    """Direction words in a clause, each tied to the subject it describes (``carried``: the sentence's
    subject so far, for a clause that names none before its direction word)."""
    claims: list[Claim] = []
    for adj in _ADJECTIVE.finditer(clause):
        direction = adj.lastgroup or ""
        after = clause[adj.end() :]
        if _NEGATION.match(after):
            direction = {"high": "low", "low": "high", "good": "poor", "poor": "good"}[direction]
        word_end = adj.end() + len(re.match(r"[가-힣]*", after).group(0))  # type: ignore[union-attr]
        following = [s for s in subjects if s[0] >= word_end]
        preceding = [s for s in subjects if s[1] <= adj.start()]
        attributive = _ATTRIBUTIVE_END.match(clause[adj.start() : word_end] + " ")
        if attributive and following and clause[word_end : following[0][0]].strip() == "":
            target, between = following[0][2], clause[: adj.start()]
        elif preceding:
            target, between = preceding[-1][2], clause[preceding[-1][1] : adj.start()]
        elif carried is not None:
            target, between = carried, clause[: adj.start()]
        else:
            continue
        claims.append(Claim(target, direction, "평균" in between, period, clause.strip()))
    return claims


def read_rationale(text: str, criteria: Mapping[str, str], names: Sequence[str] = ()) -> Reading:
    """Figures, claims and concluded grades of a rationale; ``criteria`` maps criterion id → Korean name.

    ``names`` (the fund's name, company, code) are blanked first, so ``코스피200`` in a fund name is not
    read as a figure; dates (``2025-06-30``, ``2025년 6월 30일``) are never figures either.
    """
    for name in sorted((n for n in names if n), key=len, reverse=True):
        text = text.replace(name, " " * len(name))
    text = _GRADE_FIELD_TEXT.sub(r" \1등급", text)  # 등급은 3 → 3등급: a grade, not a figure
    text = _PROMPT_PAIR.sub(r"\g<lead>(평균 \g<mean> 백분위 \g<pct>)", text)
    return _read(_DATE.sub(lambda m: " " * len(m.group(0)), text), tuple(sorted(criteria.items())))


@lru_cache(maxsize=4096)
def _read(text: str, criteria: tuple[tuple[str, str], ...]) -> Reading:
    pattern, kinds = _subject_pattern(criteria)
    figures: list[Figure] = []
    claims: list[Claim] = []
    last_period: str | None = None
    for sentence in _SENTENCE.split(text):
        period: str | None = last_period if _SAME_PERIOD.search(sentence) else None
        subject: str | None = None
        for clause in _CLAUSE.split(sentence):
            events: list[tuple[int, int, str, re.Match[str] | None]] = [
                (m.start(), m.end(), kinds[m.group(0).lower()], None) for m in pattern.finditer(clause)
            ]
            events += [(m.start(), m.end(), "number", m) for m in _NUMBER.finditer(clause)]
            events.sort(key=lambda e: (e[0], e[2] == "number"))
            carried = subject
            qualifier: str | None = None
            subjects: list[tuple[int, int, str]] = []
            for start, end, kind, match in events:
                if kind.startswith(("metric:", "criterion:")) or kind == "overall":
                    subject = kind
                    subjects.append((start, end, kind))
                elif kind.startswith("qualifier:"):
                    qualifier = kind.split(":", 1)[1]
                elif match is not None:
                    value, decimals = _number(match)
                    unit = match.group("unit") or ""
                    if unit == "년" and decimals == 0 and int(abs(value)) in PERIOD_YEARS and value > 0:
                        period = PERIOD_YEARS[int(value)]
                        continue
                    if unit == "등급" or unit in DATE_UNITS or (unit == "년" and value >= 1900):
                        qualifier = None
                        continue
                    figures.append(
                        Figure(
                            match.group(0).strip(), value, decimals, unit, subject, period, qualifier, clause
                        )
                    )
                    qualifier = None
            claims += _claims_in(clause, subjects, carried, period)
        last_period = period or last_period
    return Reading(
        figures=tuple(figures),
        claims=tuple(claims),
        grade_mentions=grade_conclusions(text),
        injection=bool(INJECTION.search(text)),
    )
