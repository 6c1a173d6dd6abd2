"""A firm's own methodology PDF → a draft rubric, every value with its provenance.

Order matters: the grade-band table is recognised first (its 등급 column is distinctive), then the peer-group
table, then whichever remaining tables list metrics with weights are the criteria candidates, and last the
period table. Two criteria candidates that disagree are reported by name; none falls back to prose.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_bands import read_bands
from evaluator.methodology.ingest_company import is_company_sentence, read_company_rule
from evaluator.methodology.ingest_criteria import build_criteria
from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_items import Item, prose_items, stated_totals, table_items
from evaluator.methodology.ingest_lexicon import header_role, metric_id
from evaluator.methodology.ingest_provisional import MARK, provisional_sentences, read_provisional
from evaluator.methodology.ingest_rules import read_eligibility, read_peer_groups, read_periods
from evaluator.methodology.ingest_tables import Sentence, Table, read_document
from evaluator.methodology.ingest_text import clean
from evaluator.methodology.ingest_types import per_type_coverage, read_per_type
from evaluator.methodology.rubric import rubric_domain

_VERSION = re.compile(
    r"(?:버전|version|ver\.?|rev(?:ision|\.)?|개정\s*(?:일자|일)?|시행\s*(?:일자|일)?)\s*[:：]?\s*\(?\s*v?(\d{4}(?:[.\-]\d{1,2}){0,2}|\d+(?:\.\d+)+)",
    re.I,
)
_DATED = re.compile(r"(\d{4})\s*년\s*(\d{1,2})\s*월(?:\s*\d{1,2}\s*일)?\s*(?:개정|시행|제정)")


def _title(texts: list[str], source: str, f: Findings) -> tuple[str, str]:
    first = next((line.strip() for line in (texts[0] if texts else "").splitlines() if line.strip()), "")
    name = clean(re.sub(r"\(?\s*(?:버전|version|ver\.?|개정|시행|rev\.?)\s*[:：]?\s*[\w.\-]+\s*\)?", "", first, flags=re.I))
    name = name or source
    f.found("name", name, 1, "first line of page 1", first)
    joined = "\n".join(texts[:2])
    m = _VERSION.search(clean(joined))
    dated = _DATED.search(clean(joined))
    if m:
        version = m.group(1).replace("-", ".")
        f.found("version", version, 1, "first pages", m.group(0))
    elif dated:
        version = f"{dated.group(1)}.{int(dated.group(2)):02d}"
        f.found("version", version, 1, "first pages", dated.group(0))
    else:
        version = "미기재"
        f.notes.append("no version or revision date found on the first two pages; version set to '미기재'")
    return name, version


def _is_candidate(t: Table) -> bool:
    roles = {header_role(h) for h in t.header}
    return t.role is None and ("metric" in roles or {"category", "weight"} <= roles)


def _names_metrics(items: list[Item]) -> bool:
    return any(metric_id(it.metric)[0] or "family" in (metric_id(it.metric)[1] or "") for it in items)


def _weights_said(built: dict[str, Any] | None) -> str:
    """Effective metric weights of one candidate table, e.g. ``annualized_return 50%, sharpe 50%``."""
    if not built:
        return "no usable weights"
    eff: dict[str, float] = {}
    for c in built["criteria"]:
        for m in c["metrics"]:
            eff[m["metric"]] = eff.get(m["metric"], 0.0) + c["weight"] * m["weight"] / 100
    return ", ".join(f"{k} {v:.4g}%" for k, v in eff.items())


def _criteria(tables: list[Table], sentences: list[Sentence], f: Findings) -> dict[str, Any] | None:
    totals = stated_totals(sentences)
    per_type = read_per_type(tables, totals, f)
    if per_type is not None:  # one 배점 column (or one table) per 유형
        return per_type or None
    candidates: list[tuple[Table, dict[str, Any] | None, Findings]] = []
    unweighted: list[tuple[Table, dict[str, Any] | None, Findings]] = []
    for t in tables:
        if not _is_candidate(t):
            continue
        trial = Findings(f.source)
        items, table_totals = table_items(t, trial)
        if not items or not _names_metrics(items):
            continue
        built = build_criteria(items, totals + table_totals, t.name, trial) if not trial.problems else None
        weighted = any(it.m_w is not None or it.cat_w is not None for it in items)
        (candidates if weighted else unweighted).append((t, built, trial))
    if not candidates and unweighted:  # e.g. only a table of metric definitions: report its missing weights
        candidates = unweighted[:1]
    elif unweighted:
        f.notes.append(
            "tables listing metrics without weights were taken as definitions, not criteria: "
            + ", ".join(c[0].name for c in unweighted)
        )
    if len(candidates) > 1:
        results = [c[1] for c in candidates]
        if any(r != results[0] for r in results[1:]):
            names = " and ".join(c[0].name for c in candidates)
            said = "; ".join(f"{c[0].name.split(' (')[0]} gives {_weights_said(c[1])}" for c in candidates)
            f.problem(
                "ambiguous",
                "criteria",
                f"two candidate criteria tables that disagree: {names}; ingest does not choose between them ({said})",
                [c[0].name for c in candidates],
            )
            return None
        f.notes.append(f"the criteria appear in {len(candidates)} tables with identical content")
    if candidates:
        t, built, trial = candidates[0]
        t.role = "criteria"
        f.values += trial.values
        f.problems += trial.problems
        return built
    items = prose_items(sentences)
    looked = [t.name for t in tables] + ["every sentence naming a metric followed by a weight"]
    if not items:
        any_metric = [t.name for t in tables if _is_candidate(t)]
        f.problem(
            "missing",
            "criteria",
            "no criteria with weights found (a table with 평가지표/지표/Metric and 가중치/배점/Weight columns, or "
            "sentences such as '샤프지수 40%')" + (f"; tables with metric columns: {', '.join(any_metric)}" if any_metric else ""),
            looked,
        )
        return None
    f.notes.append("criteria read from sentences (no criteria table)")
    return build_criteria(items, totals, "sentences", f)


_QUAL_WEIGHT = re.compile(r"(?<![가-힣])(?:정성|비계량|qualitative)[^.]{0,40}?\d+(?:\.\d+)?\s*(?:%|점)", re.I)


def _unread_qualitative(criteria: dict[str, Any], tables: list[Table], sentences: list[Sentence], f: Findings) -> None:
    """A weighted 정성평가 the criteria do not contain would silently drop part of the score: report it."""
    if "qualitative" in criteria:
        return
    for t in tables:
        if t.role is None and any(re.search(r"(?<![가-힣])정성|qualitative", h, re.I) for h in t.header):
            f.problem(
                "missing",
                "qualitative",
                f"{t.name} looks like qualitative (정성) criteria, which were not read with the quantitative ones; "
                "add them (with their weight) via --fill",
                [t.name],
            )
            return
    for s in sentences:
        if _QUAL_WEIGHT.search(s.text) and not is_company_sentence(s):  # 운용사 pillars are read apart
            where = f"sentence on p.{s.page}" if s.source == "text" else s.source
            f.problem(
                "missing",
                "qualitative",
                f"the document weights a qualitative part ({where}: {s.text[:80]}) but no qualitative criteria "
                "were read with the quantitative ones; add them (with levels) via --fill",
                [where],
            )
            return


def read_firm_pdf(pdf: Any, f: Findings) -> dict[str, Any]:
    """Everything found in an open pdfplumber PDF, as a (possibly incomplete) rubric draft."""
    tables, sentences, texts = read_document(pdf)
    name, version = _title(texts, f.source, f)
    draft: dict[str, Any] = {"domain": rubric_domain(), "name": name, "version": version}
    bands = read_bands(tables, sentences, f)
    company = read_company_rule(tables, sentences, bands, f)
    groups = read_peer_groups(tables, sentences, f)
    marked, sentences = provisional_sentences(sentences)  # its "1년 이상" is not the regular minimum
    provisional = read_provisional(marked, f)
    for t in tables:
        if t.role is None and any(MARK.search(" ".join(r.cells)) for r in t.rows):
            t.role = "provisional grades"
    eligibility = read_eligibility(sentences, groups or [], f)
    criteria = _criteria(tables, sentences, f)
    periods = read_periods(tables, sentences, (eligibility or {}).get("min_history_years"), f)
    if provisional:
        draft["provisional"] = provisional
    if groups:
        draft["peer_groups"] = groups
    if eligibility:
        draft["eligibility"] = eligibility
    if periods:
        draft["period_weights"] = periods
    if criteria:
        draft.update(criteria)
        _unread_qualitative(criteria, tables, sentences, f)
        per_type_coverage(draft, f)
    if bands:
        draft["grade_bands"] = bands
        stars = str(bands[0]["label"]).startswith("★")
        if stars or len(bands) != 5:
            draft["grade_scale"] = {"grades": len(bands), "best": "high" if stars else "low",
                                    "style": "stars" if stars else "number"}
    if company:
        draft["company_rating"] = company
    f.tables = [
        {"name": t.name, "pages": t.pages, "header": t.header, "rows": len(t.rows), "role": t.role} for t in tables
    ]
    return tidy(draft)


def tidy(doc: Any) -> Any:
    """Whole numbers as ints (``30`` not ``30.0``) and no float noise, so the rubric reads as an analyst would write it."""
    if isinstance(doc, dict):
        return {k: tidy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [tidy(v) for v in doc]
    if isinstance(doc, float):
        doc = round(doc, 10)  # 0.2 / 1 * 100 is 20.000000000000004
        return int(doc) if doc.is_integer() and abs(doc) < 1e15 else doc
    return doc
