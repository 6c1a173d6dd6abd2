"""`evaluator fund` — grade a whole fund universe into per-fund JSON reports, or generate the sample universe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from evaluator.core.console import console, err_console, fail
from evaluator.domains.fund.cli import services

fund_app = typer.Typer(
    name="fund",
    help="Korean fund evaluation: metrics, peer-group grades (1등급 best … 5등급) and reports, by your methodology.",
    no_args_is_help=True,
)


def _expected_errors() -> tuple[type[BaseException], ...]:
    from evaluator.core.outputs import OutputExistsError
    from evaluator.domains.fund.data.readers import DataError
    from evaluator.methodology.rubric import RubricError

    return (DataError, RubricError, OutputExistsError)


def check_outliers(mode: str) -> str:
    """``--outliers``: error, repair or keep (checked before any work)."""
    from evaluator.domains.fund.engine.outliers import MODES

    mode = mode.strip().lower()
    if mode not in MODES:
        fail(f"--outliers must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def run_notes(evaluation: Any) -> list[str]:
    """What the engine says once for the whole run (a benchmark on its own calendar)."""
    return list((evaluation.inputs.get("calendar") or {}).get("notes") or [])


def _check_out_dir(out: Path, force: bool) -> None:
    """Refuse before any work, so a long batch never ends in "folder exists"."""
    if out.exists() and not out.is_dir():
        fail(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        fail(f"{out} already exists and is not empty; pass --force to write into it")


def _print_summary(evaluation: Any, outcome: Any, warnings: list[str]) -> None:
    from rich.table import Table

    from evaluator.domains.fund.reports.report import grade_distribution

    table = Table(title=f"Grades by 유형 (as of {evaluation.as_of})")
    for col in ("유형", "1", "2", "3", "4", "5", "not rated", "error", "total"):
        table.add_column(col, justify="left" if col == "유형" else "right")
    for fund_type, row in grade_distribution(evaluation.funds).items():
        table.add_row(
            fund_type, *(str(row[k]) for k in ("1", "2", "3", "4", "5", "not_rated", "error", "total"))
        )
    console.print(table)
    for w in warnings:
        err_console.print(f"[yellow]warning:[/] {w}")
    if outcome.failures:
        err_console.print(f"[red]{len(outcome.failures)} report(s) could not be written; see summary.json[/]")
    console.print(f"{len(outcome.files)} reports, summary.json and summary.csv in {outcome.folder}")


@fund_app.command("evaluate")
def evaluate(
    data: Path | None = typer.Argument(
        None, help="NAV data: long or wide CSV (utf-8 / cp949), Excel (.xlsx / .xls) or Parquet."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for <fund_code>.json reports and the summaries."
    ),
    meta: Path | None = typer.Option(
        None, "--meta", help="Fund metadata (펀드코드, 펀드명, 운용회사, 유형, 설정원본, …)."
    ),
    benchmark: Path | None = typer.Option(
        None, "--benchmark", help="Benchmark levels: one value column, or one per 유형."
    ),
    risk_free: str = typer.Option(
        "0", "--risk-free", help="Annual risk-free rate (0.03 or 3%) or a CSV of rates by date."
    ),
    rubric: Path | None = typer.Option(
        None, "--rubric", help="Rubric JSON (default: the built-in methodology)."
    ),
    as_of: str | None = typer.Option(
        None, "--as-of", help="Evaluation date YYYY-MM-DD (default: the last date)."
    ),
    sheet: str | None = typer.Option(
        None,
        "--sheet",
        help="Excel sheet of DATA (name or 1-based number; default: the first with a header).",
    ),
    calendar: Path | None = typer.Option(
        None,
        "--calendar",
        help="Market dates file (a date column); default: the dates most funds are priced on (the benchmark "
        "is aligned to them, never the other way round).",
    ),
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
        None, "--type-column", help="The 유형 (peer-group) column when it is not 유형, e.g. 소유형, 중유형 or 대유형."
    ),
    sample: bool = typer.Option(False, "--sample", help="Use the built-in synthetic Korean fund universe."),
    sample_funds: int = typer.Option(300, "--sample-funds", help="Funds in the --sample universe."),
    force: bool = typer.Option(False, "--force", help="Write into an existing, non-empty --out folder."),
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
    db: str | None = typer.Option(
        None, "--db", help="Also store the batch in this database (sqlite:///PATH, postgresql+psycopg://…); default EVALUATOR_DB."
    ),
) -> None:
    """Grade every fund and write one schema-valid JSON report per fund plus summary.json / summary.csv.

    With --model, the model also writes its own evaluation of every rated fund (the GRPO task's prompt);
    each report gets `model_evaluation` beside the engine's grade and summary.json counts disagreements.
    """
    if (data is None) == (not sample):
        fail("give either a DATA file or --sample (not both)")
    if sample and sample_funds < 20:
        fail("--sample-funds must be at least 20")
    outliers = check_outliers(outliers)
    model_options = _model_options(model, adapter, quantize, backend, batch_size, max_new_tokens)
    db_url = services().prepare_db(db)
    _check_out_dir(out, force)
    inputs = {
        "sheet": sheet,
        "calendar": calendar,
        "allow_unadjusted": allow_unadjusted,
        "outliers": outliers,
        "type_column": type_column,
    }
    _run_evaluate(
        data,
        out,
        meta,
        benchmark,
        risk_free,
        rubric,
        as_of,
        sample,
        sample_funds,
        force,
        model_options,
        inputs,
    )
    if db_url is not None:
        services().store_folder(db_url, out, source="evaluate")


def _model_options(
    model: str | None,
    adapter: Path | None,
    quantize: str | None,
    backend: str,
    batch_size: int,
    max_new_tokens: int,
) -> dict[str, Any] | None:
    """Check the --model flags before any work (a bad flag never costs a long engine run)."""
    if model is None:
        if adapter is not None:
            fail("--adapter needs --model (the base model the adapter was trained on)")
        return None
    if adapter is not None and not (adapter / "adapter_config.json").is_file():
        fail(f"--adapter {adapter} is not a LoRA adapter folder (no adapter_config.json in it)")
    if quantize is not None and quantize.lower() not in ("4bit", "none"):
        fail(f"--quantize must be 4bit or none, not {quantize!r}")
    if backend not in ("hf", "vllm"):
        fail(f"--backend must be hf or vllm, not {backend!r}")
    if batch_size < 1 or max_new_tokens < 1:
        fail("--batch-size and --max-new-tokens must be at least 1")
    return {
        "model": model,
        "adapter": str(adapter) if adapter is not None else None,
        "quantize": quantize,
        "backend": backend,
        "batch_size": batch_size,
        "max_new_tokens": max_new_tokens,
    }


def _model_evaluations(evaluation: Any, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every rated fund through the evaluation harness (one model load, batched) and the pack's own grader."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evaluator.domains.fund.task.model_eval import fund_rows, model_evaluations
    from evaluator.domains.registry import get_pack

    codes, rows, facts = fund_rows(evaluation)
    run: dict[str, Any] = {"model": options["model"], "adapter": options["adapter"], "generation": {}}
    if not codes:
        err_console.print("[yellow]warning:[/] no fund was rated, so the model has nothing to evaluate")
        return {}, run
    model = {k: options[k] for k in ("model", "adapter", "quantize", "backend")}
    try:
        columns = (TextColumn("model evaluations"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("generate", total=len(rows))
            report, samples = services().grade_with_model(
                get_pack("fund"),
                rows,
                model,
                style="json",
                extract="flexible",
                max_new_tokens=options["max_new_tokens"],
                batch_size=options["batch_size"],
                on_batch=lambda idx: progress.advance(task, len(idx)),
            )
    except (OSError, ValueError) as exc:
        fail(f"could not run --model {options['model']}: {exc}")
    run["generation"] = dict(report.get("generation") or {})
    evaluations = model_evaluations(codes, samples, facts, model=options["model"], adapter=options["adapter"])
    if report.get("n_errors"):
        err_console.print(
            f"[yellow]warning:[/] {report['n_errors']} fund(s) got no model answer; see their reports"
        )
    return evaluations, run


def _run_evaluate(
    data: Path | None,
    out: Path,
    meta: Path | None,
    benchmark: Path | None,
    risk_free: str,
    rubric: Path | None,
    as_of: str | None,
    sample: bool,
    sample_funds: int,
    force: bool,
    model_options: dict[str, Any] | None = None,
    inputs: dict[str, Any] | None = None,
) -> None:
    import pandas as pd
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evaluator.core.provenance import provenance
    from evaluator.domains.fund.data.loaders import load_universe
    from evaluator.domains.fund.data.sample import sample_universe
    from evaluator.domains.fund.engine.evaluate import evaluate_loaded
    from evaluator.domains.fund.reports.batch import write_reports
    from evaluator.domains.fund.rubric import resolve_rubric

    try:
        when = pd.Timestamp(as_of) if as_of else None
    except ValueError:
        fail(f"--as-of {as_of!r} is not a date; write it as YYYY-MM-DD")
    errors = _expected_errors()
    inputs = inputs or {}
    try:
        doc = resolve_rubric(rubric)
        with console.status("reading inputs…"):
            if sample:
                universe = sample_universe(funds=sample_funds, risk_free=risk_free, realistic=True)
            else:
                assert data is not None
                universe = load_universe(
                    data,
                    meta=meta,
                    benchmark=benchmark,
                    risk_free=risk_free,
                    sheet=inputs.get("sheet"),
                    calendar=inputs.get("calendar"),
                    type_column=inputs.get("type_column"),
                )
        _print_inputs(universe)
        with console.status(
            f"computing metrics and grades for {universe.navs.shape[1] + len(universe.issues)} funds…"
        ):
            evaluation = evaluate_loaded(
                universe,
                doc,
                as_of=when,
                allow_unadjusted=bool(inputs.get("allow_unadjusted")),
                outliers=str(inputs.get("outliers") or "error"),
            )
        evaluation.inputs["provenance"] = provenance({**universe.sources, **_options(inputs)}, doc)
        evaluations, run = _model_evaluations(evaluation, model_options) if model_options else (None, None)
        columns = (TextColumn("writing reports"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("reports", total=len(evaluation.funds))
            outcome = write_reports(
                evaluation,
                out,
                force=force,
                warnings=universe.warnings,
                on_progress=lambda done, total: progress.update(task, completed=done),
                model_evaluations=evaluations,
                model_run=run,
            )
    except errors as exc:
        fail(str(exc))
    _print_summary(evaluation, outcome, [*universe.warnings, *run_notes(evaluation)])
    if evaluations is not None:
        _print_model_summary(outcome)


def _options(inputs: dict[str, Any]) -> dict[str, Any]:
    """Flags that change grades on the same files are part of a stored batch's identity (only when set, so
    a default run keeps the identity it always had)."""
    chosen = {
        "outliers": inputs.get("outliers") if inputs.get("outliers") not in (None, "error") else None,
        "type_column": inputs.get("type_column"),
        "allow_unadjusted": True if inputs.get("allow_unadjusted") else None,
    }
    chosen = {k: v for k, v in chosen.items() if v is not None}
    return {"options": chosen} if chosen else {}


def _print_inputs(universe: Any) -> None:
    """Say how the inputs were read: which benchmark column, which sheet, which adjustment columns."""
    data = universe.sources.get("data") or {}
    if str(data.get("encoding", "")).startswith(("xlsx:", "xls:", "html:")):
        console.print(f"DATA read from {data['encoding']}")
    if data.get("adjustment_columns"):
        console.print(
            f"distributions: returns use {', '.join(data['adjustment_columns'])} where a fund has it"
        )
    bench = universe.sources.get("benchmark") or {}
    if bench.get("close_column"):
        console.print(
            f"benchmark: exchange export, using its {bench['close_column']!r} column as the index level"
        )
    elif bench.get("used_columns"):
        console.print(f"benchmark: per-유형 columns {', '.join(bench['used_columns'])}")
    elif bench.get("columns"):
        console.print(f"benchmark: column {bench['columns'][0]!r} for every fund")


def _print_model_summary(outcome: Any) -> None:
    import json

    block = json.loads(outcome.summary_json.read_text(encoding="utf-8")).get("model_evaluation") or {}
    console.print(
        f"model {block.get('model')}: {block.get('funds_evaluated', 0)} funds · agrees {block.get('agree', 0)} · "
        f"differs {block.get('disagree', 0)} · no readable grade {block.get('unreadable', 0)} · "
        f"schema-valid {block.get('schema_valid', 0)} (disagreements listed in summary.json)"
    )


@fund_app.command("generate-sample")
def generate_sample_cmd(
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="NAV file to write (.csv, .parquet or .xlsx); the benchmark goes beside it.",
    ),
    funds: int = typer.Option(300, "--funds", help="Number of funds (at least 20)."),
    years: int = typer.Option(6, "--years", help="Years of daily NAV."),
    seed: int = typer.Option(7, "--seed", help="Random seed (same seed, same universe)."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
) -> None:
    """Write the synthetic Korean fund universe (KOFIA-style long NAV file + benchmark per 유형)."""
    from evaluator.domains.fund.data.sample import generate_sample, write_sample

    if out.suffix.lower() not in (".csv", ".parquet", ".xlsx"):
        fail(f"--out must end in .csv, .parquet or .xlsx, not {out.suffix or '(no suffix)'}")
    try:
        sample = generate_sample(funds=funds, years=years, seed=seed, realistic=True)
    except ValueError as exc:
        fail(str(exc))
    try:
        nav_path, bench_path = write_sample(sample, out, force=force)
    except _expected_errors() as exc:
        fail(str(exc))
    console.print(f"wrote {nav_path} ({len(sample.rows):,} NAV rows, {funds} funds) and {bench_path}")
    console.print(f"try: evaluator fund evaluate {nav_path} --benchmark {bench_path} --out reports/")
