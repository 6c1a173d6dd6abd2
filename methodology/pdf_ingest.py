"""Read a methodology PDF (as rendered by :mod:`pdf_render`) back into a rubric, with pdfplumber.

Tables are found by their header rows (a table split over pages is joined back), every value is read
from table cells, and the result is validated. A PDF with no text layer, without a required table, or
describing an invalid rubric (weights that do not add up, …) raises :class:`IngestError` with one
message naming what is missing or wrong.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.pdfparser import PDFSyntaxError

from evaluator.methodology import pdf_layout as L
from evaluator.methodology.rubric import rubric_problems


class IngestError(ValueError):
    """The PDF cannot become a rubric; the message says exactly why."""


Rows = list[list[str]]


def _cell(text: str | None, compact: bool = False) -> str:
    """Cell text with wrapped lines joined by one space (prose wraps at spaces), or by nothing for
    identifier and number columns (which may wrap anywhere)."""
    return ("" if compact else " ").join((text or "").split())


def _collect_tables(pdf: pdfplumber.PDF) -> tuple[dict[tuple[str, ...], Rows], bool]:
    """Known tables by header (continuations merged) and whether any page had text."""
    wanted = {L.header_key(h): h for h in L.TABLE_NAMES}
    tables: dict[tuple[str, ...], Rows] = {}
    has_text = False
    for page in pdf.pages:
        if page.chars:
            has_text = True
        for raw in page.extract_tables():
            if not raw:
                continue
            key = L.header_key([c or "" for c in raw[0]])
            if key in wanted:
                table = wanted[key]
                compact = L.COMPACT_COLUMNS[table]
                width = len(key)
                rows = ([_cell(c, i in compact) for i, c in enumerate(row)] + [""] * width for row in raw[1:])
                tables.setdefault(table, []).extend(row[:width] for row in rows if any(row))
    return tables, has_text


def _num(text: str, where: str) -> int | float:
    try:
        return L.parse_number(text)
    except ValueError as exc:
        raise IngestError(f"{where}: {exc}") from None


def _key_values(rows: Rows, labels: dict[str, str], table: tuple[str, ...]) -> dict[str, str]:
    by_label = {label: key for key, label in labels.items()}
    out: dict[str, str] = {}
    for row in rows:
        if len(row) < 2 or row[0] not in by_label:
            raise IngestError(f"{L.TABLE_NAMES[table]} has an unexpected row {row!r}")
        out[by_label[row[0]]] = row[1]
    return out


def _period_weights(rows: Rows) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for row in rows:
        years = _num(row[0], "period-weight table, 최소 운용기간")
        match = re.search(r"\((\w+)\)\s*$", row[1])
        if not match:
            raise IngestError(
                f"period-weight table: cannot read the window in {row[1]!r} (expected e.g. '3년 (3y)')"
            )
        if not rules or rules[-1]["min_history_years"] != years:
            rules.append({"min_history_years": years, "weights": {}})
        rules[-1]["weights"][match.group(1)] = _num(row[2], "period-weight table, 기간 가중치")
    return rules


def _criteria(rows: Rows) -> list[dict[str, Any]]:
    criteria: list[dict[str, Any]] = []
    for row in rows:
        cid, name, weight, metric, _label, metric_weight = row[:6]
        w = _num(weight, f"criteria table, weight of {cid!r}")
        if not criteria or criteria[-1]["id"] != cid:
            criteria.append({"id": cid, "name": name, "weight": w, "metrics": []})
        elif (criteria[-1]["name"], criteria[-1]["weight"]) != (name, w):
            raise IngestError(
                f"criteria table: criterion {cid!r} has different names or weights on different rows"
            )
        criteria[-1]["metrics"].append(
            {"metric": metric, "weight": _num(metric_weight, f"criteria table, weight of {metric!r}")}
        )
    return criteria


def _qualitative(rows: Rows, weight: str | None) -> dict[str, Any]:
    if weight is None:
        raise IngestError(
            f"the PDF has {L.TABLE_NAMES[L.QUALITATIVE_TABLE]} but no 정성평가 비중(%) row in the document table"
        )
    criteria: list[dict[str, Any]] = []
    for cid, name, w, level, text in (row[:5] for row in rows):
        cw = _num(w, f"qualitative table, weight of {cid!r}")
        if not criteria or criteria[-1]["id"] != cid:
            criteria.append({"id": cid, "name": name, "weight": cw, "levels": {}})
        criteria[-1]["levels"][level] = text
    return {"weight": _num(weight, "document table, 정성평가 비중"), "criteria": criteria}


def _bands(rows: Rows) -> list[dict[str, Any]]:
    bands = []
    for row in rows:
        grade = _num(row[0], "grade-band table, 등급")
        bands.append(
            {"grade": grade, "label": row[1], "share": _num(row[2], f"grade-band table, share of {row[1]!r}")}
        )
    return bands


def _rewards(rows: Rows) -> dict[str, Any]:
    return {
        name: {
            "weight": _num(w, f"reward table, weight of {name!r}"),
            "description": en,
            "description_ko": ko,
        }
        for name, w, en, ko in (row[:4] for row in rows)
    }


def rubric_from_tables(tables: dict[tuple[str, ...], Rows], what: str = "the PDF") -> dict[str, Any]:
    """Assemble (and validate) a rubric from the tables :func:`_collect_tables` found."""
    missing = [L.TABLE_NAMES[t] for t in L.REQUIRED_TABLES if t not in tables]
    if missing:
        raise IngestError(f"{what} has no {' and no '.join(missing)}; it cannot be read as a methodology")
    doc = _key_values(tables[L.DOC_TABLE], L.DOC_KEYS, L.DOC_TABLE)
    for key in ("domain", "name", "version"):
        if key not in doc:
            raise IngestError(f"{what}: the document table has no {L.DOC_KEYS[key]} row")
    elig = _key_values(tables[L.ELIGIBILITY_TABLE], L.ELIGIBILITY_KEYS, L.ELIGIBILITY_TABLE)
    rubric: dict[str, Any] = {"domain": doc["domain"], "name": doc["name"], "version": doc["version"]}
    for key in ("description", "default_style"):
        if key in doc:
            rubric[key] = doc[key]
    rubric["peer_groups"] = [row[1] for row in tables[L.PEER_TABLE]]
    rubric["eligibility"] = {
        k: _num(elig[k], f"eligibility table, {L.ELIGIBILITY_KEYS[k]}")
        for k in L.ELIGIBILITY_KEYS
        if k in elig
    }
    rubric["period_weights"] = _period_weights(tables[L.PERIOD_TABLE])
    rubric["criteria"] = _criteria(tables[L.CRITERIA_TABLE])
    if L.QUALITATIVE_TABLE in tables:
        rubric["qualitative"] = _qualitative(tables[L.QUALITATIVE_TABLE], doc.get("qualitative_weight"))
    rubric["grade_bands"] = _bands(tables[L.BANDS_TABLE])
    if L.REWARDS_TABLE in tables:
        rubric["rewards"] = _rewards(tables[L.REWARDS_TABLE])
    problems = rubric_problems(rubric)
    if problems:
        raise IngestError(
            f"{what} was read, but the methodology it describes is not valid: " + "; ".join(problems)
        )
    return rubric


def ingest_pdf(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a methodology PDF into a validated rubric."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"{p} does not exist")
    try:
        with pdfplumber.open(p) as pdf:
            tables, has_text = _collect_tables(pdf)
    except (PDFSyntaxError, ValueError, KeyError, TypeError) as exc:
        raise IngestError(f"{p} is not a readable PDF ({type(exc).__name__}: {exc})") from exc
    except Exception as exc:  # pdfminer raises many unrelated types for a broken file
        if type(exc).__module__.startswith(("pdfminer", "pdfplumber")):
            raise IngestError(f"{p} is not a readable PDF ({type(exc).__name__}: {exc})") from exc
        raise
    if not has_text:
        raise IngestError(
            f"{p} has no text layer (it looks like a scanned image); export the methodology as a text PDF, "
            "e.g. with `evaluator methodology render`"
        )
    return rubric_from_tables(tables, str(p))
