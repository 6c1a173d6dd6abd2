"""The table layout a methodology PDF uses: the contract between :mod:`pdf_render` and :mod:`pdf_ingest`.

Every rubric value lives in a table cell (pdfplumber reads table cells exactly; wrapped prose it does
not), and each table is recognised by its header row. Prose in the PDF is generated from the rubric and
only explains it; reading this layout back never reads prose. (A firm's own layout is read by
:mod:`ingest_firm` instead.)
"""

from __future__ import annotations

import re

FONT = "NanumGothic"
"""The Hangul TrueType font embedded (as a subset) in every rendered methodology, so it looks the same on a
machine without Korean fonts; the file ships with the ``koreanize-matplotlib`` package."""
FONT_FILE = "NanumGothic.ttf"
NO_LEVEL = "-"
"""Level cell of a qualitative criterion whose 1–5 scale has no descriptions."""

DOC_TABLE = ("문서 항목", "내용")
ELIGIBILITY_TABLE = ("평가 대상 기준", "기준값")
PEER_TABLE = ("순번", "동류그룹(유형)")
OVERRIDE_TABLE = ("유형", "유형별 평가 대상 기준", "기준값")
PERIOD_TABLE = ("최소 운용기간(년)", "평가 기간", "기간 가중치(%)")
CRITERIA_TABLE = ("평가항목 ID", "평가항목", "항목 가중치(%)", "지표", "지표명", "지표 가중치(%)")
QUALITATIVE_TABLE = ("정성항목 ID", "정성항목", "정성항목 가중치(%)", "점수", "수준 설명")
BANDS_TABLE = ("등급", "등급명", "비중(%)", "누적 상위(%)")
REWARDS_TABLE = ("보상", "보상 가중치", "설명(영문)", "설명(한국어)")
TYPE_CRITERIA_TABLE = ("유형", *CRITERIA_TABLE)
COMPANY_TABLE = ("운용사 평가 기준", "운용사 기준값")
COMPANY_PILLAR_TABLE = ("운용사 정성항목 ID", "운용사 정성항목", "운용사 정성항목 가중치(%)", "점수", "수준 설명")
COMPANY_BANDS_TABLE = ("운용사 등급", "운용사 등급명", "운용사 등급 비중(%)", "운용사 누적 상위(%)")

DOC_KEYS = {
    "domain": "도메인",
    "name": "방법론명",
    "version": "버전",
    "description": "설명",
    "default_style": "기본 출력 형식",
    "qualitative_weight": "정성평가 비중(%)",
    "grade_scale": "등급 체계",
    "provisional": "가등급 규칙",
    "peer_groups": "동류그룹 기준",
}
SETTING_KEYS = {
    "grade_scale": ("grades", "best", "style"),
    "provisional": ("min_history_years", "max_history_years", "window", "label_prefix"),
}
"""Document-table rows holding a small object as ``key=value, …`` (numbers as numbers, the rest as text)."""
PEER_GROUPS_FROM_DATA = "데이터의 모든 유형"
"""The 동류그룹 기준 cell of a rubric without a peer-group list: every 유형 in the data is a peer group."""
ELIGIBILITY_KEYS = {
    "min_history_years": "최소 운용기간(년)",
    "min_set_amount_krw": "최소 설정액(원)",
    "min_peer_group_size": "최소 동류그룹 펀드 수",
}
COMPANY_KEYS = {
    "min_funds": "최소 평가 펀드 수",
    "size_field": "가중 기준",
    "quantitative": "계량 비중(%)",
    "qualitative": "정성 비중(%)",
    "require_qualitative": "정성평가 필수",
}
YES_NO = {True: "예", False: "아니오"}

TABLE_NAMES = {
    DOC_TABLE: "the document table (문서 항목 | 내용)",
    ELIGIBILITY_TABLE: "the eligibility table (평가 대상 기준 | 기준값)",
    PEER_TABLE: "the peer-group table (순번 | 동류그룹(유형))",
    OVERRIDE_TABLE: "the per-유형 eligibility table (유형 | 유형별 평가 대상 기준 | 기준값)",
    PERIOD_TABLE: "the period-weight table (최소 운용기간(년) | 평가 기간 | 기간 가중치(%))",
    CRITERIA_TABLE: "the criteria/weights table (평가항목 ID | 평가항목 | 항목 가중치(%) | 지표 | 지표명 | 지표 가중치(%))",
    QUALITATIVE_TABLE: "the qualitative table (정성항목 ID | … | 수준 설명)",
    BANDS_TABLE: "the grade-band table (등급 | 등급명 | 비중(%) | 누적 상위(%))",
    REWARDS_TABLE: "the reward table (보상 | 보상 가중치 | 설명(영문) | 설명(한국어))",
    TYPE_CRITERIA_TABLE: "the per-유형 criteria table (유형 | 평가항목 ID | … | 지표 가중치(%))",
    COMPANY_TABLE: "the 운용사 rating table (운용사 평가 기준 | 운용사 기준값)",
    COMPANY_PILLAR_TABLE: "the 운용사 pillar table (운용사 정성항목 ID | … | 수준 설명)",
    COMPANY_BANDS_TABLE: "the 운용사 grade-band table (운용사 등급 | 운용사 등급명 | …)",
}
COMPACT_COLUMNS: dict[tuple[str, ...], frozenset[int]] = {
    DOC_TABLE: frozenset(),
    ELIGIBILITY_TABLE: frozenset({1}),
    PEER_TABLE: frozenset({0}),
    OVERRIDE_TABLE: frozenset({2}),
    PERIOD_TABLE: frozenset({0, 2}),
    CRITERIA_TABLE: frozenset({0, 2, 3, 5}),
    QUALITATIVE_TABLE: frozenset({0, 2, 3}),
    BANDS_TABLE: frozenset({0, 2, 3}),
    REWARDS_TABLE: frozenset({0, 1}),
    TYPE_CRITERIA_TABLE: frozenset({1, 3, 4, 6}),
    COMPANY_TABLE: frozenset({1}),
    COMPANY_PILLAR_TABLE: frozenset({0, 2, 3}),
    COMPANY_BANDS_TABLE: frozenset({0, 2, 3}),
}
"""Columns holding identifiers or numbers: a line break inside them is a wrap, never a space."""
REQUIRED_TABLES = (CRITERIA_TABLE, DOC_TABLE, ELIGIBILITY_TABLE, PERIOD_TABLE, BANDS_TABLE)
"""The peer-group table too, unless the document table says the peer groups are the data's 유형."""


def setting_text(values: dict[str, object]) -> str:
    """``grades=5, best=high, style=stars``: one table cell for a small settings object."""
    return ", ".join(f"{k}={format_number(v) if isinstance(v, (int, float)) else v}" for k, v in values.items())


def parse_setting(text: str, keys: tuple[str, ...]) -> dict[str, object]:
    """The inverse of :func:`setting_text`; a key outside ``keys`` or a part without ``=`` is a ValueError."""
    out: dict[str, object] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in keys:
            raise ValueError(f"cannot read {part!r} (expected {', '.join(keys)} as key=value)")
        value = value.strip()
        try:
            out[key.strip()] = parse_number(value)
        except ValueError:
            out[key.strip()] = value
    return out


def header_key(cells: list[str | None] | tuple[str, ...]) -> tuple[str, ...]:
    """A header row compared without whitespace (a wrapped header cell gains a line break)."""
    return tuple(re.sub(r"\s+", "", c or "") for c in cells)


def format_number(value: float | int) -> str:
    """Integers with thousands separators, floats in their shortest exact form (so ints stay ints)."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number here")
    if isinstance(value, int):
        return f"{value:,}"
    return repr(float(value))


def parse_number(text: str) -> int | float:
    """Inverse of :func:`format_number`; raises ValueError naming the text when it is not a number."""
    compact = re.sub(r"[\s,]", "", text)
    if re.fullmatch(r"[+-]?\d+", compact):
        return int(compact)
    try:
        return float(compact)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
