"""What the synthetic universe is made of: its 유형 (benchmark drift and volatility, tracking error, fees,
names), its 운용회사, the share-class suffixes, the ways a settling fund's file describes its 결산, and the
deliberate defects that make reports show ``error`` and ``not_rated``."""

from __future__ import annotations

from dataclasses import dataclass

END_DATE = "2025-06-30"
COMPANIES = (
    "가람자산운용",
    "누리자산운용",
    "다온투자신탁운용",
    "미르자산운용",
    "바른자산운용",
    "새솔자산운용",
    "한결자산운용",
    "하늘투자운용",
)


@dataclass(frozen=True)
class FundType:
    name: str
    share: float
    drift: float  # benchmark annual drift
    vol: float  # benchmark annual volatility
    te: tuple[float, float]  # fund tracking error range
    fee: tuple[float, float]  # 총보수 (% a year) range
    suffix: str
    themes: tuple[str, ...]


TYPES = (
    FundType(
        "국내주식형",
        0.34,
        0.06,
        0.18,
        (0.03, 0.08),
        (0.6, 1.6),
        "증권투자신탁[주식]",
        ("코리아밸류", "성장주", "배당", "중소형", "코스피200인덱스", "리더스", "퀀트", "가치"),
    ),
    FundType(
        "해외주식형",
        0.20,
        0.08,
        0.15,
        (0.03, 0.07),
        (0.7, 1.8),
        "증권자투자신탁[주식-재간접]",
        ("글로벌성장", "미국S&P500", "차이나", "글로벌배당", "유럽", "아시아", "베트남", "인도"),
    ),
    FundType(
        "채권형",
        0.20,
        0.03,
        0.025,
        (0.004, 0.012),
        (0.15, 0.5),
        "증권투자신탁[채권]",
        ("국공채", "단기채", "우량회사채", "크레딧", "장기국채"),
    ),
    FundType(
        "해외채권형",
        0.10,
        0.035,
        0.05,
        (0.008, 0.02),
        (0.3, 0.8),
        "증권자투자신탁[채권-재간접]",
        ("글로벌채권", "미국채", "이머징채권", "하이일드"),
    ),
    FundType(
        "혼합형",
        0.16,
        0.045,
        0.09,
        (0.015, 0.04),
        (0.4, 1.2),
        "증권투자신탁[주식혼합]",
        ("밸런스", "자산배분", "인컴", "배당혼합", "멀티에셋"),
    ),
)
SETTLE_INFO = ("adjusted", "distribution", "distribution_early", "rate", "none")
"""How a settling fund's file describes its 결산 (cycled over the settling funds)."""
CLASS_SUFFIXES = ("A", "A-e", "C", "C-e", "S", "P")
KOREAN_COLUMNS = (
    "기준일자",
    "펀드코드",
    "펀드명",
    "운용회사",
    "유형",
    "기준가격",
    "설정원본",
    "순자산총액",
    "총보수",
)
BROKEN = (
    "duplicate_date",
    "negative_nav",
    "missing_nav_gap",
    "unsorted_dates",
    "short_history",
    "tiny_fund",
    "unrated_type",
)
