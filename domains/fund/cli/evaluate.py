"""`evaluator fund evaluate` — grade a whole fund universe into per-fund JSON reports and the summaries."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from evaluator.core.batch_gc import collector_paused
from evaluator.core.cli_options import flag, group, options_command
from evaluator.core.console import console, err_console, fail
from evaluator.core.generation import GenerationSettings, ModelRef
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
from evaluator.domains.fund.cli.model_run import (
    MODEL_GENERATION,
    MODEL_HELP,
    ModelRun,
    model_evaluations,
    model_options,
    print_model_summary,
)
from evaluator.domains.fund.cli.services import services

fund_app = typer.Typer(
    name="fund",
    help="Korean fund evaluation: metrics, peer-group grades (1등급 best … 5등급) and reports, by your methodology.",
    no_args_is_help=True,
)


def _print_summary(evaluation: Any, outcome: Any, warnings: list[str]) -> None:
    from rich.table import Table

    from evaluator.domains.fund.reports import console_line, data_checks, grade_distribution

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


@dataclass(frozen=True)
class EvaluateOptions:
    """Every flag of ``fund evaluate``: the inputs, the engine's options, and the model run (``--model``), whose
    flags come from the shared ``ModelRef`` and ``GenerationSettings`` declarations."""

    data: Path | None = flag(DATA_ARG)
    out: Path = flag(typer.Option(..., "--out", "-o", help="Folder for <fund_code>.json reports and the summaries."))
    meta: Path | None = flag(
        typer.Option(None, "--meta", help="Fund metadata (펀드코드, 펀드명, 운용회사, 유형, 설정원본, …).")
    )
    benchmark: Path | None = flag(BENCHMARK)
    risk_free: str = flag(RISK_FREE)
    rubric: Path | None = flag(RUBRIC)
    as_of: str | None = flag(typer.Option(None, "--as-of", help="Evaluation date YYYY-MM-DD (default: the last date)."))
    sheet: str | None = flag(
        typer.Option(
            None, "--sheet", help="Excel sheet of DATA (name or 1-based number; default: the first with a header)."
        )
    )
    calendar: Path | None = flag(CALENDAR)
    allow_unadjusted: bool = flag(
        typer.Option(
            False,
            "--allow-unadjusted",
            help="Grade funds whose 기준가격 shows unadjusted 결산 resets anyway (with a warning).",
        )
    )
    outliers: str = flag(
        typer.Option(
            "error",
            "--outliers",
            help="NAV typos (a price far outside the fund's volatility that comes back): error (default: the fund "
            "is not graded), repair (read as missing, filled forward) or keep (graded as given); always with a reason.",
        )
    )
    type_column: str | None = flag(
        typer.Option(
            None, "--type-column", help="The 유형 (peer-group) column when it is not 유형, e.g. 소유형, 중유형 or 대유형."
        )
    )
    class_inference: bool = flag(CLASS_INFERENCE)
    sample: bool = flag(SAMPLE)
    sample_funds: int = flag(SAMPLE_FUNDS)
    force: bool = flag(FORCE)
    model: ModelRef | None = group(ModelRef, ("model", "adapter", "quantize", "backend"), optional=True, help=MODEL_HELP)
    generation: GenerationSettings = group(
        GenerationSettings, ("batch_size", "max_new_tokens"), defaults=MODEL_GENERATION, help=MODEL_HELP
    )
    split: str = flag(
        typer.Option(
            "all",
            "--split",
            help="Funds --model evaluates: all, or the GRPO task's train or test split (by fund code: test funds "
            "are ones a model trained on the task never saw).",
        )
    )
    db: str | None = flag(
        typer.Option(
            None,
            "--db",
            help="Also store the batch in this database (sqlite:///PATH, postgresql+psycopg://…); default EVALUATOR_DB.",
        )
    )


@fund_app.command("evaluate")
@options_command(EvaluateOptions)
def evaluate(opts: EvaluateOptions) -> None:
    """Grade every fund and write one schema-valid JSON report per fund plus summary.json / summary.csv.

    With --model, the model also writes its own evaluation of every rated fund (the GRPO task's prompt);
    each report gets `model_evaluation` beside the engine's grade and summary.json counts disagreements.
    """
    with collector_paused(opts.model is None):  # a one-shot batch (a model's generation keeps it): core/batch_gc.py
        check_source(opts.data, opts.sample)
        if opts.sample and opts.sample_funds < 20:
            fail("--sample-funds must be at least 20")
        opts = dataclasses.replace(opts, outliers=check_outliers(opts.outliers))
        chosen_model = model_options(opts.model, opts.generation, opts.split)
        db_url = services().prepare_db(opts.db)
        check_out_dir(opts.out, opts.force)
        stages, written = run_evaluate(opts, as_of_flag(opts.as_of), chosen_model)
        if db_url is not None:
            t0 = time.perf_counter()
            services().store_folder(db_url, opts.out, source="evaluate", texts=written)
            stages["store"] = time.perf_counter() - t0
    console.print("stages: " + " · ".join(f"{k} {v:.2f} s" for k, v in stages.items()), highlight=False)


def run_evaluate(opts: EvaluateOptions, as_of: dt.date | None, chosen_model: ModelRun | None) -> tuple[dict[str, float], dict[str, str]]:
    """Read, grade, (have the model evaluate,) write; any expected error ends the command with its message.

    ``opts.data`` None reads the built-in sample. Returns the seconds each stage took (read, grade, model,
    write), which the command prints on one line, and the files as written (name → text), which storing the
    batch reads instead of the files."""
    from evaluator.domains.fund.rubric import resolve_rubric

    stages: dict[str, float] = {}
    try:
        t = time.perf_counter()
        doc = resolve_rubric(opts.rubric)
        universe = read_universe(opts)
        t = _lap(stages, "read", t)
        print_inputs(universe)
        evaluation = _grade(universe, doc, as_of, opts)
        t = _lap(stages, "grade", t)
        evaluations, run = model_evaluations(evaluation, chosen_model) if chosen_model else (None, None)
        if chosen_model:
            t = _lap(stages, "model", t)
        outcome = _write(evaluation, opts.out, opts.force, universe.warnings, evaluations, run)
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


def _grade(universe: Any, doc: dict[str, Any], as_of: dt.date | None, opts: EvaluateOptions) -> Any:
    """The engine on the loaded universe, with the batch's provenance (inputs, options, rubric)."""
    from evaluator.core.provenance import input_hashes_soon, provenance
    from evaluator.domains.fund.engine import evaluate_loaded

    sources = {**universe.sources, **_options(opts)}
    hashes = input_hashes_soon(sources)  # on the next core while the engine grades
    with console.status(
        f"computing metrics and grades for {universe.navs.shape[1] + len(universe.issues)} funds…"
    ):
        evaluation = evaluate_loaded(
            universe,
            doc,
            as_of=as_of,
            allow_unadjusted=opts.allow_unadjusted,
            outliers=opts.outliers,
        )
    evaluation.inputs["provenance"] = provenance(sources, doc, hashes)
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

    from evaluator.domains.fund.reports import write_reports

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


def _options(opts: EvaluateOptions) -> dict[str, Any]:
    """Flags that change grades on the same files are part of a stored batch's identity (only when set, so
    a default run keeps the identity it always had)."""
    chosen = {
        "outliers": opts.outliers if opts.outliers != "error" else None,
        "type_column": opts.type_column,
        "allow_unadjusted": True if opts.allow_unadjusted else None,
        "class_inference": False if opts.class_inference is False else None,
    }
    chosen = {k: v for k, v in chosen.items() if v is not None}
    return {"options": chosen} if chosen else {}
