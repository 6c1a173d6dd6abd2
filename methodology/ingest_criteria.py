"""Criteria and weights from a firm's table (or, failing that, its prose), never guessing a weight.

Raw weights may be percent, points (배점) or fractions, per metric or per category, with the
quantitative/qualitative split given as group weights. They are accepted only when they add up to
100, to 1, or to a total the document states (합계 row, ``배점 100점``), within each category or with
the categories weighted; anything else is a problem that shows the numbers.


The items themselves are read by :mod:`~evaluator.methodology.ingest_items`.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_items import GROUP_LABEL, Item
from evaluator.methodology.ingest_lexicon import metric_id
from evaluator.methodology.ingest_text import compact

_TOL = 1e-6
_QUAL = re.compile(r"(?<![가-힣])(?:정성|비계량)|qualitative", re.IGNORECASE)  # not 위험조정성과, 안정성
_IDS = (
    ("위험조정", "risk_adjusted"), ("risk-adj", "risk_adjusted"), ("riskadj", "risk_adjusted"),
    ("수익", "return"), ("return", "return"), ("위험", "risk"), ("risk", "risk"), ("벤치마크", "benchmark"),
    ("benchmark", "benchmark"), ("운용철학", "philosophy"), ("철학", "philosophy"), ("조직", "organization"),
    ("인력", "organization"), ("리스크관리", "risk_management"), ("프로세스", "process"), ("process", "process"),
)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _TOL * max(1.0, abs(b))


def _fits(total: float, allowed: list[float]) -> bool:
    return any(_close(total, a) for a in allowed)


def _cid(name: str, used: set[str], fallback: str) -> str:
    c = compact(name)
    base = next((cid for key, cid in _IDS if key in c), fallback)
    cid, n = base, 2
    while cid in used:
        cid, n = f"{base}_{n}", n + 1
    used.add(cid)
    return cid


def _fmt(values: list[float]) -> str:
    return " + ".join(f"{v:g}" for v in values) + f" = {sum(values):g}"


def build_criteria(items: list[Item], totals: list[float], source: str, f: Findings) -> dict[str, Any] | None:
    """Criteria (and the qualitative part) from items, or ``None`` with problems recorded in ``f``."""
    resolved = _resolve(items, source, f)
    if resolved is None:
        return None
    cats = _categories(resolved, source, f)
    if cats is None or not _within_weights(cats, source, f):
        return None
    return _weigh_groups(cats, totals, source, f)


def _resolve(items: list[Item], source: str, f: Findings) -> list[tuple[Item, str | None, bool]] | None:
    """Each item's metric id and whether it is qualitative; None (problems in ``f``) when a metric is
    unknown or ambiguous, or nothing is weighted."""
    for it in items:  # a 구분 column holding 정량평가/정성평가 is the group, not a criterion
        if not it.group and GROUP_LABEL.match(compact(it.category)):
            it.group, it.category = it.category, ""
    resolved = []
    for it in items:
        mid, why = metric_id(it.metric)
        qual = bool(_QUAL.search(it.group) or _QUAL.search(it.category))
        if mid is None and not qual:
            kind = "ambiguous" if why and "family" in why else "unknown"
            f.problem(kind, "criteria", f"metric {it.metric!r} ({it.where}): {why}", [source])
        resolved.append((it, mid, qual))
    if f.has_problem("criteria"):
        return None
    if all(it.m_w is None and it.cat_w is None for it in items):
        f.problem(
            "missing",
            "criteria weights",
            f"the criteria ({', '.join(it.metric for it in items)}) have no weights; ingest does not guess them",
            [source, "sentences stating weights (e.g. '샤프지수 40%')"],
        )
        return None
    return resolved


def _categories(
    resolved: list[tuple[Item, str | None, bool]], source: str, f: Findings
) -> dict[Any, dict[str, Any]] | None:
    """(group, category) → its weight, metrics and items; None when a category's weights are missing."""
    quant = [(it, mid) for it, mid, q in resolved if not q]
    qual = [(it, mid) for it, mid, q in resolved if q]
    # category → (weight raw, [(metric, name, weight raw, item)])
    cats: dict[Any, dict[str, Any]] = {}
    for it, mid in quant + qual:
        key = (it.group, it.category or it.metric)
        entry = cats.setdefault(key, {"w": it.cat_w, "metrics": [], "qual": (it, mid) in qual, "item": it})
        entry["metrics"].append((mid, it))
    for (_, cname), entry in cats.items():
        missing = [it.metric for _, it in entry["metrics"] if it.m_w is None]
        if entry["w"] is None and missing:
            f.problem("missing", "criteria weights", f"{cname!r} ({entry['item'].where}) has no weight", [source])
        elif missing and len(entry["metrics"]) > 1:
            f.problem(
                "missing",
                "criteria weights",
                f"category {cname!r} lists {', '.join(missing)} without weights; ingest does not split "
                f"{cname!r}'s weight equally",
                [source],
            )
    return None if f.has_problem("criteria") else cats


def _within_weights(cats: dict[Any, dict[str, Any]], source: str, f: Findings) -> bool:
    """Each category's weight (stated, or the sum of its metrics' points) and its metrics' shares within it."""
    for (_, cname), entry in cats.items():
        ws = [it.m_w[0] for _, it in entry["metrics"] if it.m_w is not None]
        if entry["w"] is None:
            entry["w"] = (sum(ws), "")
            entry["within"] = [w / sum(ws) * 100 for w in ws]
        elif len(entry["metrics"]) == 1 and not ws:
            entry["within"] = [100.0]
        else:
            s, cw = sum(ws), entry["w"][0]
            if _fits(s, [100.0, 1.0]) or _close(s, cw):
                entry["within"] = [w / s * 100 for w in ws]
            else:
                f.problem(
                    "invalid",
                    "criteria weights",
                    f"the metric weights of {cname!r} ({_fmt(ws)}) add up to neither 100, 1, nor the category's "
                    f"weight {cw:g} ({entry['item'].where})",
                    [source],
                )
    return not f.has_problem("criteria")


def _weigh_groups(
    cats: dict[Any, dict[str, Any]], totals: list[float], source: str, f: Findings
) -> dict[str, Any] | None:
    """The quantitative and qualitative parts' shares: the category weights must add up to 100, 1 or a total
    the document states (or each part to 100 with the split stated on the group labels)."""
    allowed = [100.0, 1.0, *totals]
    groups: dict[bool, float] = {}
    for entry in cats.values():
        groups[entry["qual"]] = groups.get(entry["qual"], 0.0) + entry["w"][0]
    total = sum(groups.values())
    group_w = _group_weights(cats)
    if not _fits(total, allowed):
        per_group = {g: [e["w"][0] for e in cats.values() if e["qual"] == g] for g in groups}
        within_each = all(_fits(sum(v), [100.0, 1.0]) for v in per_group.values())
        if within_each and len(groups) == 2 and group_w and _fits(sum(group_w.values()), allowed):
            qual_share = group_w[True] / sum(group_w.values()) * 100
            return _assemble(cats, groups, total, f, qual_share)
        if not (within_each and len(groups) == 1):
            f.problem(
                "invalid",
                "criteria weights",
                f"the weights read ({_fmt([e['w'][0] for e in cats.values()])}) add up to neither 100, 1, nor a "
                f"total the document states ({', '.join(f'{t:g}' for t in totals) or 'none found'})",
                [source, "합계 rows and sentences such as '배점 100점'"],
            )
            return None
    if group_w and len(groups) == 2:
        stated, read = group_w[True] / sum(group_w.values()) * 100, groups[True] / total * 100
        if abs(stated - read) > 1e-6:
            f.problem(
                "invalid",
                "criteria weights",
                f"the group labels give the qualitative part {stated:g}% but its criteria add up to {read:g}% of "
                f"the total ({_fmt(list(groups.values()))})",
                [source],
            )
            return None
    return _assemble(cats, groups, total, f, None)


def _group_weights(cats: dict[Any, dict[str, Any]]) -> dict[bool, float]:
    """``정량평가(80%)`` / ``정성평가 20점`` in the group column: the two parts' weights."""
    out: dict[bool, float] = {}
    for (group, _), entry in cats.items():
        m = re.search(r"(\d+(?:\.\d+)?)\s*(?:%|점)", group)
        if m:
            out[entry["qual"]] = float(m.group(1))
    return out if len(out) == 2 else {}


def _assemble(
    cats: dict[Any, dict[str, Any]], groups: dict[bool, float], total: float, f: Findings, qual_share: float | None
) -> dict[str, Any]:
    used: set[str] = set()
    out: dict[str, Any] = {"criteria": []}
    quant_total = groups.get(False, 0.0)
    qual_total = groups.get(True, 0.0)
    qual_criteria = []
    for n, ((_, cname), entry) in enumerate(cats.items(), 1):
        metrics = entry["metrics"]
        if entry["qual"]:
            for _, it in metrics:
                w = it.m_w[0] if it.m_w is not None else entry["w"][0]
                crit = {"id": _cid(it.metric, used, f"qualitative_{n}"), "name": it.metric, "weight": w / qual_total * 100}
                qual_criteria.append(crit)
                f.found(
                    f"qualitative.criteria[{crit['id']}].weight", crit["weight"], it.page, it.weight_where or it.where, it.metric
                )
            continue
        single = len(metrics) == 1 and not entry["item"].category
        name = metrics[0][1].metric if single else cname
        cid = metrics[0][0] if single and metrics[0][0] not in used else _cid(name, used, f"criterion_{n}")
        used.add(cid)
        weight = entry["w"][0] / quant_total * 100
        crit = {"id": cid, "name": name, "weight": weight, "metrics": []}
        for (mid, it), w in zip(metrics, entry["within"], strict=True):
            crit["metrics"].append({"metric": mid, "weight": w})
            f.found(f"criteria[{cid}].metrics[{mid}].weight", w, it.page, it.weight_where or it.where, it.metric)
        first = entry["item"]
        if first.cat_where:
            source = first.cat_where
        else:
            raw = " + ".join(f"{it.m_w[0]:g}" for _, it in metrics if it.m_w is not None)
            source = f"sum of its metrics' weights ({raw}) out of {quant_total:g}, {first.where.split(', row')[0]}"
        f.found(f"criteria[{cid}].weight", weight, first.page, source, name)
        out["criteria"].append(crit)
    if qual_criteria:
        share = qual_share if qual_share is not None else qual_total / total * 100
        out["qualitative"] = {"weight": share, "criteria": qual_criteria}
        f.found("qualitative.weight", out["qualitative"]["weight"], None, "criteria rows marked 정성", "")
    return out

