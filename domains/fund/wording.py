"""The Korean wording several rooms write the same way: window names, statuses, a fund's standing in its
peer group, 운용기간. Reports, prompts, reference answers, the reward's checks and the engine's reasons all
quote these, so a fund reads alike in each (and a checker finds in a rationale exactly what a report wrote).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from evaluator.domains.fund.types import ERROR, NOT_RATED, OK
from evaluator.methodology.rubric import PERIODS

__all__ = ["PERIOD_KO", "STATUS_KO", "bottom_percent", "main_period", "standing_ko", "years_ko"]

PERIOD_KO = {"1y": "1년", "3y": "3년", "5y": "5년", "10y": "10년"}
STATUS_KO = {OK: "평가", NOT_RATED: "평가 제외", ERROR: "데이터 오류"}


class _Windows(Protocol):
    """What :func:`main_period` reads of a fund's result."""

    period_weights: Mapping[str, float]
    metrics: Mapping[str, Any]


def years_ko(years: float) -> str:
    """운용기간 as written beside a limit: cut (never rounded up) to one decimal, so 2.97 years reads 2.9 next
    to "3년 미만" and 0.98 reads 0.9 next to "1년에도 못 미칩니다" (a limit of whole or tenth years is never
    crossed by the display)."""
    return f"{math.floor(years * 10.0) / 10.0:.1f}"


def bottom_percent(top_percent: float, size: int) -> float:
    """The "하위" share of a fund ranked ``top_percent`` in a group of ``size``: 100·(size − rank + 1)/size."""
    return 100.0 - top_percent + (100.0 / size if size else 0.0)


def standing_ko(top_percent: float, size: int, bottom: float | None = None) -> str:
    """Where a fund stands in its peer group, in Korean: ``상위 20.0%`` in the upper half, ``하위 20.0%`` below it
    (the last of 45 funds is ``하위 2.2%``, never ``상위 100.0%``). ``bottom``: the engine's 하위 share by the
    share-class weights (default: every fund weighs 1)."""
    if top_percent <= 50.0:
        return f"상위 {top_percent:.1f}%"
    return f"하위 {bottom if bottom is not None else bottom_percent(top_percent, size):.1f}%"


def main_period(result: _Windows) -> str | None:
    """The window a narrative quotes: the one with the largest weight, else the longest with numbers."""
    if result.period_weights:
        return max(result.period_weights, key=lambda p: (result.period_weights[p], PERIODS[p]))
    with_numbers = [p for p in PERIODS if result.metrics.get(p)]
    return with_numbers[-1] if with_numbers else None
