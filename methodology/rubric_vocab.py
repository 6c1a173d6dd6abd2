"""The rubric vocabulary: the metrics the engine computes (and which way is better), the periods, the
default grades, the eligibility thresholds a 유형 may override, and the weight total."""

from __future__ import annotations

from dataclasses import dataclass

WEIGHT_TOTAL = 100.0
TOLERANCE = 1e-6


@dataclass(frozen=True)
class MetricInfo:
    """What a metric is called and which way is better (``None``: reported, never scored)."""

    label_ko: str
    direction: str | None
    needs_benchmark: bool = False


METRICS: dict[str, MetricInfo] = {
    "annualized_return": MetricInfo("연환산 수익률", "higher"),
    "annualized_volatility": MetricInfo("연환산 변동성", "lower"),
    "sharpe": MetricInfo("샤프지수", "higher"),
    "sortino": MetricInfo("소르티노 비율", "higher"),
    "mrar": MetricInfo("MRAR(γ=2)", "higher"),
    "max_drawdown": MetricInfo("최대낙폭", "higher"),
    "calmar": MetricInfo("칼마 비율", "higher"),
    "beta": MetricInfo("베타", None, needs_benchmark=True),
    "jensen_alpha": MetricInfo("젠센 알파", "higher", needs_benchmark=True),
    "tracking_error": MetricInfo("추적오차", "lower", needs_benchmark=True),
    "information_ratio": MetricInfo("정보비율", "higher", needs_benchmark=True),
}
"""Every metric the engine computes, in report order. ``max_drawdown`` is negative: closer to 0 is better."""

PERIODS: dict[str, int] = {"1y": 1, "3y": 3, "5y": 5, "10y": 10}
"""Window name → years. Windows are calendar periods ending at the as-of date."""

GRADES = (1, 2, 3, 4, 5)
"""The default scale's grades; a rubric's own scale is :func:`~evaluator.methodology.rubric_scale.grade_scale`."""
QUALITATIVE_LEVELS = ("1", "2", "3", "4", "5")


OVERRIDABLE = {"min_history_years": "최소 운용기간(년)", "min_set_amount_krw": "최소 설정액(원)"}
"""Eligibility thresholds that may differ by 유형 (the peer-group size rule is one rule for every group)."""
