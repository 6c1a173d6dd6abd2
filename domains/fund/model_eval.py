"""A trained model's evaluations beside the engine's grades in a batch: prompts, reading answers, disagreements.

``evaluator fund evaluate … --model M`` builds the same prompts the GRPO task trains on (one per rated
fund), generates them in batches (the evaluation harness's generator, called from the CLI), and records
per fund a ``model_evaluation`` (``report.schema.json``) and in ``summary.json`` how often the model
agrees with the engine. The model's grade is read leniently (an answer wrapped in prose still shows its
grade); ``schema_valid`` says whether the answer was exactly one schema-valid JSON object.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.domains.fund.answer import extract_grade, read_answer
from evaluator.domains.fund.facts import universe_facts
from evaluator.domains.fund.prompts import build_messages
from evaluator.domains.fund.results import Evaluation
from evaluator.domains.fund.rewards import (
    consistency_score,
    grade_accuracy_score,
    json_format_score,
    reasoning_quality_score,
)

MAX_COMPLETION_CHARS = 8000
"""A report keeps at most this much of the raw completion (the rest is cut, and says so)."""


def fund_prompts(
    evaluation: Evaluation,
) -> tuple[list[str], list[list[dict[str, str]]], dict[str, dict[str, Any]]]:
    """(fund codes, chat prompts, facts by code) for every rated fund, in the evaluation's order."""
    facts = universe_facts(evaluation)
    codes = list(facts)
    return codes, [build_messages(facts[c], evaluation.rubric) for c in codes], facts


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def model_evaluation(
    text: str,
    facts: Mapping[str, Any],
    *,
    model: str,
    adapter: str | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """One fund's ``model_evaluation``: what the model said, whether it is valid, how it compares."""
    answer = read_answer(text)
    obj = answer.obj or {}
    grade = extract_grade(text, "flexible")
    engine = int(facts["grade"])
    rationale = obj.get("rationale_ko")
    completion = text if len(text) <= MAX_COMPLETION_CHARS else text[:MAX_COMPLETION_CHARS] + " …(cut)"
    doc: dict[str, Any] = {
        "model": model,
        "adapter": adapter,
        "schema_valid": answer.schema_valid,
        "framing": answer.framing,
        "grade": grade,
        "score": _number(obj.get("score")),
        "rationale_ko": rationale if isinstance(rationale, str) else None,
        "engine_grade": engine,
        "agrees": None if grade is None else grade == engine,
        "grade_difference": None if grade is None else grade - engine,
        "checks": {
            "json_format": json_format_score(text),
            "grade_accuracy": grade_accuracy_score(text, engine),
            "reasoning_quality": reasoning_quality_score(text, dict(facts)),
            "consistency": consistency_score(text, dict(facts)),
        },
        "problems": list(answer.problems[:5]),
        "completion": completion,
    }
    if error:
        doc["error"] = error
    return doc


def model_evaluations(
    codes: Sequence[str],
    texts: Sequence[Sequence[str]],
    facts: Mapping[str, Mapping[str, Any]],
    errors: Mapping[int, str] | None = None,
    *,
    model: str,
    adapter: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Fund code → ``model_evaluation`` (first sample of each prompt); one bad answer never stops the rest."""
    errors = errors or {}
    out: dict[str, dict[str, Any]] = {}
    for i, code in enumerate(codes):
        samples = texts[i] if i < len(texts) else []
        text = samples[0] if samples else ""
        error = errors.get(i)
        try:
            out[code] = model_evaluation(text, facts[code], model=model, adapter=adapter, error=error)
        except Exception as exc:  # a reading failure costs this fund's entry, not the batch
            out[code] = {
                **model_evaluation("", facts[code], model=model, adapter=adapter),
                "completion": text[:MAX_COMPLETION_CHARS],
                "error": f"could not read the answer: {type(exc).__name__}: {exc}",
            }
    return out


def add_model_to_summary(
    summary: dict[str, Any],
    evaluations: Mapping[str, Mapping[str, Any] | None],
    run: Mapping[str, Any],
) -> dict[str, Any]:
    """Add the model's grade per fund and the agreement counts (with every disagreement) to a summary."""
    disagreements = []
    counts = {
        "funds_evaluated": 0,
        "schema_valid": 0,
        "agree": 0,
        "disagree": 0,
        "unreadable": 0,
        "within_one_band": 0,
    }
    for line in summary["funds"]:
        entry = evaluations.get(line["fund_code"])
        line["model_grade"] = entry["grade"] if entry else None
        line["model_agrees"] = entry["agrees"] if entry else None
        if not entry:
            continue
        counts["funds_evaluated"] += 1
        counts["schema_valid"] += bool(entry["schema_valid"])
        if entry["grade"] is None:
            counts["unreadable"] += 1
            reason = "no_readable_grade"
        elif entry["agrees"]:
            counts["agree"] += 1
            counts["within_one_band"] += 1
            continue
        else:
            counts["disagree"] += 1
            counts["within_one_band"] += abs(entry["grade_difference"]) <= 1
            reason = "grade_differs"
        disagreements.append(
            {
                "fund_code": line["fund_code"],
                "file": line["file"],
                "engine_grade": entry["engine_grade"],
                "model_grade": entry["grade"],
                "reason": reason,
            }
        )
    summary["model_evaluation"] = {
        "model": run.get("model"),
        "adapter": run.get("adapter"),
        "generation": dict(run.get("generation") or {}),
        **counts,
        "disagreements": disagreements,
    }
    return summary
