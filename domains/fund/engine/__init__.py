"""The single-date engine: one as-of date's checks, total-return levels, metrics, scores and grades.

It offers the engine (``evaluate_loaded``, ``evaluate_universe`` → an ``Evaluation`` of ``FundResult``), the
peer-group scoring that also rates 운용사 and builds the task's facts (``score_funds``, ``group_percentile`` …),
and the steps and constants (``PARAMETERS``) the grade history reruns over many dates, so a history stays
bit-for-bit equal to evaluating each of its dates on its own.

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.engine.calendar import MajorityByRow, market_calendar, sample
from evaluator.domains.fund.engine.checks import FundFlags, check_matrix
from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.engine.engine_inputs import EngineInputs
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.engine.inputs import (
    benchmark_matrix,
    benchmark_order,
    clean_meta_text,
    fund_codes,
    meta_by_code,
    meta_column,
    qualitative_scores,
    risk_free_rates,
    set_amounts,
)
from evaluator.domains.fund.engine.metrics import (
    KnownMetrics,
    Market,
    compute_metrics,
    dispersion,
    mrar,
    window_start_row,
)
from evaluator.domains.fund.engine.nav_series import series_lines
from evaluator.domains.fund.engine.outliers import MODES, find_outliers, visible
from evaluator.domains.fund.engine.parameters import PARAMETERS, EngineParameters
from evaluator.domains.fund.engine.period_returns import WINDOW_MONTHS, benchmark_names, period_returns
from evaluator.domains.fund.engine.prepare import check_adjusted, fund_matrix
from evaluator.domains.fund.engine.resets import detect_resets
from evaluator.domains.fund.engine.results import Evaluation, FundResult
from evaluator.domains.fund.engine.scoring import (
    assign_grades,
    family_codes,
    group_codes,
    group_percentile,
    score_funds,
    top_percent,
)
from evaluator.domains.fund.engine.series_ends import find_end_typos
from evaluator.domains.fund.engine.total_return import (
    Events,
    align_distributions,
    apply_distributions,
    distribution_events,
    levels_for,
    peer_mean_returns,
)

__all__ = [
    "MODES",
    "PARAMETERS",
    "WINDOW_MONTHS",
    "EngineInputs",
    "EngineParameters",
    "Evaluation",
    "Events",
    "FundFlags",
    "FundResult",
    "KnownMetrics",
    "MajorityByRow",
    "Market",
    "align_distributions",
    "apply_distributions",
    "assign_grades",
    "benchmark_matrix",
    "benchmark_names",
    "benchmark_order",
    "check_adjusted",
    "check_matrix",
    "clean_meta_text",
    "compute_metrics",
    "detect_resets",
    "dispersion",
    "distribution_events",
    "evaluate_loaded",
    "evaluate_universe",
    "family_codes",
    "find_end_typos",
    "find_outliers",
    "fund_codes",
    "fund_matrix",
    "group_codes",
    "group_percentile",
    "levels_for",
    "market_calendar",
    "meta_by_code",
    "meta_column",
    "mrar",
    "peer_mean_returns",
    "period_returns",
    "qualitative_scores",
    "risk_free_rates",
    "sample",
    "score_funds",
    "series_lines",
    "set_amounts",
    "top_percent",
    "visible",
    "window_start_row",
]
