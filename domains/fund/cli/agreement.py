"""`evaluator fund agreement` — how far the engine's (and a model's) grades are from the firm's analysts'."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from evaluator.core.console import console, err_console, fail

BY_TYPE = {"유형", "type", "펀드유형", "fund_type"}
JSON_NAME = "agreement.json"
CSV_NAME = "agreement.csv"
FUNDS_CSV_NAME = "agreement_funds.csv"
PNG_NAME = "agreement_confusion.png"
BY_TYPE_PNG_NAME = "agreement_confusion_by_type.png"


def _csv_text(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def _targets(out: Path, by_type: bool, force: bool) -> list[Path]:
    """Every file this run writes, refused up front when one exists (before any reading or bootstrap)."""
    if out.exists() and not out.is_dir():
        fail(escape(f"{out} exists and is not a folder"))
    names = [JSON_NAME, CSV_NAME, FUNDS_CSV_NAME, PNG_NAME] + ([BY_TYPE_PNG_NAME] if by_type else [])
    targets = [out / n for n in names]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        fail(escape(f"{', '.join(existing)} already exist(s); pass --force to overwrite"))
    return targets


def agreement(
    reports: Path = typer.Argument(
        ...,
        metavar="REPORTS_DIR",
        help="The --out folder of `evaluator fund evaluate` (summary.json + reports).",
    ),
    experts: Path = typer.Option(
        ...,
        "--experts",
        help="Analysts' grades: 펀드코드/fund_code, 등급/grade [, 평가자/analyst, 기준일자/as_of]; CSV or .xlsx.",
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for agreement.json, agreement.csv and the heat map."
    ),
    by: str | None = typer.Option(None, "--by", help="유형: every figure also per 유형 (peer group)."),
    rubric: Path | None = typer.Option(
        None, "--rubric", help="The rubric the reports were graded with (default: the built-in methodology)."
    ),
    resamples: int = typer.Option(
        2000, "--resamples", help="Bootstrap resamples for the 95% CIs (0: no CI)."
    ),
    seed: int = typer.Option(0, "--seed", help="Bootstrap random seed."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing agreement files in --out."),
) -> None:
    """Compare the engine's grades (and `model_evaluation` grades) with the analysts': exact and within-one
    agreement, quadratic-weighted κ with a bootstrap CI, confusion matrix, largest disagreements, and the
    analysts' agreement with each other as the ceiling."""
    from evaluator.core.outputs import OutputExistsError, atomic_write_json, atomic_write_text
    from evaluator.core.schemas import validate_or_raise
    from evaluator.domains.fund.agreement import (
        agreement_schema,
        build_agreement,
        csv_rows,
        fund_rows,
        read_batch,
        read_experts,
    )
    from evaluator.domains.fund.rubric import resolve_rubric
    from evaluator.domains.fund.types import DataError
    from evaluator.methodology.rubric import RubricError

    if by is not None and by.strip().lower() not in BY_TYPE:
        fail(escape(f"--by accepts 유형 (or type), not {by!r}"))
    if resamples < 0:
        fail("--resamples must be 0 or more")
    if out.resolve() == reports.resolve():
        fail("--out must be its own folder, not the reports folder (its files would mix with the reports)")
    by_type = by is not None
    targets = _targets(out, by_type, force)
    try:
        doc_rubric = resolve_rubric(rubric)
        batch = read_batch(reports)
        want = {"name": str(doc_rubric["name"]), "version": str(doc_rubric["version"])}
        if batch.rubric != want:
            fail(
                escape(
                    f"the reports were graded with rubric {batch.rubric['name']} {batch.rubric['version']}, not "
                    f"{want['name']} {want['version']}; pass that rubric with --rubric"
                )
            )
        bands = sorted(doc_rubric["grade_bands"], key=lambda b: int(b["grade"]))
        labels = [str(b["label"]) for b in bands]
        with console.status("reading the analysts' grades…"):
            graded = read_experts(experts, len(labels), batch.as_of)
        with console.status(f"comparing grades ({resamples} bootstrap resamples)…"):
            doc = build_agreement(graded, batch, labels, by_type=by_type, resamples=resamples, seed=seed)
        validate_or_raise(doc, agreement_schema(), "agreement.json")
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(targets[0], doc)
        atomic_write_text(targets[1], _csv_text(csv_rows(doc)), encoding="utf-8-sig")
        atomic_write_text(targets[2], _csv_text(fund_rows(doc, graded, batch)), encoding="utf-8-sig")
        _draw(doc, targets[3], targets[4] if by_type else None)
    except (DataError, RubricError, OutputExistsError, OSError) as exc:
        fail(escape(str(exc)))  # messages quote the user's cells and codes: never read them as markup
    for note in doc["notes"]:
        err_console.print(f"[yellow]참고:[/] {escape(note)}")
    console.print(escape(doc["summary_ko"]))
    console.print(escape(f"wrote {', '.join(t.name for t in targets)} in {out}"))


def _draw(doc: dict[str, Any], overall: Path, by_type: Path | None) -> None:
    from evaluator.core.plotting import cjk_font, save_png, style
    from evaluator.domains.fund.agreement import by_type_figure, confusion_figure
    from evaluator.domains.fund.reports import label

    hangul = cjk_font() is not None
    with style():
        save_png(confusion_figure(doc, hangul), overall)
        if by_type is not None:
            fig = by_type_figure(doc, hangul, label)
            if fig is not None:
                save_png(fig, by_type)
