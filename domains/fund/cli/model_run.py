"""``fund evaluate --model``: check the model flags before any work, run the model on every rated fund, say
how often it agreed with the engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.console import console, err_console, fail
from evaluator.core.generation import BACKENDS, GenerationSettings, ModelRef
from evaluator.domains.fund.cli.services import services

MODEL_GENERATION = GenerationSettings(batch_size=8, max_new_tokens=512)
"""The fund task's decoding for ``--model``: a fund's prompt carries its facts table and its answer is a JSON
evaluation with a Korean rationale, so fewer prompts a call and longer answers than the shared defaults."""

MODEL_HELP = {
    "model": "Also have this model (tiny, preset, hub id or path) evaluate every rated fund.",
    "adapter": "LoRA adapter folder for --model (e.g. RUN/final).",
    "quantize": "4bit or none for --model (default: 4bit on CUDA).",
    "backend": "Generation backend for --model: hf or vllm.",
    "batch_size": "Prompts per generate call for --model.",
    "max_new_tokens": "Longest model answer, in tokens.",
}
"""The shared flags' help, worded for what ``--model`` does here."""


@dataclass(frozen=True)
class ModelRun:
    """What ``--model`` runs: the model (its adapter as a checked folder), its decoding and which funds."""

    ref: ModelRef
    generation: GenerationSettings
    split: str = "all"

    @property
    def adapter(self) -> str | None:
        return str(self.ref.adapter) if self.ref.adapter is not None else None


def model_options(ref: ModelRef | None, generation: GenerationSettings, split: str = "all") -> ModelRun | None:
    """Check the --model flags before any work (a bad flag never costs a long engine run)."""
    from evaluator.domains.fund.task import SPLITS

    model = ref.model if ref is not None else None
    adapter = Path(ref.adapter) if ref is not None and ref.adapter is not None else None
    if split not in SPLITS:
        fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    if model is None and split != "all":
        fail("--split chooses the funds --model evaluates; give --model too")
    if model is None:
        if adapter is not None:
            fail("--adapter needs --model (the base model the adapter was trained on)")
        return None
    assert ref is not None
    if adapter is not None and not (adapter / "adapter_config.json").is_file():
        fail(f"--adapter {adapter} is not a LoRA adapter folder (no adapter_config.json in it)")
    if ref.quantize is not None and ref.quantize.lower() not in ("4bit", "none"):
        fail(f"--quantize must be 4bit or none, not {ref.quantize!r}")
    if ref.backend not in BACKENDS:
        fail(f"--backend must be hf or vllm, not {ref.backend!r}")
    if generation.batch_size < 1 or generation.max_new_tokens < 1:
        fail("--batch-size and --max-new-tokens must be at least 1")
    return ModelRun(ref, generation, split)


def model_evaluations(evaluation: Any, options: ModelRun) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every rated fund through the evaluation harness (one model load, batched) and the pack's own grader."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evaluator.domains.fund.task import fund_rows
    from evaluator.domains.fund.task import model_evaluations as evaluations_of
    from evaluator.domains.registry import get_pack

    codes, rows, facts = fund_rows(evaluation, options.split)
    run: dict[str, Any] = {
        "model": options.ref.model,
        "adapter": options.adapter,
        "split": options.split,
        "generation": {},
    }
    if not codes:
        err_console.print(
            f"[yellow]warning:[/] no rated fund in the {options.split} split, so the model has nothing to evaluate"
        )
        return {}, run
    ref = options.ref
    model = {"model": ref.model, "adapter": options.adapter, "quantize": ref.quantize, "backend": ref.backend}
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
                max_new_tokens=options.generation.max_new_tokens,
                batch_size=options.generation.batch_size,
                on_batch=lambda idx: progress.advance(task, len(idx)),
            )
    except (OSError, ValueError) as exc:
        fail(f"could not run --model {ref.model}: {exc}")
    run["generation"] = dict(report.get("generation") or {})
    evaluations = evaluations_of(codes, samples, facts, model=ref.model, adapter=options.adapter)
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
