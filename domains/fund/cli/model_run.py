"""``fund evaluate --model``: check the model flags before any work, run the model on every rated fund, say
how often it agreed with the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.core.console import console, err_console, fail
from evaluator.domains.fund.cli.services import services


def model_options(
    model: str | None,
    adapter: Path | None,
    quantize: str | None,
    backend: str,
    batch_size: int,
    max_new_tokens: int,
    split: str = "all",
) -> dict[str, Any] | None:
    """Check the --model flags before any work (a bad flag never costs a long engine run)."""
    from evaluator.domains.fund.task.dataset import SPLITS

    if split not in SPLITS:
        fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    if model is None and split != "all":
        fail("--split chooses the funds --model evaluates; give --model too")
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
        "split": split,
        "quantize": quantize,
        "backend": backend,
        "batch_size": batch_size,
        "max_new_tokens": max_new_tokens,
    }


def model_evaluations(evaluation: Any, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every rated fund through the evaluation harness (one model load, batched) and the pack's own grader."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evaluator.domains.fund.task.model_eval import fund_rows
    from evaluator.domains.fund.task.model_eval import model_evaluations as evaluations_of
    from evaluator.domains.registry import get_pack

    codes, rows, facts = fund_rows(evaluation, options.get("split", "all"))
    run: dict[str, Any] = {
        "model": options["model"],
        "adapter": options["adapter"],
        "split": options.get("split", "all"),
        "generation": {},
    }
    if not codes:
        err_console.print(
            f"[yellow]warning:[/] no rated fund in the {options.get('split', 'all')} split, so the model has nothing to evaluate"
        )
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
    evaluations = evaluations_of(codes, samples, facts, model=options["model"], adapter=options["adapter"])
    if report.get("n_errors"):
        err_console.print(
            f"[yellow]warning:[/] {report['n_errors']} fund(s) got no model answer; see their reports"
        )
    return evaluations, run


def print_model_summary(outcome: Any) -> None:
    """One line: how many funds the model evaluated and how often it agreed with the engine."""
    import json

    block = json.loads(outcome.summary_json.read_text(encoding="utf-8")).get("model_evaluation") or {}
    console.print(
        f"model {block.get('model')}: {block.get('funds_evaluated', 0)} funds · agrees {block.get('agree', 0)} · "
        f"differs {block.get('disagree', 0)} · no readable grade {block.get('unreadable', 0)} · "
        f"schema-valid {block.get('schema_valid', 0)} (disagreements listed in summary.json)"
    )
