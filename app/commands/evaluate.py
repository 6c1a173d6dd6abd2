"""`evaluator eval`, `evaluator score`, `evaluator compare`: the evaluation harness on the command line."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import typer

from evaluator.app.config_options import with_metric_options
from evaluator.core.cli_options import flag, group, options_command
from evaluator.core.console import console, err_console, fail
from evaluator.core.generation import GenerationSettings, ModelRef


def _expected_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean bad input or a missing file, shown as one clean paragraph."""
    from evaluator.core.outputs import OutputExistsError
    from evaluator.core.schemas import SchemaError
    from evaluator.domains.base import PackError
    from evaluator.evaluation.backends import GenerationError

    return (
        PackError,
        GenerationError,
        OutputExistsError,
        SchemaError,
        FileNotFoundError,
        ValueError,
        OSError,
    )


def _run(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _expected_errors() as exc:
        fail(str(exc))


def _check_extract(extract: str) -> None:
    if extract not in ("strict", "flexible"):
        fail(f"--extract must be strict or flexible, not {extract!r}")


def _pack(domain: str, metric_options: dict):
    """The pack, with its metric options set (a pack without such a metric refuses them by name)."""
    from evaluator.domains.registry import get_pack

    pack = _run(get_pack, domain)
    given = {k: (str(v) if isinstance(v, Path) else v) for k, v in metric_options.items()}
    return _run(pack.configure_metrics, **given)


@dataclass(frozen=True)
class EvalOptions:
    """Every flag of ``evaluator eval``: the model (``ModelRef``) and decoding (``GenerationSettings``) come from
    their declarations; the pack, items and output are this command's own."""

    domain: str = flag(typer.Option(..., help="Domain pack (`evaluator domains list`)."))
    model: ModelRef = group(ModelRef, ("model", "adapter", "backend", "quantize"))
    out: Path = flag(typer.Option(..., "--out", "-o", help="Folder for report.json and samples.jsonl."))
    data: str | None = flag(
        typer.Option(
            None,
            help="The pack's data source (`evaluator domains list` shows what each pack takes); default: the pack's.",
        )
    )
    split: str = flag(typer.Option("test", help="Dataset split."))
    limit: int | None = flag(typer.Option(None, help="Evaluate only the first N items."))
    generation: GenerationSettings = group(GenerationSettings, [f.name for f in dataclasses.fields(GenerationSettings)])
    style: str | None = flag(
        typer.Option(None, help="Prompt style (`evaluator domains list` shows each pack's; default: the rubric's).")
    )
    language: str | None = flag(
        typer.Option(None, help="System prompt language, one of the pack's (default: its first).")
    )
    extract: str = flag(typer.Option("strict", help="Which reading fills samples' extracted/correct."))
    force: bool = flag(
        typer.Option(
            False, "--force", help="Replace a non-empty --out folder (written beside it, swapped in when complete)."
        )
    )

    flag_order: ClassVar[tuple[str, ...]] = (
        "domain", "model", "out", "adapter", "data", "split", "limit", "samples", "temperature", "top_p", "top_k",
        "batch_size", "max_new_tokens", "style", "language", "backend", "quantize", "extract", "seed", "force",
    )  # fmt: skip


def eval_cmd(opts: EvalOptions, metric_options: dict | None = None) -> None:
    """Generate with a model (+ adapter) on a pack's data and grade with the pack's own grader."""
    from evaluator.evaluation.harness import evaluate
    from evaluator.evaluation.inputs import Items, ReportFolder
    from evaluator.evaluation.report import render_report

    _check_extract(opts.extract)
    adapter = opts.model.adapter
    if adapter is not None and not Path(adapter).is_dir():
        fail(f"adapter folder {adapter} does not exist")
    pack = _pack(opts.domain, metric_options or {})
    report = _run(
        evaluate,
        pack,
        opts.model,
        Items(data=opts.data, split=opts.split, limit=opts.limit, style=opts.style, language=opts.language),
        opts.generation,  # its seed is --seed, which also seeds the data sample and the bootstrap
        extract=opts.extract,
        out=ReportFolder(opts.out, force=opts.force),
    )
    render_report(report, console)
    console.print(f"wrote {opts.out / 'report.json'} and {opts.out / 'samples.jsonl'}")


def score_cmd(
    domain: str = typer.Option(..., help="Domain pack (`evaluator domains list`)."),
    predictions: Path = typer.Option(..., help="JSONL with question, answer and completion per line."),
    out: Path = typer.Option(..., "--out", "-o", help="Report JSON to write."),
    samples_out: Path = typer.Option(None, "--samples-out", help="Per-line verdicts (JSONL)."),
    style: str = typer.Option(None, help="Prompt style the completions follow (default: the pack's)."),
    extract: str = typer.Option("strict", help="strict (the style's answer slot) or flexible (last number)."),
    seed: int = typer.Option(0, help="Seed for the bootstrap intervals."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    metric_options: dict | None = None,
) -> None:
    """Score completions that already exist — no model needed."""
    from evaluator.core.outputs import ensure_new_file
    from evaluator.evaluation.predictions import score_predictions
    from evaluator.evaluation.report import render_report, write_report, write_samples

    _check_extract(extract)
    pack = _pack(domain, metric_options or {})
    _run(ensure_new_file, out, force=force)
    if samples_out is not None:
        if samples_out.resolve() == out.resolve():
            fail("--out and --samples-out must be different files")
        _run(ensure_new_file, samples_out, force=force)
    report, samples = _run(
        score_predictions,
        pack,
        predictions,
        style=style,
        extract=extract,
        seed=seed,
        samples_file=str(samples_out) if samples_out else None,
    )
    if samples_out is not None:
        _run(write_samples, samples_out, samples)
    _run(write_report, out, report)
    render_report(report, console)
    if report.get("n_invalid_lines"):
        err_console.print(
            f"[yellow]{report['n_invalid_lines']} line(s) could not be read; see errors in {out}"
        )
    console.print(f"wrote {out}" + (f" and {samples_out}" if samples_out else ""))


def compare_cmd(
    report_a: Path = typer.Argument(..., help="Baseline report.json (or its folder)."),
    report_b: Path = typer.Argument(..., help="Candidate report.json (or its folder)."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the comparison as JSON."),
    seed: int = typer.Option(0, help="Seed for the paired bootstrap."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --out file."),
) -> None:
    """Paired comparison of two reports on the same items: delta, 95% CI, McNemar, flips."""
    from evaluator.core.outputs import atomic_write_json, ensure_new_file
    from evaluator.evaluation.compare import compare_reports, render_comparison
    from evaluator.evaluation.harness import load_report

    if out is not None:
        _run(ensure_new_file, out, force=force)
    a = _run(load_report, report_a)
    b = _run(load_report, report_b)
    result = _run(compare_reports, a, b, seed, labels=(str(report_a), str(report_b)))
    render_comparison(result, console)
    if out is not None:
        _run(atomic_write_json, out, result)
        console.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("eval")(with_metric_options(options_command(EvalOptions)(eval_cmd)))
    app.command("score")(with_metric_options(score_cmd))
    app.command("compare")(compare_cmd)
