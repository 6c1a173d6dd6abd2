"""Fund-rating rubrics: loading, and validation that explains every problem (the vocabulary of metrics and
periods is :mod:`~evaluator.methodology.rubric_vocab`, the meaning checks :mod:`~evaluator.methodology.rubric_checks`).

A rubric is the machine-readable form of a rating methodology: peer groups (유형), eligibility rules,
period weights, weighted quantitative criteria built from known metrics, optional analyst-scored
qualitative criteria, and the grade bands (1등급 = best). The JSON Schema (``rubric.schema.json``) checks
the shape; :func:`rubric_problems` adds the checks a schema cannot express (weights adding up to 100,
known metrics, all five bands present) and words every problem for an analyst, not a programmer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluator.core.schemas import load_schema, schema_problems
from evaluator.methodology.rubric_checks import (
    company_problems,
    grade_band_problems,
    metric_problems,
    override_problems,
    per_type_problems,
    period_problems,
    qualitative_problems,
    text_problems,
)
from evaluator.methodology.rubric_scale import provisional_problems
from evaluator.methodology.rubric_vocab import METRICS, OVERRIDABLE, PERIODS

__all__ = [  # the vocabulary's METRICS and PERIODS are read through this module by every floor
    "METRICS",
    "PERIODS",
    "RubricError",
    "criteria_for",
    "eligibility_for",
    "grade_cutoffs",
    "load_rubric",
    "peer_groups_of",
    "rubric_domain",
    "rubric_problems",
    "rubric_schema",
    "scored_metrics",
    "validate_rubric",
]

SCHEMA_PACKAGE = "evaluator.methodology"
SCHEMA_FILE = "rubric.schema.json"
class RubricError(ValueError):
    """A rubric cannot be used; ``problems`` lists every reason in plain words."""

    def __init__(self, what: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{what} is not a valid rubric:\n" + "\n".join(f"  - {p}" for p in problems))


def rubric_schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PACKAGE, SCHEMA_FILE)


def rubric_domain() -> str:
    """The domain every rubric of this schema declares (the schema's ``domain`` constant)."""
    return str(rubric_schema()["properties"]["domain"]["const"])


def rubric_problems(doc: Any) -> list[str]:
    """Every reason ``doc`` is not a usable rubric (schema shape first, then meaning); empty when valid."""
    problems = schema_problems(doc, rubric_schema())
    if not isinstance(doc, Mapping):
        return problems
    if isinstance(doc.get("criteria"), list):
        problems += metric_problems(doc["criteria"])
    if isinstance(doc.get("period_weights"), list):
        problems += period_problems(doc["period_weights"], doc.get("eligibility"))
    problems += override_problems(doc.get("eligibility"), doc.get("peer_groups"))
    if isinstance(doc.get("grade_bands"), list):
        problems += grade_band_problems(doc["grade_bands"], doc)
    problems += per_type_problems(doc)
    problems += provisional_problems(doc.get("provisional"), doc.get("eligibility"), PERIODS)
    problems += qualitative_problems(doc.get("qualitative"))
    problems += company_problems(doc.get("company_rating"))
    problems += text_problems(doc)
    return problems


def validate_rubric(doc: Any, what: str = "rubric") -> dict[str, Any]:
    """Return ``doc`` when it is a usable rubric, else raise :class:`RubricError` listing every problem."""
    problems = rubric_problems(doc)
    if problems:
        raise RubricError(what, problems)
    return dict(doc)


def load_rubric(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a rubric JSON file; unreadable JSON is reported like any other problem."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8-sig"))
    except FileNotFoundError as exc:
        raise RubricError(str(p), [f"file {p} does not exist"]) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RubricError(str(p), [f"{p} is not readable JSON ({exc})"]) from exc
    return validate_rubric(doc, str(p))


def grade_cutoffs(rubric: Mapping[str, Any]) -> list[tuple[int, float]]:
    """(grade, cumulative top-percent upper bound) from 1등급 down, e.g. [(1, 10), (2, 32.5), …, (5, 100)]."""
    total = 0.0
    cutoffs: list[tuple[int, float]] = []
    for band in rubric["grade_bands"]:
        total += float(band["share"])
        cutoffs.append((int(band["grade"]), total))
    return cutoffs


def criteria_for(rubric: Mapping[str, Any], group: str | None) -> list[dict[str, Any]]:
    """The criteria (with metric weights) that score funds of 유형 ``group``: its own, else the general ones."""
    return list((rubric.get("criteria_by_type") or {}).get(group, rubric["criteria"]))


def peer_groups_of(rubric: Mapping[str, Any], types: Any) -> list[str]:
    """The rubric's peer groups, or (none listed) every 유형 that occurs in ``types``, sorted."""
    if rubric.get("peer_groups") is not None:
        return list(rubric["peer_groups"])
    return sorted({str(t) for t in types if t is not None and str(t) != ""})


def scored_metrics(rubric: Mapping[str, Any]) -> list[str]:
    """Metrics that some criterion scores (general or per-유형), in vocabulary order."""
    lists = [rubric["criteria"], *(rubric.get("criteria_by_type") or {}).values()]
    used = {m["metric"] for criteria in lists for c in criteria for m in c["metrics"]}
    return [m for m in METRICS if m in used]


def eligibility_for(rubric: Mapping[str, Any], group: str | None) -> dict[str, float]:
    """The eligibility thresholds for funds of 유형 ``group``: the general rule with that 유형's overrides."""
    rules = rubric["eligibility"]
    out = {key: float(rules[key]) for key in OVERRIDABLE}
    out.update({k: float(v) for k, v in (rules.get("overrides") or {}).get(group, {}).items() if k in OVERRIDABLE})
    return out
