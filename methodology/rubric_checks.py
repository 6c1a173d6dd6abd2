"""The checks a JSON Schema cannot express: weights adding up to 100, known metrics, periods a history can
reach, overrides of real peer groups, bands, qualitative levels, the company rule, one-line text. Every
problem is worded for an analyst, not a programmer."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from evaluator.methodology.rubric_scale import band_problems, grade_scale
from evaluator.methodology.rubric_vocab import (
    METRICS,
    OVERRIDABLE,
    PERIODS,
    QUALITATIVE_LEVELS,
    TOLERANCE,
    WEIGHT_TOTAL,
)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _sum_problem(where: str, weights: list[Any]) -> str | None:
    numbers = [w for w in weights if isinstance(w, (int, float)) and not isinstance(w, bool)]
    if len(numbers) != len(weights):
        return None  # the schema already reported the non-number
    total = float(sum(numbers))
    if abs(total - WEIGHT_TOTAL) > TOLERANCE:
        return f"{where} add up to {_fmt(total)}, not 100"
    return None


def text_problems(doc: Any, where: str = "") -> list[str]:
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
            problems += text_problems(value, f"{where}/{key}" if where else str(key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            problems += text_problems(value, f"{where}/{i}" if where else str(i))
    return problems


def metric_problems(criteria: list[Any]) -> list[str]:
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


def period_problems(rules: list[Any], eligibility: Any) -> list[str]:
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
        if (
            minimums
            and isinstance(years, (int, float))
            and not isinstance(years, bool)
            and min(minimums) > years
        ):
            problems.append(
                f"the eligibility override for 유형 {group!r} admits funds from {_fmt(years)} years of history, "
                f"but the first period-weight rule starts at {_fmt(min(minimums))} years, so such a fund "
                "would have no period weights"
            )
    return problems


def override_problems(eligibility: Any, peer_groups: Any) -> list[str]:
    """Per-유형 eligibility overrides, each problem in words an analyst can act on."""
    if not isinstance(eligibility, Mapping) or not isinstance(eligibility.get("overrides"), Mapping):
        return []
    groups = [g for g in peer_groups if isinstance(g, str)] if isinstance(peer_groups, list) else []
    problems: list[str] = []
    for group, rules in eligibility["overrides"].items():
        label = f"the eligibility override for 유형 {group!r}"
        if peer_groups is not None and group not in groups:  # no list: every 유형 in the data is a group
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


def grade_band_problems(bands: list[Any], doc: Mapping[str, Any]) -> list[str]:
    problems = band_problems(bands, grade_scale(doc if isinstance(doc.get("grade_scale"), Mapping) else None))
    sum_problem = _sum_problem("grade band shares", [b.get("share") for b in bands if isinstance(b, Mapping)])
    if sum_problem:
        problems.append(sum_problem)
    return problems


def per_type_problems(doc: Mapping[str, Any]) -> list[str]:
    """Per-유형 criteria follow the rules of the general ones and name a peer group."""
    by_type = doc.get("criteria_by_type")
    if not isinstance(by_type, Mapping):
        return []
    groups = doc.get("peer_groups")
    problems: list[str] = []
    for group, criteria in by_type.items():
        if isinstance(groups, list) and group not in groups:
            problems.append(
                f"the criteria for 유형 {group!r} name a 유형 that is not one of the peer groups "
                f"({', '.join(str(g) for g in groups)}), so they would never apply"
            )
        if isinstance(criteria, list):
            problems += [f"for 유형 {group!r}: {p}" for p in metric_problems(criteria)]
    return problems


def qualitative_problems(qual: Any) -> list[str]:
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


def company_problems(rule: Any) -> list[str]:
    """The 운용사 rule: weights and pillar weights add up to 100, bands run 1…N once each and add up to 100."""
    if not isinstance(rule, Mapping):
        return []
    problems: list[str] = []
    weights = rule.get("weights")
    if isinstance(weights, Mapping):
        problem = _sum_problem("company_rating weights (quantitative + qualitative)", list(weights.values()))
        if problem:
            problems.append(problem)
    pillars = [p for p in rule.get("pillars") or [] if isinstance(p, Mapping)]
    qual_weight = weights.get("qualitative") if isinstance(weights, Mapping) else None
    if isinstance(qual_weight, (int, float)) and qual_weight > 0 and not pillars:
        problems.append(
            f"company_rating gives qualitative pillars {_fmt(qual_weight)}% of the score but lists no pillars"
        )
    if rule.get("require_qualitative") and not (isinstance(qual_weight, (int, float)) and qual_weight > 0):
        problems.append("company_rating requires qualitative pillars but gives them no weight")
    if pillars:
        ids = [str(p.get("id")) for p in pillars]
        names = [str(p.get("name")) for p in pillars]
        if len(set(ids)) != len(ids) or len(set(names)) != len(names):
            problems.append("two company_rating pillars share an id or a name; each needs its own")
        problem = _sum_problem("company_rating pillar weights", [p.get("weight") for p in pillars])
        if problem:
            problems.append(problem)
        for p in pillars:
            levels = p.get("levels")
            if isinstance(levels, Mapping) and levels:
                missing = [lv for lv in QUALITATIVE_LEVELS if lv not in levels]
                if missing:
                    problems.append(
                        f"company_rating pillar {p.get('id')!r} has no description for level(s) {', '.join(missing)}"
                    )
    bands = [b for b in rule.get("bands") or [] if isinstance(b, Mapping)]
    grades = [b.get("grade") for b in bands]
    if bands and grades != list(range(1, len(bands) + 1)):
        problems.append(
            f"company_rating bands must be listed as grades 1 (best) to {len(bands)}, once each, in order; "
            f"they are {grades}"
        )
    if bands:
        problem = _sum_problem("company_rating band shares", [b.get("share") for b in bands])
        if problem:
            problems.append(problem)
    return problems
