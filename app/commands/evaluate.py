"""`evaluator eval`, `evaluator score`, `evaluator compare`: the evaluation harness on the command line."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.app.config_options import generation_option, with_generation_options, with_metric_options
from evaluator.core.console import console, err_console, fail
from evaluator.models.generation import GenerationSettings


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


def eval_cmd(
    domain: str = typer.Option(..., help="Domain pack (`evaluator domains list`)."),
    model: str = typer.Option(..., help="Preset, tiny, hub id or local path."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for report.json and samples.jsonl."),
    adapter: Path = typer.Option(None, help="LoRA adapter folder (e.g. RUN/final)."),
    data: str = typer.Option(
        None,
        help="The pack's data source (`evaluator domains list` shows what each pack takes); default: the pack's.",
    ),
    split: str = typer.Option("test", help="Dataset split."),
    limit: int = typer.Option(None, help="Evaluate only the first N items."),
    generation: GenerationSettings | None = None,
    style: str = typer.Option(
        None, help="Prompt style (`evaluator domains list` shows each pack's; default: the rubric's)."
    ),
    language: str = typer.Option(
        None, help="System prompt language, one of the pack's (default: its first)."
    ),
    backend: str = typer.Option("hf", help="hf (anywhere) or vllm (CUDA with vllm installed)."),
    quantize: str = typer.Option(None, help="4bit or none (default: 4bit on CUDA, none on CPU)."),
    extract: str = typer.Option("strict", help="Which reading fills samples' extracted/correct."),
    seed: int = generation_option("seed"),
    force: bool = typer.Option(
        False, "--force", help="Replace a non-empty --out folder (written beside it, swapped in when complete)."
    ),
    metric_options: dict | None = None,
) -> None:
    """Generate with a model (+ adapter) on a pack's data and grade with the pack's own grader."""
    from evaluator.evaluation.harness import evaluate
    from evaluator.evaluation.inputs import Items, ModelRef, ReportFolder
    from evaluator.evaluation.report import render_report

    _check_extract(extract)
    if adapter is not None and not adapter.is_dir():
        fail(f"adapter folder {adapter} does not exist")
    pack = _pack(domain, metric_options or {})
    report = _run(
        evaluate,
        pack,
        ModelRef(model, adapter=adapter, quantize=quantize, backend=backend),
        Items(data=data, split=split, limit=limit, style=style, language=language),
        generation,  # its seed is --seed, which also seeds the data sample and the bootstrap
        extract=extract,
        out=ReportFolder(out, force=force),
    )
    render_report(report, console)
    console.print(f"wrote {out / 'report.json'} and {out / 'samples.jsonl'}")


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
    app.command("eval")(with_metric_options(with_generation_options(eval_cmd)))
    app.command("score")(with_metric_options(score_cmd))
    app.command("compare")(compare_cmd)
