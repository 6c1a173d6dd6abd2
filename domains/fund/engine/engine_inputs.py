"""What the engine reads beside the NAV matrix, the metadata and the rubric, and how it treats what it finds:
one typed value, so a caller (the loader's :func:`~evaluator.domains.fund.engine.evaluate.evaluate_loaded`, the
grade history, a test) names each input once and an unknown one is refused by name."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from evaluator.domains.fund.engine.metrics import KnownMetrics
from evaluator.domains.fund.types import Adjustments


@dataclass(frozen=True)
class EngineInputs:
    """``benchmark``: index levels, one Series for all funds or a DataFrame with one column per 유형.
    ``risk_free``: a constant annual rate or a Series of annual rates by date. ``as_of``: the evaluation date
    (default: the last NAV date). ``issues``: data problems a loader found per fund (duplicate dates, …); those
    funds get status ``error``. ``adjustments``: the loader's 결산 distribution columns; ``calendar``: the
    market calendar it found. ``allow_unadjusted``: grade unadjusted 결산 resets with a warning instead of
    refusing them. ``known_metrics``: window metrics a grade history already measured for this date (see
    :class:`~evaluator.domains.fund.engine.metrics.KnownMetrics`). ``outliers``: what a NAV typo
    (:mod:`~evaluator.domains.fund.engine.outliers`) does: ``error`` (default), ``repair`` (read as missing)
    or ``keep`` (graded, with a warning)."""

    benchmark: pd.Series | pd.DataFrame | None = None
    risk_free: float | pd.Series = 0.0
    as_of: dt.date | None = None
    issues: Mapping[str, Sequence[str]] | None = None
    adjustments: Adjustments | None = None
    calendar: pd.DatetimeIndex | None = None
    allow_unadjusted: bool = False
    known_metrics: KnownMetrics | None = None
    outliers: str = "error"
