"""`evaluator fund evaluate` — grade a whole fund universe into per-fund JSON reports and the summaries."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import typer

from evaluator.core.console import console, err_console, fail
from evaluator.domains.fund.cli import services
from evaluator.domains.fund.cli.common import (
    BENCHMARK,
    CALENDAR,
    CLASS_INFERENCE,
    DATA_ARG,
    FORCE,
    RISK_FREE,
    RUBRIC,
    SAMPLE,
    SAMPLE_FUNDS,
    as_of_flag,
    check_out_dir,
    check_outliers,
    check_source,
    expected_errors,
    print_inputs,
    read_universe,
    run_notes,
)
from evaluator.domains.fund.cli.model_run import model_evaluations, model_options, print_model_summary

fund_app = typer.Typer(
    name="fund",
    help="Korean fund evaluation: metrics, peer-group grades (1등급 best … 5등급) and reports, by your methodology.",
    no_args_is_help=True,
)


def _print_summary(evaluation: Any, outcome: Any, warnings: list[str]) -> None:
    from rich.table import Table

    from evaluator.domains.fund.reports.data_checks import console_line, data_checks
    from evaluator.domains.fund.reports.report import grade_distribution

    table = Table(title=f"Grades by 유형 (as of {evaluation.as_of})")
    distribution = grade_distribution(evaluation.funds, evaluation.rubric)
    keys = list(next(iter(distribution.values()), {"not_rated": 0, "error": 0, "total": 0}))
    for col in (
        "유형",
        *(
            k.replace("_", " ").replace("p", "가", 1) if k[1:].isdigit() else k.replace("_", " ")
            for k in keys
        ),
    ):
        table.add_column(col, justify="left" if col == "유형" else "right")
    for fund_type, row in distribution.items():
        table.add_row(fund_type, *(str(row[k]) for k in keys))
    console.print(table)
    line = console_line(data_checks(evaluation))
    if line:
        err_console.print(f"[yellow]{line}[/]")
    for w in warnings:
        err_console.print(f"[yellow]warning:[/] {w}")
    if outcome.failures:
        err_console.print(f"[red]{len(outcome.failures)} report(s) could not be written; see summary.json[/]")
    console.print(f"{len(outcome.files)} reports, summary.json and summary.csv in {outcome.folder}")


@fund_app.command("evaluate")
def evaluate(
    data: Path | None = DATA_ARG,
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for <fund_code>.json reports and the summaries."
    ),
    meta: Path | None = typer.Option(
        None, "--meta", help="Fund metadata (펀드코드, 펀드명, 운용회사, 유형, 설정원본, …)."
    ),
    benchmark: Path | None = BENCHMARK,
    risk_free: str = RISK_FREE,
    rubric: Path | None = RUBRIC,
    as_of: str | None = typer.Option(
        None, "--as-of", help="Evaluation date YYYY-MM-DD (default: the last date)."
    ),
    sheet: str | None = typer.Option(
        None,
        "--sheet",
        help="Excel sheet of DATA (name or 1-based number; default: the first with a header).",
    ),
    calendar: Path | None = CALENDAR,
    allow_unadjusted: bool = typer.Option(
        False,
        "--allow-unadjusted",
        help="Grade funds whose 기준가격 shows unadjusted 결산 resets anyway (with a warning).",
    ),
    outliers: str = typer.Option(
        "error",
        "--outliers",
        help="NAV typos (a price far outside the fund's volatility that comes back): error (default: the fund "
        "is not graded), repair (read as missing, filled forward) or keep (graded as given); always with a reason.",
    ),
    type_column: str | None = typer.Option(
        None,
        "--type-column",
        help="The 유형 (peer-group) column when it is not 유형, e.g. 소유형, 중유형 or 대유형.",
    ),
    class_inference: bool = CLASS_INFERENCE,
    sample: bool = SAMPLE,
    sample_funds: int = SAMPLE_FUNDS,
    force: bool = FORCE,
    model: str | None = typer.Option(
        None, "--model", help="Also have this model (tiny, preset, hub id or path) evaluate every rated fund."
    ),
    adapter: Path | None = typer.Option(
        None, "--adapter", help="LoRA adapter folder for --model (e.g. RUN/final)."
    ),
    quantize: str | None = typer.Option(
        None, "--quantize", help="4bit or none for --model (default: 4bit on CUDA)."
    ),
    backend: str = typer.Option("hf", "--backend", help="Generation backend for --model: hf or vllm."),
    batch_size: int = typer.Option(8, "--batch-size", help="Prompts per generate call for --model."),
    max_new_tokens: int = typer.Option(512, "--max-new-tokens", help="Longest model answer, in tokens."),
    split: str = typer.Option(
        "all",
        "--split",
        help="Funds --model evaluates: all, or the GRPO task's train or test split (by fund code: test funds "
        "are ones a model trained on the task never saw).",
    ),
    db: str | None = typer.Option(
        None,
        "--db",
        help="Also store the batch in this database (sqlite:///PATH, postgresql+psycopg://…); default EVALUATOR_DB.",
    ),
) -> None:
    """Grade every fund and write one schema-valid JSON report per fund plus summary.json / summary.csv.

    With --model, the model also writes its own evaluation of every rated fund (the GRPO task's prompt);
    each report gets `model_evaluation` beside the engine's grade and summary.json counts disagreements.
    """
    check_source(data, sample)
    if sample and sample_funds < 20:
        fail("--sample-funds must be at least 20")
    inputs = {
        "sheet": sheet,
        "calendar": calendar,
        "allow_unadjusted": allow_unadjusted,
        "outliers": check_outliers(outliers),
        "type_column": type_column,
        "class_inference": class_inference,
    }
    chosen_model = model_options(model, adapter, quantize, backend, batch_size, max_new_tokens, split)
    db_url = services().prepare_db(db)
    check_out_dir(out, force)
    when = as_of_flag(as_of)
    files = {"data": data, "meta": meta, "benchmark": benchmark, "rubric": rubric}
    stages, written = run_evaluate(files, out, risk_free, when, sample_funds, force, chosen_model, inputs)
    if db_url is not None:
        t0 = time.perf_counter()
        services().store_folder(db_url, out, source="evaluate", texts=written)
        stages["store"] = time.perf_counter() - t0
    console.print("stages: " + " · ".join(f"{k} {v:.2f} s" for k, v in stages.items()), highlight=False)


def run_evaluate(
    files: dict[str, Path | None],
    out: Path,
    risk_free: str,
    as_of: dt.date | None,
    sample_funds: int,
    force: bool,
    chosen_model: dict[str, Any] | None,
    inputs: dict[str, Any],
) -> tuple[dict[str, float], dict[str, str]]:
    """Read, grade, (have the model evaluate,) write; any expected error ends the command with its message.

    ``files``: ``data`` (None: the built-in sample), ``meta``, ``benchmark``, ``rubric``. Returns the
    seconds each stage took (read, grade, model, write), which the command prints on one line, and the
    files as written (name → text), which storing the batch reads instead of the files."""
    from evaluator.domains.fund.rubric import resolve_rubric

    stages: dict[str, float] = {}
    try:
        t = time.perf_counter()
        doc = resolve_rubric(files["rubric"])
        universe = read_universe(
            files,
            risk_free=risk_free,
            options=inputs,
            sample_funds=sample_funds,
        )
        t = _lap(stages, "read", t)
        print_inputs(universe)
        evaluation = _grade(universe, doc, as_of, inputs)
        t = _lap(stages, "grade", t)
        evaluations, run = model_evaluations(evaluation, chosen_model) if chosen_model else (None, None)
        if chosen_model:
            t = _lap(stages, "model", t)
        outcome = _write(evaluation, out, force, universe.warnings, evaluations, run)
        _lap(stages, "write", t)
    except expected_errors() as exc:
        fail(str(exc))
    _print_summary(evaluation, outcome, [*universe.warnings, *run_notes(evaluation)])
    if evaluations is not None:
        print_model_summary(outcome)
    return stages, outcome.texts


def _lap(stages: dict[str, float], name: str, since: float) -> float:
    now = time.perf_counter()
    stages[name] = now - since
    return now


def _grade(universe: Any, doc: dict[str, Any], as_of: dt.date | None, inputs: dict[str, Any]) -> Any:
    """The engine on the loaded universe, with the batch's provenance (inputs, options, rubric)."""
    from evaluator.core.provenance import provenance
    from evaluator.domains.fund.engine.evaluate import evaluate_loaded

    with console.status(
        f"computing metrics and grades for {universe.navs.shape[1] + len(universe.issues)} funds…"
    ):
        evaluation = evaluate_loaded(
            universe,
            doc,
            as_of=as_of,
            allow_unadjusted=bool(inputs.get("allow_unadjusted")),
            outliers=str(inputs.get("outliers") or "error"),
        )
    evaluation.inputs["provenance"] = provenance({**universe.sources, **_options(inputs)}, doc)
    return evaluation


def _write(
    evaluation: Any,
    out: Path,
    force: bool,
    warnings: list[str],
    evaluations: dict[str, Any] | None,
    run: dict[str, Any] | None,
) -> Any:
    """Every report and the summaries, with a progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evaluator.domains.fund.reports.batch import write_reports

    columns = (TextColumn("writing reports"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("reports", total=len(evaluation.funds))
        return write_reports(
            evaluation,
            out,
            force=force,
            warnings=warnings,
            on_progress=lambda done, total: progress.update(task, completed=done),
            model_evaluations=evaluations,
            model_run=run,
        )


def _options(inputs: dict[str, Any]) -> dict[str, Any]:
    """Flags that change grades on the same files are part of a stored batch's identity (only when set, so
    a default run keeps the identity it always had)."""
    chosen = {
        "outliers": inputs.get("outliers") if inputs.get("outliers") not in (None, "error") else None,
        "type_column": inputs.get("type_column"),
        "allow_unadjusted": True if inputs.get("allow_unadjusted") else None,
        "class_inference": False if inputs.get("class_inference") is False else None,
    }
    chosen = {k: v for k, v in chosen.items() if v is not None}
    return {"options": chosen} if chosen else {}
