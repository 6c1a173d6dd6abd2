"""``fund companies`` as a library call: read a report folder, rate its companies, write the folder.

Everything is checked and computed before the first file is written, so a bad qualitative file (or any
other refusal) leaves nothing behind; then ``companies.json``, ``reports/<company>.md`` and
``companies.png`` are written atomically into ``DIR``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.outputs import (
    atomic_write_text,
    path_inside,
    replacing_dir,
    safe_filename,
)
from evaluator.domains.fund.companies.document import build_companies, report_ko
from evaluator.domains.fund.companies.funds import apply_meta, read_funds
from evaluator.domains.fund.companies.plot import PNG, draw_companies
from evaluator.domains.fund.companies.qualitative import read_qualitative
from evaluator.domains.fund.companies.rating import rate_companies
from evaluator.domains.fund.companies.rule import company_rule

COMPANIES_JSON = "companies.json"
REPORTS = "reports"


def rate_folder(
    reports_dir: str | os.PathLike[str],
    rubric: Mapping[str, Any],
    *,
    meta: str | os.PathLike[str] | None = None,
    qualitative: str | os.PathLike[str] | None = None,
    min_funds: int | None = None,
) -> dict[str, Any]:
    """The ``companies.json`` document for a report folder (nothing written)."""
    funds = read_funds(reports_dir)
    warnings = apply_meta(funds, meta) if meta is not None else []
    if len(funds.frame) and not funds.frame["portfolio_code"].notna().any():
        warnings.append(
            "the reports carry no share-class family (portfolio_code): every class counts as its own fund, so a "
            "운용사 with one fund in several classes looks like several funds; give --meta with 대표펀드코드, or "
            "grade with `fund evaluate` on META whose fund names show the classes (A, C, C-e, …)"
        )
    rule = company_rule(rubric, min_funds=min_funds)
    if funds.rubric and funds.rubric.get("name") and str(funds.rubric.get("name")) != str(rubric["name"]):
        warnings.append(
            f"the reports were graded under rubric {funds.rubric.get('name')!r}, the company rule comes from {rubric['name']!r}"
        )
    names = funds.frame["company"].dropna().unique().tolist()
    qual = read_qualitative(qualitative, rule, names, as_of=funds.as_of) if qualitative is not None else None
    ratings = rate_companies(funds.frame, rule, qual)
    return build_companies(funds, ratings, rule, qual, warnings=warnings)


@dataclass(frozen=True)
class Written:
    folder: Path
    companies_json: Path
    reports: dict[str, str]
    plot: Path | None


def report_names(companies: list[str]) -> dict[str, str]:
    """Company → report file name, safe and unique (a name that sanitises like another gets a hash)."""
    used: set[str] = set()
    out: dict[str, str] = {}
    for name in companies:
        base = safe_filename(name, default="company")
        stem = (
            base
            if base.lower() not in used
            else f"{base}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"
        )
        used.add(stem.lower())
        out[name] = stem + ".md"
    return out


def write_companies(
    doc: dict[str, Any], out_dir: str | os.PathLike[str], *, force: bool = False, plot: bool = True
) -> Written:
    """Write ``companies.json``, one Korean report per company and (unless ``plot`` is False) the plot."""
    final = Path(out_dir)
    with replacing_dir(final, force=force, owned=(COMPANIES_JSON, REPORTS, PNG)) as folder:  # swapped in whole
        names = report_names([c["company"] for c in doc["companies"]])
        reports_dir = folder / REPORTS
        reports_dir.mkdir(exist_ok=True)
        texts = {
            path_inside(reports_dir, names[c["company"]][: -len(".md")], ".md"): report_ko(doc, c)
            for c in doc["companies"]
        }
        # each write is atomic and fsynced; the fsyncs wait on the disk, not the CPU, so they overlap in threads
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(lambda item: atomic_write_text(*item), texts.items()))
        # one line: json's C encoder (an indented dump runs the pure-Python one, ~10x slower on 15,000 funds)
        atomic_write_text(folder / COMPANIES_JSON, json.dumps(doc, ensure_ascii=False) + "\n")
        drawn = draw_companies(doc, folder / PNG) if plot else None
    return Written(folder=final, companies_json=final / COMPANIES_JSON, reports=names,
                   plot=final / drawn.name if drawn is not None else None)
