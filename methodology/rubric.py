"""Fund-rating rubrics: the metric vocabulary, loading, and validation that explains every problem.

A rubric is the machine-readable form of a rating methodology: peer groups (유형), eligibility rules,
period weights, weighted quantitative criteria built from known metrics, optional analyst-scored
qualitative criteria, and the grade bands (1등급 = best). The JSON Schema (``rubric.schema.json``) checks
the shape; :func:`rubric_problems` adds the checks a schema cannot express (weights adding up to 100,
known metrics, all five bands present) and words every problem for an analyst, not a programmer.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.schemas import load_schema, schema_problems

SCHEMA_PACKAGE = "evaluator.methodology"
SCHEMA_FILE = "rubric.schema.json"
WEIGHT_TOTAL = 100.0
_TOLERANCE = 1e-6


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
QUALITATIVE_LEVELS = ("1", "2", "3", "4", "5")


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


def _fmt(x: float) -> str:
    return f"{x:g}"


def _sum_problem(where: str, weights: list[Any]) -> str | None:
    numbers = [w for w in weights if isinstance(w, (int, float)) and not isinstance(w, bool)]
    if len(numbers) != len(weights):
        return None  # the schema already reported the non-number
    total = float(sum(numbers))
    if abs(total - WEIGHT_TOTAL) > _TOLERANCE:
        return f"{where} add up to {_fmt(total)}, not 100"
    return None


def _text_problems(doc: Any, where: str = "") -> list[str]:
    """Text must survive a PDF round trip: one line, no leading/trailing or repeated spaces."""
    problems: list[str] = []
    if isinstance(doc, str):
        if doc != " ".join(doc.split()):
            problems.append(
                f"text at {where or '(document root)'} has a line break, a tab, or leading/trailing/repeated "
                "spaces; the methodology PDF cannot keep them, so write it as one line with single spaces"
            )
    elif isinstance(doc, Mapping):
        for key, value in doc.items():
            problems += _text_problems(value, f"{where}/{key}" if where else str(key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            problems += _text_problems(value, f"{where}/{i}" if where else str(i))
    return problems


def _metric_problems(criteria: list[Any]) -> list[str]:
    problems: list[str] = []
    seen_ids: set[str] = set()
    for i, crit in enumerate(criteria):
        if not isinstance(crit, Mapping):
            continue
        cid = str(crit.get("id", i))
        if cid in seen_ids:
            problems.append(f"criterion id {cid!r} is used twice; each criterion needs its own id")
        seen_ids.add(cid)
        metrics = crit.get("metrics")
        if not isinstance(metrics, list):
            continue
        seen_metrics: set[str] = set()
        for m in metrics:
            if not isinstance(m, Mapping) or not isinstance(m.get("metric"), str):
                continue
            name = m["metric"]
            if name not in METRICS:
                close = difflib.get_close_matches(name, list(METRICS), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(
                    f"criterion {cid!r} uses unknown metric {name!r}{hint}; known metrics: {', '.join(METRICS)}"
                )
            elif METRICS[name].direction is None:
                problems.append(
                    f"criterion {cid!r} uses metric {name!r}, which is reported but has no better/worse "
                    "direction, so it cannot be scored"
                )
            if name in seen_metrics:
                problems.append(f"criterion {cid!r} lists metric {name!r} twice")
            seen_metrics.add(name)
        sum_problem = _sum_problem(
            f"metric weights of criterion {cid!r}",
            [m.get("weight") for m in metrics if isinstance(m, Mapping)],
        )
        if sum_problem:
            problems.append(sum_problem)
    weights = [c.get("weight") for c in criteria if isinstance(c, Mapping)]
    sum_problem = _sum_problem("criteria weights", weights)
    if sum_problem:
        problems.append(sum_problem)
    return problems


def _period_problems(rules: list[Any], eligibility: Any) -> list[str]:
    problems: list[str] = []
    minimums: list[float] = []
    for rule in rules:
        if not isinstance(rule, Mapping) or not isinstance(rule.get("weights"), Mapping):
            continue
        years = rule.get("min_history_years")
        if not isinstance(years, (int, float)):
            continue
        minimums.append(float(years))
        label = f"period weights for funds with at least {_fmt(years)} years of history"
        for period in rule["weights"]:
            if period not in PERIODS:
                problems.append(f"{label} name unknown period {period!r}; use one of {', '.join(PERIODS)}")
            elif PERIODS[period] > years:
                problems.append(f"{label} use the {period} window, longer than that history")
        sum_problem = _sum_problem(label, list(rule["weights"].values()))
        if sum_problem:
            problems.append(sum_problem)
    if len(set(minimums)) != len(minimums):
        problems.append("two period-weight rules have the same minimum history; each needs its own")
    if minimums != sorted(minimums):
        problems.append("period-weight rules must be listed from the shortest minimum history to the longest")
    min_history = eligibility.get("min_history_years") if isinstance(eligibility, Mapping) else None
    if minimums and isinstance(min_history, (int, float)) and min(minimums) > min_history:
        problems.append(
            f"no period weights for funds with {_fmt(min_history)} to {_fmt(min(minimums))} years of history, "
            f"although eligibility admits funds from {_fmt(min_history)} years"
        )
    overrides = eligibility.get("overrides") if isinstance(eligibility, Mapping) else None
    for group, rules in (overrides or {}).items() if isinstance(overrides, Mapping) else ():
        years = rules.get("min_history_years") if isinstance(rules, Mapping) else None
        if minimums and isinstance(years, (int, float)) and not isinstance(years, bool) and min(minimums) > years:
            problems.append(
                f"the eligibility override for 유형 {group!r} admits funds from {_fmt(years)} years of history, "
                f"but the first period-weight rule starts at {_fmt(min(minimums))} years, so such a fund "
                "would have no period weights"
            )
    return problems


OVERRIDABLE = {"min_history_years": "최소 운용기간(년)", "min_set_amount_krw": "최소 설정액(원)"}
"""Eligibility thresholds that may differ by 유형 (the peer-group size rule is one rule for every group)."""


def _override_problems(eligibility: Any, peer_groups: Any) -> list[str]:
    """Per-유형 eligibility overrides, each problem in words an analyst can act on."""
    if not isinstance(eligibility, Mapping) or not isinstance(eligibility.get("overrides"), Mapping):
        return []
    groups = [g for g in peer_groups if isinstance(g, str)] if isinstance(peer_groups, list) else []
    problems: list[str] = []
    for group, rules in eligibility["overrides"].items():
        label = f"the eligibility override for 유형 {group!r}"
        if group not in groups:
            close = difflib.get_close_matches(group, groups, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            problems.append(
                f"{label} names a 유형 that is not one of the peer groups ({', '.join(groups)}), so it would "
                f"never apply.{hint}"
            )
        if not isinstance(rules, Mapping):
            continue
        if not rules:
            problems.append(f"{label} sets no threshold; remove it or set {' or '.join(OVERRIDABLE)}")
        for key, value in rules.items():
            if key == "min_peer_group_size":
                problems.append(
                    f"{label} sets min_peer_group_size, but the minimum number of funds is one rule for every "
                    f"peer group; only {' and '.join(OVERRIDABLE)} can differ by 유형"
                )
            elif key not in OVERRIDABLE:
                problems.append(
                    f"{label} sets {key!r}, which is not an eligibility threshold; use {' or '.join(OVERRIDABLE)}"
                )
            elif key in eligibility and value == eligibility[key]:
                problems.append(
                    f"{label} sets {key} to {value!r}, the same as the general rule; remove it or change it"
                )
    return problems


def _band_problems(bands: list[Any]) -> list[str]:
    problems: list[str] = []
    grades = [b.get("grade") for b in bands if isinstance(b, Mapping)]
    for g in GRADES:
        if g not in grades:
            problems.append(f"missing grade band for {g}등급; bands must cover 1등급 to 5등급 once each")
    dupes = sorted({g for g in grades if grades.count(g) > 1 and isinstance(g, int)})
    for g in dupes:
        problems.append(f"grade band {g}등급 is listed {grades.count(g)} times")
    if not dupes and all(isinstance(g, int) for g in grades) and grades != sorted(grades):
        problems.append("grade bands must be listed from 1등급 (best) to 5등급")
    sum_problem = _sum_problem("grade band shares", [b.get("share") for b in bands if isinstance(b, Mapping)])
    if sum_problem:
        problems.append(sum_problem)
    return problems


def _qualitative_problems(qual: Any) -> list[str]:
    if not isinstance(qual, Mapping) or not isinstance(qual.get("criteria"), list):
        return []
    problems: list[str] = []
    ids: list[str] = []
    for crit in qual["criteria"]:
        if not isinstance(crit, Mapping):
            continue
        cid = str(crit.get("id"))
        ids.append(cid)
        levels = crit.get("levels")
        if isinstance(levels, Mapping) and levels:
            missing = [lv for lv in QUALITATIVE_LEVELS if lv not in levels]
            if missing:
                problems.append(
                    f"qualitative criterion {cid!r} has no description for level(s) {', '.join(missing)} of the 1–5 scale"
                )
    if len(set(ids)) != len(ids):
        problems.append("two qualitative criteria share an id; each needs its own")
    sum_problem = _sum_problem(
        "qualitative criteria weights", [c.get("weight") for c in qual["criteria"] if isinstance(c, Mapping)]
    )
    if sum_problem:
        problems.append(sum_problem)
    return problems


def rubric_problems(doc: Any) -> list[str]:
    """Every reason ``doc`` is not a usable rubric (schema shape first, then meaning); empty when valid."""
    problems = schema_problems(doc, rubric_schema())
    if not isinstance(doc, Mapping):
        return problems
    if isinstance(doc.get("criteria"), list):
        problems += _metric_problems(doc["criteria"])
    if isinstance(doc.get("period_weights"), list):
        problems += _period_problems(doc["period_weights"], doc.get("eligibility"))
    problems += _override_problems(doc.get("eligibility"), doc.get("peer_groups"))
    if isinstance(doc.get("grade_bands"), list):
        problems += _band_problems(doc["grade_bands"])
    problems += _qualitative_problems(doc.get("qualitative"))
    problems += _text_problems(doc)
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


def scored_metrics(rubric: Mapping[str, Any]) -> list[str]:
    """Metrics that some criterion scores, in vocabulary order."""
    used = {m["metric"] for c in rubric["criteria"] for m in c["metrics"]}
    return [m for m in METRICS if m in used]


def eligibility_for(rubric: Mapping[str, Any], group: str | None) -> dict[str, float]:
    """The eligibility thresholds for funds of 유형 ``group``: the general rule with that 유형's overrides."""
    rules = rubric["eligibility"]
    out = {key: float(rules[key]) for key in OVERRIDABLE}
    out.update({k: float(v) for k, v in (rules.get("overrides") or {}).get(group, {}).items() if k in OVERRIDABLE})
    return out
