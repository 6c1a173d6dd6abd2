"""TRL reward functions for fund evaluations, every score in 0..1 (the rubric's weights carry the scale).

TRL calls ``fn(prompts=…, completions=…, …, **dataset_columns)``; these read ``grade`` (the engine's
grade; ``answer`` when there is no ``grade``, as in scored prediction files) and ``facts`` (the engine facts as a JSON string, see :mod:`evaluator.domains.fund.task.facts`).

* ``json_format``: 1.0 when the whole completion is one JSON object valid against
  ``evaluation.schema.json``; 0.5 when a valid object sits inside other text; 0.2 when an object parses
  but breaks the schema; 0 when nothing parses.
* ``grade_accuracy``: 1.0 for the engine's grade, 0.5 one band off, 0 otherwise (strict reading).
* ``reasoning_quality`` — the prose only: ``rationale_ko`` reasons from the fund's figures to its grade.
  Figures count when their sentence names the metric (and window) and the engine agrees; unattributed,
  wrong or surplus numbers count against; at least one correct 높다/낮다 comparison with the 유형 average
  or percentile and a concluded grade equal to the answer's are needed for full credit; text copied from
  the prompt, overlong rationales, non-Korean text and text addressing the grader earn nothing
  (:mod:`evaluator.domains.fund.task.reasoning`).
* ``consistency`` — the structured fields only: the stated grade fits the stated score (and stated top
  percent) under the peer group's band table, each criterion judgement fits its own score, and the
  criterion scores and judgements agree with the engine's (:func:`~evaluator.domains.fund.task.verify.consistency_breakdown`).

The content rewards read the strictly framed answer: prose around the JSON costs them all, not only
``json_format``. A row without facts or grade gets None ("not applicable" to TRL).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from evaluator.domains.base import RewardFn, completion_text
from evaluator.domains.fund.task.answer import read_answer
from evaluator.domains.fund.task.reasoning import reasoning_breakdown
from evaluator.domains.fund.task.verify import consistency_breakdown

REWARD_NAMES = ("json_format", "grade_accuracy", "reasoning_quality", "consistency")


@lru_cache(maxsize=512)
def load_facts(text: str) -> dict[str, Any]:
    """A row's facts column, parsed once (shared: read it, never change it)."""
    facts = json.loads(text)
    if not isinstance(facts, dict):
        raise ValueError("the facts column must hold a JSON object")
    return facts


def json_format_score(text: str) -> float:
    answer = read_answer(text)
    if answer.obj is None:
        return 0.0
    if answer.problems:
        return 0.2
    return 1.0 if answer.framing == "strict" else 0.5


def grade_accuracy_score(text: str, engine_grade: Any) -> float | None:
    if engine_grade is None:
        return None
    stated = read_answer(text).grade("strict")
    if stated is None:
        return 0.0
    off = abs(stated - int(engine_grade))
    return 1.0 if off == 0 else 0.5 if off == 1 else 0.0


def reasoning_quality_score(
    text: str, facts: dict[str, Any] | None, facts_text: str | None = None
) -> float | None:
    """``facts_text``: the row's facts string when at hand (it keys the prompt-overlap cache)."""
    if facts is None:
        return None
    return float(reasoning_breakdown(read_answer(text).strict, facts, facts_text)["score"])


def consistency_score(text: str, facts: dict[str, Any] | None) -> float | None:
    if facts is None:
        return None
    return float(consistency_breakdown(read_answer(text).strict, facts)["score"])


def gold_grade(grade: Any, answer: Any = None) -> int | None:
    """The engine's grade of a row: its ``grade`` column, else its ``answer`` (``3`` or ``"3등급"``)."""
    for value in (grade, answer):
        if value is None or isinstance(value, bool):
            continue
        text = str(value).strip().removesuffix("등급").strip()
        if text.isdigit() and 1 <= int(text) <= 5:
            return int(text)
    return None


def _column(kwargs: dict[str, Any], name: str, n: int) -> list[Any]:
    """A dataset column as one value per completion (a scalar is broadcast; missing gives None)."""
    value = kwargs.get(name)
    if value is None or isinstance(value, str | int | float):
        return [value] * n
    values = list(value)
    if len(values) != n:
        raise ValueError(f"reward column {name!r} has {len(values)} values for {n} completions")
    return values


class FundReward:
    """One named reward. A callable class (not a closure) so it pickles; ``__name__`` is what TRL logs."""

    def __init__(self, name: str) -> None:
        if name not in REWARD_NAMES:
            raise ValueError(f"unknown fund reward {name!r}; choose one of {', '.join(REWARD_NAMES)}")
        self.__name__ = name

    def __repr__(self) -> str:
        return f"FundReward({self.__name__!r})"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        texts = [completion_text(c) for c in completions]
        n = len(texts)
        if self.__name__ == "json_format":
            return [json_format_score(t) for t in texts]
        if self.__name__ == "grade_accuracy":
            grades = _column(kwargs, "grade", n)
            answers = _column(kwargs, "answer", n)
            golds = [gold_grade(g, a) for g, a in zip(grades, answers, strict=True)]
            return [grade_accuracy_score(t, g) for t, g in zip(texts, golds, strict=True)]
        raw = [f if isinstance(f, str) else None for f in _column(kwargs, "facts", n)]
        facts = [load_facts(f) if f is not None else None for f in raw]
        if self.__name__ == "reasoning_quality":
            return [reasoning_quality_score(t, f, r) for t, f, r in zip(texts, facts, raw, strict=True)]
        return [consistency_score(t, f) for t, f in zip(texts, facts, strict=True)]


def build_reward_functions() -> dict[str, RewardFn]:
    """Name → TRL reward function, in the rubric's order."""
    return {name: FundReward(name) for name in REWARD_NAMES}
