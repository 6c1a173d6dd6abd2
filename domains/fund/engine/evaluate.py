"""One call from a loaded :class:`~evaluator.domains.fund.data.loaders.Universe` to its :class:`Evaluation`.

Every caller that grades a loaded universe (the CLI, the demo, the GRPO task) should come through here, so
none of them forgets the adjustment columns or the market calendar the loader found: a settling fund
graded on raw 기준가격 would look like it lost money every year.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from evaluator.domains.fund.data import Universe
from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.engine.engine_inputs import EngineInputs
from evaluator.domains.fund.engine.metrics import KnownMetrics
from evaluator.domains.fund.engine.results import Evaluation


def evaluate_loaded(
    universe: Universe,
    rubric: Mapping[str, Any] | None = None,
    *,
    as_of: dt.date | None = None,
    allow_unadjusted: bool = False,
    outliers: str = "error",
    known_metrics: KnownMetrics | None = None,
) -> Evaluation:
    """Rate every fund of ``universe`` with everything the loader read (adjustments, calendar, issues).

    ``outliers``: ``error`` (default), ``repair`` or ``keep`` for NAV typos (see ``outliers.py``)."""
    inputs = EngineInputs(
        benchmark=universe.benchmark,
        risk_free=universe.risk_free,
        as_of=as_of,
        issues=universe.issues,
        adjustments=universe.adjustments,
        calendar=universe.calendar,
        allow_unadjusted=allow_unadjusted,
        known_metrics=known_metrics,
        outliers=outliers,
    )
    evaluation = evaluate_universe(universe.navs, universe.meta, rubric, inputs=inputs)
    evaluation.inputs["sources"] = universe.sources
    return evaluation
