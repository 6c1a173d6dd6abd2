"""A trained model's evaluations beside the engine's grades in a batch: the rows, and what a report shows.

``evaluator fund evaluate … --model M`` builds the same rows the GRPO task trains on (one per rated fund,
:func:`fund_rows`), and runs them through the evaluation harness: the harness generates in batches and the
pack's grader (the same one ``eval``/``score`` and training use) grades every answer. This module only turns
each graded sample into the fund's ``model_evaluation`` (``report.schema.json``) and adds to
``summary.json`` how often the model agrees with the engine. It grades nothing itself: the grade is the
pack's flexible reading, ``checks`` are the pack's reward scores, ``schema_valid``/``framing``/``problems``
the grader's details; the stated score and rationale are copied from the answer as written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.domains.fund.engine import Evaluation
from evaluator.domains.fund.task.answer import read_answer
from evaluator.domains.fund.task.dataset import split_of, task_rows
from evaluator.domains.fund.task.facts import universe_facts

MAX_COMPLETION_CHARS = 8000
"""A report keeps at most this much of the raw completion (the rest is cut, and says so)."""
CHECKS = ("json_format", "grade_accuracy", "reasoning_quality", "consistency")


def fund_rows(
    evaluation: Evaluation, split: str = "all"
) -> tuple[list[str], list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(fund codes, task rows for the harness, facts by code) for every rated fund of ``split`` (``all``,
    or the GRPO task's ``train``/``test`` split by fund code), in the evaluation's order."""
    facts = universe_facts(evaluation)
    rows = [r for r in task_rows(evaluation) if split == "all" or split_of(r["fund_code"]) == split]
    return [r["fund_code"] for r in rows], rows, facts


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _grade(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def model_evaluation(
    sample: Mapping[str, Any], facts: Mapping[str, Any], *, model: str, adapter: str | None = None
) -> dict[str, Any]:
    """One fund's ``model_evaluation`` from its graded sample (``samples.jsonl`` layout)."""
    text = str(sample.get("completion") or "")
    details = sample.get("details") or {}
    obj = read_answer(text).obj or {}
    grade = _grade(sample.get("extracted_flexible"))
    engine = int(facts["grade"])
    rationale = obj.get("rationale_ko")
    completion = text if len(text) <= MAX_COMPLETION_CHARS else text[:MAX_COMPLETION_CHARS] + " …(cut)"
    scores = sample.get("scores") or {}
    doc: dict[str, Any] = {
        "model": model,
        "adapter": adapter,
        "schema_valid": bool(details.get("schema_valid", False)),
        "framing": details.get("framing") or "none",
        "grade": grade,
        "score": _number(obj.get("score")),
        "rationale_ko": rationale if isinstance(rationale, str) else None,
        "engine_grade": engine,
        "agrees": None if grade is None else grade == engine,
        "grade_difference": None if grade is None else grade - engine,
        "checks": {name: float(scores.get(name) or 0.0) for name in CHECKS},
        "problems": list(details.get("problems") or [])[:5],
        "completion": completion,
    }
    if sample.get("error"):
        doc["error"] = str(sample["error"])
    return doc


def model_evaluations(
    codes: Sequence[str],
    samples: Sequence[Mapping[str, Any]],
    facts: Mapping[str, Mapping[str, Any]],
    *,
    model: str,
    adapter: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Fund code → ``model_evaluation`` from the harness's graded samples (the first sample of each row)."""
    first: dict[int, Mapping[str, Any]] = {}
    for sample in samples:
        first.setdefault(int(sample["index"]), sample)
    out: dict[str, dict[str, Any]] = {}
    for i, code in enumerate(codes):
        sample = first.get(i) or {"completion": "", "error": "no graded answer"}
        out[code] = model_evaluation(sample, facts[code], model=model, adapter=adapter)
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
        "split": run.get("split", "all"),
        "generation": dict(run.get("generation") or {}),
        **counts,
        "disagreements": disagreements,
    }
    return summary
