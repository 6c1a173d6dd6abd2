"""`evaluator methodology` — rubric JSON ⇄ methodology PDF, and validation in plain words."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from evaluator.core.console import console, err_console, fail

methodology_app = typer.Typer(
    name="methodology",
    help="Fund-rating methodologies: validate a rubric, render it as a Korean PDF, read such a PDF back.",
    no_args_is_help=True,
)


def _rubric_or_default(path: Path | None) -> dict:
    from evaluator.domains.fund.rubric import resolve_rubric
    from evaluator.methodology.rubric import RubricError

    try:
        return resolve_rubric(path)
    except RubricError as exc:
        fail(str(exc))


@methodology_app.command("validate")
def validate(rubric: Path = typer.Argument(..., help="Rubric JSON file.")) -> None:
    """Check a rubric and explain every problem (weights not adding up, unknown metric, missing band …)."""
    from evaluator.methodology.rubric import RubricError, load_rubric

    try:
        doc = load_rubric(rubric)
    except RubricError as exc:
        err_console.print(f"[bold red]{rubric} is not a valid rubric[/] ({len(exc.problems)} problem(s)):")
        for problem in exc.problems:
            err_console.print(f"  - {problem}")
        raise typer.Exit(1) from None
    metrics = sum(len(c["metrics"]) for c in doc["criteria"])
    console.print(
        f"[green]valid[/]: {doc['name']} (version {doc['version']}) — {len(doc['criteria'])} criteria, {metrics} metrics, "
        f"{len(doc['peer_groups'])} peer groups, {len(doc['grade_bands'])} grade bands"
    )


@methodology_app.command("render")
def render(
    rubric: Path | None = typer.Argument(
        None, help="Rubric JSON (default: the built-in sample methodology)."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="PDF file to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Write the methodology as a Korean PDF: text, a criteria/weights table and a grade-band table."""
    from evaluator.core.outputs import OutputExistsError
    from evaluator.methodology.pdf_render import render_pdf

    doc = _rubric_or_default(rubric)
    try:
        written = render_pdf(doc, out, force=force)
    except (OutputExistsError, ValueError) as exc:
        fail(str(exc))
    console.print(f"wrote {written}")


def _print_values(report: dict) -> None:
    """A compact Korean/English table of what was read and where."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="읽은 값 / values read", show_lines=False)
    table.add_column("항목 field", overflow="fold")
    table.add_column("값 value", overflow="fold", max_width=40)
    table.add_column("쪽 page", justify="right")
    table.add_column("출처 source (cell / sentence)", overflow="fold", max_width=60)
    for v in report["values"]:
        value = v["value"]
        if isinstance(value, float):
            shown = f"{value:.6g}"
        else:
            shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        table.add_row(escape(v["field"]), escape(shown[:80]), str(v["page"] or "-"), escape(v["where"][:140]))
    console.print(table)


def _load_fill(path: Path | None) -> dict | None:
    if path is None:
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        fail(f"--fill: {path} does not exist")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        fail(f"--fill: {path} is not readable JSON ({exc})")
    if not isinstance(doc, dict):
        fail(f"--fill: {path} must hold a JSON object (a partial rubric), not {type(doc).__name__}")
    return doc


@methodology_app.command("ingest")
def ingest(
    pdf: Path = typer.Argument(..., help="Methodology PDF: one `methodology render` wrote, or a firm's own document."),
    out: Path = typer.Option(..., "--out", "-o", help="Rubric JSON file to write."),
    report: Path | None = typer.Option(
        None, "--report", help="Write what was read, with page and cell/sentence for every value (JSON)."
    ),
    draft: Path | None = typer.Option(
        None, "--draft", help="Also write whatever was found, complete or not, for an analyst to finish."
    ),
    fill: Path | None = typer.Option(
        None, "--fill", help="An analyst's partial rubric JSON merged on top of what was read."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
) -> None:
    """Read a methodology PDF into a rubric; exit 1 listing exactly what is missing or ambiguous, and where."""
    from rich.markup import escape

    from evaluator.core.outputs import OutputExistsError, atomic_write_json, ensure_new_file
    from evaluator.methodology.pdf_ingest import IngestError, ingest_with_report

    try:
        targets = [ensure_new_file(p, force=force) for p in (out, report, draft) if p is not None]
    except OutputExistsError as exc:
        fail(str(exc))
    partial = _load_fill(fill)
    try:
        doc, found = ingest_with_report(pdf, partial)
    except IngestError as exc:
        if exc.report is None:
            fail(escape(str(exc)))
        if report is not None:
            atomic_write_json(report, exc.report)
        if draft is not None and exc.draft is not None:
            atomic_write_json(draft, exc.draft)
        _print_values(exc.report)
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
        written = [str(p) for p in (report, draft) if p is not None and p.exists()]
        if written:
            err_console.print(f"wrote {', '.join(written)}; no rubric was written to {out}")
        raise typer.Exit(1) from None
    atomic_write_json(targets[0], doc)
    if report is not None:
        atomic_write_json(report, found)
    if draft is not None:
        atomic_write_json(draft, doc)
    _print_values(found)
    for note in found["notes"]:
        console.print(f"note: {escape(note)}")
    console.print(
        f"wrote {out}: {doc['name']} (version {doc['version']}), {len(doc['criteria'])} criteria"
    )


@methodology_app.command("export")
def export(
    out: Path = typer.Option(..., "--out", "-o", help="Rubric JSON file to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Write the built-in sample methodology's rubric, as a starting point for your own."""
    from evaluator.core.outputs import OutputExistsError, atomic_write_json, ensure_new_file
    from evaluator.domains.fund.rubric import default_rubric

    try:
        atomic_write_json(ensure_new_file(out, force=force), default_rubric())
    except OutputExistsError as exc:
        fail(str(exc))
    console.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    app.add_typer(methodology_app, name="methodology")
