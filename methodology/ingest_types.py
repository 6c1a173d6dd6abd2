"""Weights per 유형: one 배점 column per 유형 (``평가지표 | 주식형 배점 | 채권형 배점``) or one table per 유형
(``주식형 평가지표 | 배점`` and ``채권형 평가지표 | 배점``).

Each 유형's weights are read exactly as a one-유형 table would be (same checks, same provenance); a 유형 the
document's peer groups name but no column weights is reported, never given another 유형's weights.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_criteria import build_criteria
from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_items import table_items
from evaluator.methodology.ingest_lexicon import header_role
from evaluator.methodology.ingest_tables import Row, Table
from evaluator.methodology.ingest_text import compact

_TYPE = re.compile(r"([가-힣A-Za-z]{1,10}형)")
_NOT_TYPE = {"유형", "펀드유형", "구분유형"}


def _type_named(cell: str) -> str | None:
    m = _TYPE.search(compact(cell))
    return m.group(1) if m and m.group(1) not in _NOT_TYPE else None


def _type_columns(t: Table) -> dict[int, str]:
    """Weight columns that each name a 유형 (``주식형 배점``, ``채권형(%)``), when two or more do."""
    metric_cols = [i for i, h in enumerate(t.header) if header_role(h) in ("metric", "category")]
    cols = {i: g for i, h in enumerate(t.header) if i not in metric_cols and (g := _type_named(h))}
    return cols if metric_cols and len(cols) >= 2 and len(set(cols.values())) == len(cols) else {}


def _one_type(t: Table, keep: list[int], col: int) -> Table:
    header = [t.header[i] for i in keep] + [t.header[col] if header_role(t.header[col]) == "weight" else "배점"]
    rows = [
        Row([r.cells[i] if i < len(r.cells) else "" for i in keep] + [r.cells[col] if col < len(r.cells) else ""],
            [r.raw[i] if i < len(r.raw) else "" for i in keep] + [r.raw[col] if col < len(r.raw) else ""],
            r.page, r.index)
        for r in t.rows
    ]
    return Table(header, rows, t.pages, t.top, t.bottom, t.page_height, t.number)


def _per_type_tables(tables: list[Table]) -> dict[str, Table]:
    """유형 → its own criteria table, from type columns or from tables whose header names one 유형."""
    for t in tables:
        cols = _type_columns(t) if t.role is None else {}
        if cols:
            keep = [i for i in range(len(t.header)) if i not in cols and header_role(t.header[i]) != "weight"]
            t.role = "criteria per 유형"
            return {g: _one_type(t, keep, i) for i, g in cols.items()}
    named: dict[str, Table] = {}
    for t in tables:
        roles = {header_role(h) for h in t.header}
        types = {g for h in t.header if (g := _type_named(h))}
        if t.role is None and len(types) == 1 and "weight" in roles and roles & {"metric", "category"}:
            named.setdefault(types.pop(), t)
    return named if len(named) >= 2 else {}


def read_per_type(tables: list[Table], totals: list[float], f: Findings) -> dict[str, Any] | None:
    """``{"criteria": …, "criteria_by_type": {유형: criteria}}`` or None when the document has one weighting."""
    per_type = _per_type_tables(tables)
    if not per_type:
        return None
    built: dict[str, list[dict[str, Any]]] = {}
    for group, t in per_type.items():
        t.role = "criteria per 유형"
        trial = Findings(f.source)
        items, table_totals = table_items(t, trial)
        got = build_criteria(items, totals + table_totals, t.name, trial) if items and not trial.problems else None
        f.problems += [{**p, "field": f"criteria_by_type.{group}"} for p in trial.problems]
        if got is None:
            if not trial.problems:
                f.problem("missing", f"criteria_by_type.{group}", f"no weighted metrics for {group} in {t.name}", [t.name])
            return {}
        if "qualitative" in got:
            f.problem("invalid", f"criteria_by_type.{group}", "qualitative criteria per 유형 are not supported; give them via --fill", [t.name])
            return {}
        f.values += [{**v, "field": f"criteria_by_type.{group}." + v["field"].removeprefix("criteria")} for v in trial.values]
        built[group] = got["criteria"]
    first = next(iter(built.values()))
    if all(c == first for c in built.values()):
        f.notes.append(f"the weights per 유형 ({', '.join(built)}) are identical; read as one set of criteria")
        return {"criteria": first}
    return {"criteria": first, "criteria_by_type": built}


def per_type_coverage(draft: dict[str, Any], f: Findings) -> None:
    """Every listed peer group needs its own weights once the weights differ by 유형 (no silent fallback)."""
    by_type = draft.get("criteria_by_type")
    if not by_type:
        return
    groups = draft.get("peer_groups")
    if groups is None:
        f.problem(
            "missing", "peer_groups",
            f"the weights differ by 유형 ({', '.join(by_type)}) but the document lists no peer groups, so a 유형 of the "
            "data with no column would get another 유형's weights; list the peer groups via --fill",
        )
        return
    missing = [g for g in groups if g not in by_type]
    if missing:
        f.problem(
            "missing", "criteria_by_type",
            f"the weights differ by 유형 but none are given for {', '.join(missing)} (columns: {', '.join(by_type)})",
        )
    unknown = [g for g in by_type if g not in groups]
    if unknown:
        f.problem(
            "invalid", "criteria_by_type",
            f"weights are given for {', '.join(unknown)}, which is not one of the peer groups ({', '.join(groups)})",
        )
