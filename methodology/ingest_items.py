"""Criteria items as a firm's document states them: the rows of its criteria table (categories, metrics,
weights per metric or per category, weights written inside a cell, 합계 rows), or weights in its prose,
and the totals it states. :mod:`~evaluator.methodology.ingest_criteria` decides what they add up to."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_lexicon import METRIC_IN_TEXT, header_role, is_total
from evaluator.methodology.ingest_tables import Row, Sentence, Table, fill_down
from evaluator.methodology.ingest_text import NumberError, compact, parse_weight

_INCELL = re.compile(
    r"([^,/(\n]+?)\s*\(\s*(\d+(?:\.\d+)?)\s*(%|점)?\s*\)|([^,/:\n]+?)\s*[:]\s*(\d+(?:\.\d+)?)\s*(%|점)?"
)
GROUP_LABEL = re.compile(
    r"(정량|정성|계량|비계량|quantitative|qualitative)(평가|지표|항목|부문)?(\(|\d|$)", re.I
)
"""A 구분 cell naming the quantitative or qualitative part (정량평가, 비계량 …), not a criterion."""
_CAT_WEIGHT = re.compile(r"\(\s*(\d+(?:\.\d+)?)\s*(%|점)\s*\)\s*$")


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


@dataclass(frozen=True)
class _Columns:
    """Which column of a criteria table holds what (None: the table has no such column)."""

    group: int | None
    category: int | None
    metric: int | None
    category_weight: int | None
    metric_weight: int | None
    weights: list[int]


def _columns(t: Table) -> _Columns:
    """Roles of a criteria table's columns from its header, and whether its one weight column weighs the
    categories (cells spanning a category's rows, or metrics weighted inside their own cell)."""
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
        any(w is not None for _, w in _incell(row.cells[metric_col]))
        for row in t.rows
        if metric_col < len(row.cells)
    )
    if (merged_weight or incell) and len(weights) == 1:
        # one weight column whose cells span a category's rows, or metrics weighted inside their cell:
        # the column holds category weights
        cat_w_col, m_w_col = weights[0], None
    return _Columns(group_col, cat_col, metric_col, cat_w_col, m_w_col, weights)


def table_items(t: Table, findings: Findings) -> tuple[list[Item], list[float]]:
    """Rows of a criteria table as items, and the totals its 합계 rows state."""
    cols = _columns(t)
    fill_down(t, [c for c in (cols.group, cols.category, cols.category_weight) if c is not None])
    items: list[Item] = []
    totals: list[float] = [
        float(m.group(1))
        for c in cols.weights
        for m in [re.search(r"(\d+(?:\.\d+)?)\s*점", t.header[c])]
        if m
    ]  # 배점(100점), 점수(총 50점)
    for row in t.rows:
        cells = row.cells + [""] * (len(t.header) - len(row.cells))
        if any(compact(c).startswith("소계") for c in cells[: (cols.metric or 0) + 1] if c):
            continue  # a subtotal row: neither a criterion nor the document's total
        if any(is_total(c) for c in cells[: (cols.metric or 0) + 1] if c):
            for c in cols.weights:
                w = _weight(cells[c], t.cell_where(row, c), findings, "criteria")
                if w:
                    totals.append(w[0])
            continue
        items += _row_items(t, row, cells, cols, findings)
    return items, totals


def _row_items(t: Table, row: Row, cells: list[str], cols: _Columns, findings: Findings) -> list[Item]:
    """One criteria row's items: its metric, or each metric listed in its cell, with the weights that apply."""
    metric_col, cat_col, cat_w_col, m_w_col = (
        cols.metric,
        cols.category,
        cols.category_weight,
        cols.metric_weight,
    )
    name = cells[metric_col] if metric_col is not None else ""
    if not name:
        return []
    cat_w = (
        _weight(cells[cat_w_col], t.cell_where(row, cat_w_col), findings, "criteria")
        if cat_w_col is not None
        else None
    )
    category = cells[cat_col] if cat_col is not None else ""
    inline = _CAT_WEIGHT.search(category)
    if cat_w is None and inline and not GROUP_LABEL.match(compact(category)):  # 수익률(30%)
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
    items: list[Item] = []
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
                group=cells[cols.group] if cols.group is not None else "",
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
    return items


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
            if (
                not w
                or re.search(r"상위|하위|등급", before + s.text[m.end() : w.end()])
                or re.search(r"\d\s*년\s*$", before)
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
        for m in re.finditer(
            r"(?:총점|만점|배점\s*합계|총\s*배점|합계)\s*(?:은|는)?\s*(\d+(?:\.\d+)?)\s*점?", s.text
        ):
            out.append(float(m.group(1)))
    return out
