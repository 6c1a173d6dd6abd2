"""Criteria and weights from a firm's table (or, failing that, its prose), never guessing a weight.

Raw weights may be percent, points (배점) or fractions, per metric or per category, with the
quantitative/qualitative split given as group weights. They are accepted only when they add up to
100, to 1, or to a total the document states (합계 row, ``배점 100점``), within each category or with
the categories weighted; anything else is a problem that shows the numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_lexicon import METRIC_IN_TEXT, header_role, is_total, metric_id
from evaluator.methodology.ingest_tables import Sentence, Table, fill_down
from evaluator.methodology.ingest_text import NumberError, compact, parse_weight

_TOL = 1e-6
_QUAL = re.compile(r"(?<![가-힣])(?:정성|비계량)|qualitative", re.IGNORECASE)  # not 위험조정성과, 안정성
_INCELL = re.compile(r"([^,/(\n]+?)\s*\(\s*(\d+(?:\.\d+)?)\s*(%|점)?\s*\)|([^,/:\n]+?)\s*[:]\s*(\d+(?:\.\d+)?)\s*(%|점)?")
_GROUP_LABEL = re.compile(r"(정량|정성|계량|비계량|quantitative|qualitative)(평가|지표|항목|부문)?(\(|\d|$)", re.I)
_CAT_WEIGHT = re.compile(r"\(\s*(\d+(?:\.\d+)?)\s*(%|점)\s*\)\s*$")
_IDS = (
    ("위험조정", "risk_adjusted"), ("risk-adj", "risk_adjusted"), ("riskadj", "risk_adjusted"),
    ("수익", "return"), ("return", "return"), ("위험", "risk"), ("risk", "risk"), ("벤치마크", "benchmark"),
    ("benchmark", "benchmark"), ("운용철학", "philosophy"), ("철학", "philosophy"), ("조직", "organization"),
    ("인력", "organization"), ("리스크관리", "risk_management"), ("프로세스", "process"), ("process", "process"),
)


@dataclass
class Item:
    group: str
    category: str
    metric: str
    cat_w: tuple[float, str] | None
    m_w: tuple[float, str] | None
    page: int
    where: str
    weight_where: str = ""  # the cell (or in-cell text) the metric's own weight came from
    cat_where: str = ""  # the cell the category's weight came from


def _weight(text: str, where: str, findings: Findings, path: str) -> tuple[float, str] | None:
    try:
        return parse_weight(text)
    except NumberError as exc:
        findings.problem("invalid", path, f"{exc} ({where})")
        return None


def _incell(text: str) -> list[tuple[str, tuple[float, str] | None]]:
    """``샤프지수(40%), 소르티노(30%)`` → [(name, weight)…]; a plain list → weights None."""
    pairs = []
    for m in _INCELL.finditer(text):
        name = (m.group(1) or m.group(4) or "").strip(" ,·")
        number, unit = (m.group(2), m.group(3)) if m.group(1) is not None else (m.group(5), m.group(6))
        if name:
            pairs.append((name, (float(number), unit or "")))
    if pairs:
        return pairs
    return [(p.strip(), None) for p in re.split(r"[,/、·ㆍ]|\s및\s", text) if p.strip()]


def table_items(t: Table, findings: Findings) -> tuple[list[Item], list[float]]:
    """Rows of a criteria table as items, and the totals its 합계 rows state."""
    roles = [header_role(h) for h in t.header]
    cats = [i for i, r in enumerate(roles) if r == "category"]
    metrics = [i for i, r in enumerate(roles) if r == "metric"]
    weights = [i for i, r in enumerate(roles) if r == "weight"]
    group_col = cats[0] if len(cats) >= 2 else None
    cat_col = cats[-1] if cats else None
    metric_col = metrics[0] if metrics else cat_col
    if metric_col == cat_col:
        cat_col = None
    cat_w_col = weights[0] if len(weights) >= 2 else None
    m_w_col = weights[-1] if weights else None
    merged_weight = (
        len(weights) == 1
        and cat_col is not None
        and any(row.raw[weights[0]] is None for row in t.rows if weights[0] < len(row.raw))
    )
    incell = metric_col is not None and any(
        any(w is not None for _, w in _incell(row.cells[metric_col])) for row in t.rows if metric_col < len(row.cells)
    )
    if (merged_weight or incell) and len(weights) == 1:
        # one weight column whose cells span a category's rows, or metrics weighted inside their cell:
        # the column holds category weights
        cat_w_col, m_w_col = weights[0], None
    fill_down(t, [c for c in (group_col, cat_col, cat_w_col) if c is not None])
    items: list[Item] = []
    totals: list[float] = [
        float(m.group(1)) for c in weights for m in [re.search(r"(\d+(?:\.\d+)?)\s*점", t.header[c])] if m
    ]  # 배점(100점), 점수(총 50점)
    for row in t.rows:
        cells = row.cells + [""] * (len(t.header) - len(row.cells))
        if any(compact(c).startswith("소계") for c in cells[: (metric_col or 0) + 1] if c):
            continue  # a subtotal row: neither a criterion nor the document's total
        if any(is_total(c) for c in cells[: (metric_col or 0) + 1] if c):
            for c in weights:
                w = _weight(cells[c], t.cell_where(row, c), findings, "criteria")
                if w:
                    totals.append(w[0])
            continue
        name = cells[metric_col] if metric_col is not None else ""
        if not name:
            continue
        cat_w = _weight(cells[cat_w_col], t.cell_where(row, cat_w_col), findings, "criteria") if cat_w_col is not None else None
        category = cells[cat_col] if cat_col is not None else ""
        inline = _CAT_WEIGHT.search(category)
        if cat_w is None and inline and not _GROUP_LABEL.match(compact(category)):  # 수익률(30%)
            cat_w = (float(inline.group(1)), inline.group(2))
            category = category[: inline.start()].strip()
        where = t.cell_where(row, metric_col)
        cat_where = t.cell_where(row, cat_w_col) + f" = {cells[cat_w_col]!r}" if cat_w_col is not None else ""
        if inline and cat_w is not None and not cat_where:
            cat_where = t.cell_where(row, cat_col) + f" = {cells[cat_col]!r}"  # type: ignore[arg-type]
        listed = _incell(name)
        if len(listed) > 1 and all(w is None for _, w in listed) and cat_w is None and m_w_col is not None:
            # "샤프지수, 소르티노" sharing one weight cell: the weight is the category's, not each metric's
            cat_w = _weight(cells[m_w_col], t.cell_where(row, m_w_col), findings, "criteria")
            cat_where = t.cell_where(row, m_w_col) + f" = {cells[m_w_col]!r}"
            listed = [(n, None) for n, _ in listed]
            if not category:
                category = name
        for metric, inner in listed:
            m_w = inner
            weight_where = f"{where} = {name!r}" if inner is not None else ""
            if m_w is None and m_w_col is not None and not (len(listed) > 1 and cat_w is not None):
                weight_where = t.cell_where(row, m_w_col) + f" = {cells[m_w_col]!r}"
                if compact(cells[m_w_col]) in ("-", "–", "—"):
                    findings.notes.append(f"{metric!r} has '-' for its weight ({where}): listed, not scored")
                    continue
                m_w = _weight(cells[m_w_col], t.cell_where(row, m_w_col), findings, "criteria")
            items.append(
                Item(
                    group=cells[group_col] if group_col is not None else "",
                    category=category,
                    metric=metric,
                    cat_w=cat_w,
                    m_w=m_w,
                    page=row.page,
                    where=where,
                    weight_where=weight_where,
                    cat_where=cat_where,
                )
            )
    return items, totals


_PROSE_PAIR = re.compile(r"\s*(?:\(|:|은|는|을|를|이|가)?\s*(\d+(?:\.\d+)?)\s*(%|점|퍼센트)")


def prose_items(sentences: list[Sentence]) -> list[Item]:
    """``평가지표는 연환산 수익률 30%, 샤프지수 40%, 최대낙폭 30%로 구성한다`` → one item per metric."""
    items: list[Item] = []
    for s in sentences:
        if s.source != "text":
            continue
        for m in METRIC_IN_TEXT.finditer(s.text):
            w = _PROSE_PAIR.match(s.text, m.end())
            before = s.text[max(0, m.start() - 6) : m.start()]
            if not w or re.search(r"상위|하위|등급", before + s.text[m.end() : w.end()]) or re.search(
                r"\d\s*년\s*$", before
            ):
                continue
            unit = "%" if w.group(2) == "퍼센트" else w.group(2)
            where = f"sentence on p.{s.page}: {s.text[:90]}"
            items.append(Item("", "", m.group(0), None, (float(w.group(1)), unit), s.page, where, where))
    return items


def stated_totals(sentences: list[Sentence]) -> list[float]:
    """Totals the prose states: ``배점 100점``, ``총점 50점 만점``, ``합계 100``."""
    out = []
    for s in sentences:
        for m in re.finditer(r"(?:총점|만점|배점\s*합계|총\s*배점|합계)\s*(?:은|는)?\s*(\d+(?:\.\d+)?)\s*점?", s.text):
            out.append(float(m.group(1)))
    return out


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
    for it in items:  # a 구분 column holding 정량평가/정성평가 is the group, not a criterion
        if not it.group and _GROUP_LABEL.match(compact(it.category)):
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
    allowed = [100.0, 1.0, *totals]
    quant = [(it, mid) for it, mid, q in resolved if not q]
    qual = [(it, mid) for it, mid, q in resolved if q]
    # category → (weight raw, [(metric, name, weight raw, item)])
    cats: dict[str, dict[str, Any]] = {}
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
    if f.has_problem("criteria"):
        return None
    # category weight = stated, or the sum of its metrics' points
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
    if f.has_problem("criteria"):
        return None
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
