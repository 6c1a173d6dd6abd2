"""`evaluator methodology` — rubric JSON ⇄ methodology PDF, and validation in plain words."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.app.console import console, err_console, fail

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
    from evaluator.methodology.outputs import OutputExistsError
    from evaluator.methodology.pdf_render import render_pdf

    doc = _rubric_or_default(rubric)
    try:
        written = render_pdf(doc, out, force=force)
    except (OutputExistsError, ValueError) as exc:
        fail(str(exc))
    console.print(f"wrote {written}")


@methodology_app.command("ingest")
def ingest(
    pdf: Path = typer.Argument(..., help="Methodology PDF (as written by `methodology render`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Rubric JSON file to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Read a methodology PDF back into a rubric that validates."""
    from evaluator.methodology.outputs import OutputExistsError, atomic_write_json, ensure_new_file
    from evaluator.methodology.pdf_ingest import IngestError, ingest_pdf

    try:
        target = ensure_new_file(out, force=force)
        doc = ingest_pdf(pdf)
        atomic_write_json(target, doc)
    except (IngestError, OutputExistsError) as exc:
        fail(str(exc))
    console.print(
        f"wrote {target}: {doc['name']} (version {doc['version']}), {len(doc['criteria'])} criteria"
    )


@methodology_app.command("export")
def export(
    out: Path = typer.Option(..., "--out", "-o", help="Rubric JSON file to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Write the built-in sample methodology's rubric, as a starting point for your own."""
    from evaluator.domains.fund.rubric import default_rubric
    from evaluator.methodology.outputs import OutputExistsError, atomic_write_json, ensure_new_file

    try:
        atomic_write_json(ensure_new_file(out, force=force), default_rubric())
    except OutputExistsError as exc:
        fail(str(exc))
    console.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    app.add_typer(methodology_app, name="methodology")
