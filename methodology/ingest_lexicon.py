"""The words firms use: table headers and metric names in Korean, English and abbreviations.

Labels are compared in :func:`~evaluator.methodology.ingest_text.compact` form. A metric name maps to one
engine metric id, or is *ambiguous* (bare 위험조정수익률 is a family of metrics, or Sharpe, never MRAR
unless MRAR is named), or is unknown; ingest reports the last two and never picks for the analyst.
"""

from __future__ import annotations

import re

from evaluator.methodology.ingest_text import compact

HEADER_WORDS: dict[str, tuple[str, ...]] = {
    "category": (
        "구분", "평가항목", "평가요소", "평가부문", "평가영역", "대분류", "중분류", "항목", "평가구분", "부문", "영역",
        "category", "criterion", "criteria", "area", "pillar",
    ),
    "metric": (
        "평가지표", "세부지표", "지표", "세부항목", "세부평가지표", "세부평가항목", "평가지표명", "지표명", "산출지표",
        "metric", "metrics", "indicator", "indicators", "measure", "sub-criteria", "subcriteria",
    ),
    "weight": (
        "가중치", "비중", "배점", "점수", "반영비율", "반영비중", "비율", "weight", "weights", "points", "score",
        "weighting", "배점(점)", "가중치(%)", "비중(%)",
    ),
    "grade": ("등급", "grade", "rating", "평가등급"),
    "band_share": ("비중", "비율", "분포", "등급비율", "share", "distribution", "인원비율", "펀드비율"),
    "band_range": ("구간", "기준", "범위", "순위", "상위", "백분위", "percentile", "range", "rank", "등급기준", "순위구간"),
    "band_cumulative": ("누적", "누적상위", "누적비율", "cumulative", "누적비중"),
    "history": ("운용기간", "설정기간", "경과기간", "trackrecord", "history", "운용년수", "구분"),
}
"""Header cell words by column role (exact compact match, or a header that starts/ends with the word)."""

TOTAL_WORDS = ("합계", "총계", "계", "소계", "합", "total", "sum", "총점")


def header_role(cell: str) -> str | None:
    """Which column a header cell is (``category``/``metric``/``weight``/…), by the lexicon."""
    c = re.sub(r"\(.*?\)|\[.*?\]", "", compact(cell))
    full = compact(cell)
    for role in ("weight", "metric", "category"):
        for word in HEADER_WORDS[role]:
            w = compact(word)
            if c == w or full == w:
                return role
    for role in ("weight", "metric", "category"):
        for word in HEADER_WORDS[role]:
            w = compact(word)
            if len(w) >= 2 and (c.endswith(w) or c.startswith(w)):
                return role
    return None


def is_total(cell: str) -> bool:
    """A total row (``합계``, ``Total``, ``계``) is not a criterion."""
    c = compact(cell)
    return bool(re.fullmatch(r"(?:합계|총계|소계|계|합|total|sum|총점)[\d.,%()점]*", c))


_M = {
    "annualized_return": (
        "연환산수익률", "연평균수익률", "연수익률", "수익률", "연환산 수익률", "기간수익률", "annualized return",
        "annualised return", "annual return", "return", "returns", "cagr",
    ),
    "annualized_volatility": (
        "표준편차", "변동성", "연환산변동성", "연환산표준편차", "수익률표준편차", "volatility", "standard deviation",
        "std dev", "stdev", "annualized volatility",
    ),
    "max_drawdown": ("최대손실률", "최대낙폭", "최대하락률", "최대손실폭", "mdd", "max drawdown", "maximum drawdown"),
    "sharpe": ("샤프지수", "샤프비율", "샤프", "sharpe", "sharpe ratio", "sharpe지수"),
    "sortino": ("소르티노", "소르티노비율", "소르티노지수", "sortino", "sortino ratio"),
    "information_ratio": ("정보비율", "정보지수", "ir", "information ratio"),
    "tracking_error": ("추적오차", "트래킹에러", "te", "tracking error"),
    "jensen_alpha": ("젠센알파", "젠센의알파", "젠센 알파", "jensen's alpha", "jensens alpha", "jensen alpha", "알파", "alpha"),
    "mrar": (
        "mrar", "모닝스타위험조정수익률", "모닝스타 위험조정수익률", "morningstar risk-adjusted return",
        "morningstar risk adjusted return", "mrar(γ=2)", "mrar(2)",
    ),
    "beta": ("베타", "beta"),
    "calmar": ("칼마", "칼마비율", "칼마지수", "calmar", "calmar ratio"),
}
AMBIGUOUS = {
    compact(w): why
    for w, why in (
        ("위험조정수익률", "위험조정수익률 alone names a family of metrics (Sharpe, Sortino, MRAR …); name the metric"),
        ("위험조정성과", "위험조정성과 alone names a family of metrics; name the metric"),
        ("risk-adjusted return", "'risk-adjusted return' alone names a family of metrics; name the metric"),
        ("risk adjusted return", "'risk-adjusted return' alone names a family of metrics; name the metric"),
    )
}

METRIC_ALIASES: dict[str, str] = {compact(alias): mid for mid, aliases in _M.items() for alias in (mid, *aliases)}
"""Every alias, and each engine metric id itself (``annualized_return``), in compact form."""


def metric_id(name: str) -> tuple[str | None, str | None]:
    """(metric id, None) when ``name`` is a known metric; (None, why) when ambiguous or unknown."""
    c = compact(name)
    if c in METRIC_ALIASES:
        return METRIC_ALIASES[c], None
    bare = re.sub(r"\(.*?\)|\[.*?\]", "", c)
    if bare in METRIC_ALIASES:
        return METRIC_ALIASES[bare], None
    inner = re.findall(r"\((.*?)\)", c)  # "정보비율(IR)", "최대낙폭(MDD)"
    ids = {METRIC_ALIASES[i] for i in inner if i in METRIC_ALIASES}
    if len(ids) == 1:
        return ids.pop(), None
    if c in AMBIGUOUS or bare in AMBIGUOUS:
        return None, AMBIGUOUS.get(c) or AMBIGUOUS[bare]
    if re.search(r"[A-Za-z]", name) and re.search(r"[가-힣]", name):  # "Sharpe ratio 샤프지수": either name
        english, korean = (metric_id(re.sub(pattern, " ", name).strip()) for pattern in (r"[가-힣]+", r"[A-Za-z]+"))
        ids = {i for i, _ in (english, korean) if i}
        if len(ids) == 1:
            return ids.pop(), None
        if len(ids) > 1:
            return None, f"{name!r} names two different metrics ({' and '.join(sorted(ids))})"
        return None, english[1] if "family" in (english[1] or "") else korean[1]
    return None, f"{name!r} is not a metric the engine knows"


def _alias_pattern(alias: str) -> str:
    if re.fullmatch(r"[a-z' .\-()γ=0-9]+", alias):
        body = r"\s*".join(re.escape(p) for p in alias.split())
        return rf"(?<![A-Za-z]){body}(?![A-Za-z])"
    return r"\s*".join(re.escape(ch) for ch in alias.replace(" ", ""))


_ALL = sorted({a for aliases in _M.values() for a in aliases} | {"위험조정수익률", "위험조정성과"}, key=len, reverse=True)
METRIC_IN_TEXT = re.compile("|".join(f"(?:{_alias_pattern(a)})" for a in _ALL), re.IGNORECASE)
"""Any metric name (or an ambiguous one) inside free text, longest names first."""
