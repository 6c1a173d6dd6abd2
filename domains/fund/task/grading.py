"""The fund task's declared metrics: what reports, ``compare`` and the experiment runner show with CIs.

One value per graded completion, from the verdict the shared grader already made (the same reward
functions the trainer optimises), so an evaluation figure and a training reward never disagree:

* ``grade_exact`` (headline): the strictly read grade equals the engine's; an unreadable or schema-less
  answer counts as wrong.
* ``within_one``: the grade is at most one band off (unreadable: wrong).
* ``abs_grade_error``: |stated − engine| over readable answers only (an unreadable answer has no error to
  measure; ``grade_exact`` and ``schema_valid`` already count it against the model).
* ``schema_valid``: one strictly framed JSON object satisfying ``evaluation.schema.json``.
* ``reasoning_quality``: the reward of that name (0 for an unreadable answer).
* ``total_reward``: the rubric-weighted sum of the four rewards, on the scale TRL logs as ``reward``
  (10/50/30/10 → at most 100).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluator.domains.base import Metric, Score, Verdict

GRADE_EXACT = Metric(
    "grade_exact", "Strict grade equal to the engine's (an unreadable answer counts as wrong).", headline=True, binary=True
)
WITHIN_ONE = Metric("within_one", "Strict grade at most one band from the engine's (unreadable: wrong).", binary=True)
ABS_ERROR = Metric(
    "abs_grade_error", "|stated − engine grade| over readable answers only.", higher_is_better=False
)
SCHEMA_VALID = Metric("schema_valid", "One strictly framed JSON object valid against evaluation.schema.json.", binary=True)
REASONING = Metric("reasoning_quality", "The reasoning_quality reward (0–1) of the rationale.")
TOTAL = Metric("total_reward", "Rubric-weighted sum of the four rewards (TRL's logged reward; at most 100).")
METRICS = (GRADE_EXACT, WITHIN_ONE, ABS_ERROR, SCHEMA_VALID, REASONING, TOTAL)


def metric_values(
    verdict: Verdict, engine_grade: int | None, weights: Mapping[str, float]
) -> dict[str, float]:
    """The declared metrics of one verdict (``abs_grade_error`` absent when no grade was read)."""
    values: dict[str, float] = {}
    stated = None
    if verdict.extracted is not None:
        try:
            stated = int(verdict.extracted)
        except ValueError:
            stated = None
    error = abs(stated - engine_grade) if stated is not None and engine_grade is not None else None
    values["grade_exact"] = 1.0 if error == 0 else 0.0
    values["within_one"] = 1.0 if error is not None and error <= 1 else 0.0
    if error is not None:
        values["abs_grade_error"] = float(error)
    values["schema_valid"] = 1.0 if verdict.details.get("schema_valid") else 0.0
    values["reasoning_quality"] = float(verdict.scores.get("reasoning_quality") or 0.0)
    values["total_reward"] = sum(float(weights.get(n, 0.0)) * float(s or 0.0) for n, s in verdict.scores.items())
    return values


def fund_score(verdict: Verdict, engine_grade: int | None, weights: Mapping[str, float], problems: Any) -> Score:
    """The grader's Score: the declared metrics, the stated grade, the first schema problem as explanation."""
    first = problems[0] if problems else None
    return Score(value=metric_values(verdict, engine_grade, weights), answer=verdict.extracted, explanation=first)
