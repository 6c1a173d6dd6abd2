"""Read a methodology PDF into a rubric, with pdfplumber: the project's own layout exactly, any firm's by lexicon.

A PDF written by :mod:`pdf_render` is recognised by its document table and read back exactly (round trip).
Any other PDF goes through :mod:`ingest_firm` (header synonyms, merged cells, split tables, prose rules).
Either way every value keeps its provenance, an analyst's partial JSON (``fill``) may complete the draft,
and anything missing, ambiguous or invalid raises :class:`IngestError` with one message listing it all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.pdfparser import PDFSyntaxError

from evaluator.methodology import pdf_layout as L
from evaluator.methodology.ingest_findings import Findings, IngestError
from evaluator.methodology.ingest_firm import read_firm_pdf
from evaluator.methodology.ingest_text import unreadable_share
from evaluator.methodology.rubric import rubric_problems

__all__ = ["IngestError", "ingest_pdf", "ingest_with_report"]

UNREADABLE_LIMIT = 0.3
Rows = list[list[str]]


def _cell(text: str | None, compact: bool = False) -> str:
    """Cell text with wrapped lines joined by one space (prose wraps at spaces), or by nothing for
    identifier and number columns (which may wrap anywhere)."""
    return ("" if compact else " ").join((text or "").split())


def _collect_tables(pdf: pdfplumber.PDF) -> tuple[dict[tuple[str, ...], Rows], dict[tuple[str, ...], int]]:
    """The project's own tables by header (continuations merged), and the page each starts on."""
    wanted = {L.header_key(h): h for h in L.TABLE_NAMES}
    tables: dict[tuple[str, ...], Rows] = {}
    pages: dict[tuple[str, ...], int] = {}
    for pno, page in enumerate(pdf.pages, 1):
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
                pages.setdefault(table, pno)
    return tables, pages


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
        if level != L.NO_LEVEL:
            criteria[-1]["levels"][level] = text
    for crit in criteria:
        if not crit["levels"]:
            del crit["levels"]
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


def _company(tables: dict[tuple[str, ...], Rows]) -> dict[str, Any]:
    """The 운용사 rule from its three tables (the pillar table is optional, the band table is not)."""
    kv = _key_values(tables[L.COMPANY_TABLE], L.COMPANY_KEYS, L.COMPANY_TABLE)
    missing = [L.COMPANY_KEYS[k] for k in L.COMPANY_KEYS if k not in kv]
    if missing or L.COMPANY_BANDS_TABLE not in tables:
        what = [*missing, *([] if L.COMPANY_BANDS_TABLE in tables else [L.TABLE_NAMES[L.COMPANY_BANDS_TABLE]])]
        raise IngestError(f"{L.TABLE_NAMES[L.COMPANY_TABLE]} is there but {', '.join(what)} is missing")
    yes = {v: k for k, v in L.YES_NO.items()}
    if kv["require_qualitative"] not in yes:
        raise IngestError(f"운용사 rating table: 정성평가 필수 is {kv['require_qualitative']!r}, not 예 or 아니오")
    pillars = _qualitative(tables.get(L.COMPANY_PILLAR_TABLE, []), "0")["criteria"]
    rule: dict[str, Any] = {
        "min_funds": _num(kv["min_funds"], "운용사 rating table, 최소 평가 펀드 수"),
        "size_field": kv["size_field"],
        "weights": {k: _num(kv[k], f"운용사 rating table, {L.COMPANY_KEYS[k]}") for k in ("quantitative", "qualitative")},
        "require_qualitative": yes[kv["require_qualitative"]],
    }
    if pillars:
        rule["pillars"] = pillars
    rule["bands"] = _bands(tables[L.COMPANY_BANDS_TABLE])
    return rule


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
    from_data = doc.get("peer_groups") == L.PEER_GROUPS_FROM_DATA
    if L.PEER_TABLE in tables and not from_data:
        rubric["peer_groups"] = [row[1] for row in tables[L.PEER_TABLE]]
    elif not from_data:
        raise IngestError(f"{what} has no {L.TABLE_NAMES[L.PEER_TABLE]}; it cannot be read as a methodology")
    for key, keys in L.SETTING_KEYS.items():
        if key in doc:
            try:
                rubric[key] = L.parse_setting(doc[key], keys)
            except ValueError as exc:
                raise IngestError(f"{what}: the document table's {L.DOC_KEYS[key]} row: {exc}") from None
    rubric["eligibility"] = {
        k: _num(elig[k], f"eligibility table, {L.ELIGIBILITY_KEYS[k]}")
        for k in L.ELIGIBILITY_KEYS
        if k in elig
    }
    if L.OVERRIDE_TABLE in tables:
        by_label = {label: key for key, label in L.ELIGIBILITY_KEYS.items()}
        overrides: dict[str, dict[str, Any]] = {}
        for group, label, value in (row[:3] for row in tables[L.OVERRIDE_TABLE]):
            key = by_label.get(label, label)
            overrides.setdefault(group, {})[key] = _num(value, f"per-유형 eligibility table, {group} {label}")
        rubric["eligibility"]["overrides"] = overrides
    rubric["period_weights"] = _period_weights(tables[L.PERIOD_TABLE])
    rubric["criteria"] = _criteria(tables[L.CRITERIA_TABLE])
    if L.TYPE_CRITERIA_TABLE in tables:
        by_type: dict[str, Rows] = {}
        for row in tables[L.TYPE_CRITERIA_TABLE]:
            by_type.setdefault(row[0], []).append(row[1:])
        rubric["criteria_by_type"] = {group: _criteria(rows) for group, rows in by_type.items()}
    if L.QUALITATIVE_TABLE in tables:
        rubric["qualitative"] = _qualitative(tables[L.QUALITATIVE_TABLE], doc.get("qualitative_weight"))
    rubric["grade_bands"] = _bands(tables[L.BANDS_TABLE])
    if L.COMPANY_TABLE in tables:
        rubric["company_rating"] = _company(tables)
    if L.REWARDS_TABLE in tables:
        rubric["rewards"] = _rewards(tables[L.REWARDS_TABLE])
    problems = rubric_problems(rubric)
    if problems:
        raise IngestError(
            f"{what} was read, but the methodology it describes is not valid: " + "; ".join(problems)
        )
    return rubric


def _exact(tables: dict[tuple[str, ...], Rows], pages: dict[tuple[str, ...], int], f: Findings) -> dict[str, Any]:
    f.layout = "evaluator"
    rubric = rubric_from_tables(tables, f.source)
    where = {
        "name": L.DOC_TABLE, "version": L.DOC_TABLE, "peer_groups": L.PEER_TABLE, "eligibility": L.ELIGIBILITY_TABLE,
        "period_weights": L.PERIOD_TABLE, "criteria": L.CRITERIA_TABLE, "qualitative": L.QUALITATIVE_TABLE,
        "grade_bands": L.BANDS_TABLE, "rewards": L.REWARDS_TABLE, "grade_scale": L.DOC_TABLE,
        "provisional": L.DOC_TABLE, "criteria_by_type": L.TYPE_CRITERIA_TABLE, "company_rating": L.COMPANY_TABLE,
    }
    for key, table in where.items():
        if key in rubric:
            f.found(key, rubric[key], pages.get(table), L.TABLE_NAMES[table], "")
    f.tables = [{"name": L.TABLE_NAMES[t], "pages": [pages[t]], "header": list(t), "rows": len(r), "role": None}
                for t, r in tables.items()]
    return rubric


def _open(p: Path, f: Findings) -> dict[str, Any]:
    with pdfplumber.open(p) as pdf:
        f.pages = len(pdf.pages)
        text = "\n".join(page.extract_text() or "" for page in pdf.pages)
        if not any(page.chars for page in pdf.pages):
            raise IngestError(
                f"{p} has no text layer (it looks like a scanned image); export the methodology as a text PDF, "
                "e.g. with `evaluator methodology render`"
            )
        share = unreadable_share(text)
        if share > UNREADABLE_LIMIT:
            raise IngestError(
                f"the PDF's text layer is unreadable: {share:.0%} of {p.name}'s characters are font codes "
                "such as (cid:123) or symbols with no Unicode meaning (its fonts carry no ToUnicode map, as some "
                "HWP exports do). Nothing was guessed; export the document again with Unicode fonts (e.g. "
                "'PDF로 저장' with fonts embedded) or run OCR first"
            )
        if share > 0.05:
            f.notes.append(f"{share:.0%} of the text layer is unreadable font codes; values there cannot be read")
        tables, pages = _collect_tables(pdf)
        if L.DOC_TABLE in tables and L.CRITERIA_TABLE in tables:
            return _exact(tables, pages, f)
        try:
            return read_firm_pdf(pdf, f)
        except IngestError:
            raise
        except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError) as exc:
            # a layout this reader has never met must still end in a clear refusal, not a traceback
            raise IngestError(
                f"{p.name} uses a layout the reader could not follow ({type(exc).__name__}: {exc}); nothing was "
                "guessed. Use --draft/--fill to supply the rubric, and please report the document's layout"
            ) from exc


def _merge(base: Any, fill: Any) -> Any:
    if isinstance(base, dict) and isinstance(fill, dict):
        out = dict(base)
        for k, v in fill.items():
            out[k] = _merge(base.get(k), v) if k in base else v
        return out
    return fill


def _filled(fill: dict[str, Any], field: str) -> bool:
    """Whether the analyst's partial JSON supplies the part a problem is about."""
    path = re.split(r"[.\[ ]", field)
    node: Any = fill
    for part in path[:2] if path[0] == "eligibility" else path[:1]:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def ingest_with_report(
    path: str | os.PathLike[str], fill: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(rubric, report) for a methodology PDF; :class:`IngestError` carries the draft and report on failure."""
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"{p} does not exist")
    f = Findings(str(p))
    try:
        draft = _open(p, f)
    except IngestError as exc:
        own_layout = f.layout == "evaluator"  # the project's own tables, read, but describing an invalid rubric
        f.problem("invalid" if own_layout else "unreadable", "document", str(exc))
        raise IngestError(str(exc), None, f.report("incomplete" if own_layout else "refused")) from None
    except (PDFSyntaxError, ValueError, KeyError, TypeError) as exc:
        raise IngestError(f"{p} is not a readable PDF ({type(exc).__name__}: {exc})") from exc
    except Exception as exc:  # pdfminer raises many unrelated types for a broken file
        if type(exc).__module__.startswith(("pdfminer", "pdfplumber")):
            raise IngestError(f"{p} is not a readable PDF ({type(exc).__name__}: {exc})") from exc
        raise
    if fill:
        f.problems = [pr for pr in f.problems if not _filled(fill, pr["field"])]
        draft = _merge(draft, fill)
        for key in fill:
            f.found(key, fill[key], None, "the analyst's --fill JSON", "")
    if not f.problems:
        for problem in rubric_problems(draft):
            f.problem("invalid", "rubric", problem)
    if f.problems:
        raise IngestError(f.message(), draft, f.report("incomplete"))
    return draft, f.report("ok")


def ingest_pdf(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a methodology PDF into a validated rubric."""
    return ingest_with_report(path)[0]
