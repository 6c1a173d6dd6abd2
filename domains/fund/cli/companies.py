"""`evaluator fund companies` — rate the asset managers (운용사) of a report folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from evaluator.core.console import console, err_console, fail


def companies(
    reports: Path = typer.Argument(
        ..., metavar="REPORTS_DIR", help="The --out folder of `evaluator fund evaluate`."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for companies.json, reports/<운용사>.md and companies.png."
    ),
    meta: Path | None = typer.Option(
        None, "--meta", help="Fund metadata whose 설정원본, 운용사 and 대표펀드코드 override the reports'."
    ),
    qualitative: Path | None = typer.Option(
        None,
        "--qualitative",
        help="Analysts' pillar scores per 운용사 (CSV / Excel, 1–5, Korean or English headers).",
    ),
    rubric: Path | None = typer.Option(
        None, "--rubric", help="Rubric JSON whose company_rating applies (default: built-in)."
    ),
    min_funds: int | None = typer.Option(
        None, "--min-funds", help="Override the rubric's minimum of rated funds."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace an existing --out folder (written beside it, swapped in when complete)."
    ),
    db: str | None = typer.Option(
        None,
        "--db",
        help="Also store the ratings with the report folder's batch in this database; default EVALUATOR_DB.",
    ),
) -> None:
    """Rate every 운용사: the 설정원본-weighted score of its graded funds, blended with the analysts' pillars."""
    from evaluator.domains.fund.cli.common import check_out_dir, expected_errors
    from evaluator.domains.fund.cli.services import services
    from evaluator.domains.fund.companies import rate_folder, write_companies
    from evaluator.domains.fund.rubric import resolve_rubric

    if min_funds is not None and min_funds < 1:
        fail("--min-funds must be at least 1")
    db_url = services().prepare_db(db)
    check_out_dir(out, force)
    try:
        doc = rate_folder(
            reports, resolve_rubric(rubric), meta=meta, qualitative=qualitative, min_funds=min_funds
        )
        written = write_companies(doc, out, force=force)
    except expected_errors() as exc:
        fail(escape(str(exc)))
    for w in doc["warnings"]:
        err_console.print(f"[yellow]warning:[/] {escape(w)}")
    _print_table(doc)
    console.print(
        f"{doc['counts']['rated']} of {doc['counts']['companies']} companies rated; companies.json, "
        f"{len(written.reports)} reports and {written.plot.name} in {out}"
    )
    if db_url is not None:
        services().store_companies(db_url, reports, doc)


def _print_table(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"운용사 등급 (as of {doc['as_of']})")
    for col in ("운용사", "등급", "점수", "계량", "정성", "펀드", "설정원본(억원)", "비고"):
        table.add_column(col, justify="left" if col in ("운용사", "비고") else "right")
    fmt = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
    for c in doc["companies"]:
        note = (
            (c["reasons"][0] if c["reasons"] else "")
            if c["status"] != "ok"
            else (
                "계량만"
                if c["basis"] == "quantitative_only" and doc["rule"]["weights"]["qualitative"]
                else ""
            )
        )
        table.add_row(
            escape(c["company"]), c["grade_label"] or "평가 제외", fmt(c["score"]), fmt(c["quantitative_score"]),
            fmt(c["qualitative_score"]), str(c["funds_rated"]),
            "-" if c["aum_krw"] is None else f"{c['aum_krw'] / 1e8:,.0f}", escape(note),
        )  # fmt: skip
    console.print(table)
