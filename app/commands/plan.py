"""`evaluator plan`: estimate a GRPO run's peak GPU memory before launching it, and what to change if it won't fit."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import typer

from evaluator.core.console import console, fail

GIB = 1024**3


def load_train_config(config: Path | None, overrides: dict[str, Any]) -> tuple[Any, str | None]:
    """The run config as ``evaluator train`` would load it, picking the gradient accumulation if none is set.

    TRL needs per-device batch × accumulation to divide by the number of generations; when neither the flags
    nor the YAML set accumulation, the smallest valid value is used and a note says so.
    """
    import yaml

    from evaluator.training.config import TrainConfig, load_config
    from evaluator.training.memory.plan import required_grad_accum

    note = None
    from_yaml = False
    doc: Any = {}
    if config is not None and config.is_file():
        doc = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        from_yaml = isinstance(doc, dict) and doc.get("gradient_accumulation_steps") is not None
    if overrides.get("gradient_accumulation_steps") is None and not from_yaml:
        # accumulation = the group size passes the divisibility check, so the other fields can be read first
        groups = overrides.get("num_generations") or (doc.get("num_generations") if isinstance(doc, dict) else None)
        probe_accum = groups if isinstance(groups, int) and not isinstance(groups, bool) and groups > 0 else None
        probe = load_config(
            config, {**overrides, "gradient_accumulation_steps": probe_accum or TrainConfig().num_generations}
        )
        need = required_grad_accum(probe.per_device_train_batch_size, probe.num_generations)
        if need > 1:
            note = (
                f"gradient accumulation set to {need} so that per-device batch {probe.per_device_train_batch_size} "
                f"× accumulation divides by {probe.num_generations} generations (--grad-accum to choose)"
            )
        overrides = {**overrides, "gradient_accumulation_steps": need}
    return load_config(config, overrides), note


def print_plan(
    plan: Any, gpu_bytes: float | None, fixes: list[tuple[str, Any]], extra_notes: list[str]
) -> None:
    """The plan as a Rich table, the verdict against the GPU, and the checklist fixes."""
    from rich.table import Table

    from evaluator.training.memory.plan import gib

    s = plan.settings
    title = (
        f"{plan.model}: {s.quantize}, LoRA r={s.lora_r if s.lora else '-'}, batch {s.per_device_train_batch_size}×"
        f"{s.gradient_accumulation_steps} accumulation, {s.num_generations} generations × {s.max_completion_length} tokens, "
        f"checkpointing {'on' if s.gradient_checkpointing else 'off'}"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("Component")
    table.add_column("Phase")
    table.add_column("GiB", justify="right")
    table.add_column("Note", overflow="fold")
    for r in plan.rows:
        table.add_row(r.name, r.phase, gib(r.bytes), r.note)
    console.print(table)
    phases = " · ".join(
        f"{p} {gib(b)} GiB" + (" (peak)" if p == plan.peak_phase else "")
        for p, b in plan.phase_totals.items()
    )
    console.print(f"Phases: {phases}")
    for note in [*extra_notes, *plan.notes]:
        console.print(f"[dim]note: {note}[/]")
    if gpu_bytes is None:
        console.print(
            f"[bold]Estimated peak: {gib(plan.total_bytes)} GiB[/] (pass --gpu-mem to check a card)"
        )
        return
    if plan.fits(gpu_bytes):
        console.print(
            f"[bold green]Fits:[/] estimated peak {gib(plan.total_bytes)} GiB of {gib(gpu_bytes)} GiB "
            f"({gib(gpu_bytes - plan.total_bytes)} GiB headroom)"
        )
        return
    console.print(
        f"[bold red]Does not fit:[/] estimated peak {gib(plan.total_bytes)} GiB exceeds {gib(gpu_bytes)} GiB"
    )
    if not fixes:
        console.print("No checklist change lowers the estimate; use a larger GPU or a smaller model.")
        return
    fix_table = Table(
        title="Cheapest changes, in checklist order (each adds to the ones above)", title_justify="left"
    )
    fix_table.add_column("#", justify="right")
    fix_table.add_column("Change")
    fix_table.add_column("New estimate GiB", justify="right")
    fix_table.add_column("Fits")
    for i, (desc, p) in enumerate(fixes, 1):
        fix_table.add_row(str(i), desc, gib(p.total_bytes), "yes" if p.fits(gpu_bytes) else "no")
    console.print(fix_table)
    if not fixes[-1][1].fits(gpu_bytes):
        console.print("Even all checklist changes together do not fit; use a larger GPU or a smaller model.")


def plan_run(overrides: dict[str, Any], config: Path | None, extra: dict[str, Any]) -> None:
    """Estimate peak GPU memory of a QLoRA GRPO run (offline), and the cheapest changes that make it fit."""
    from evaluator.training.config import ConfigError
    from evaluator.training.memory.architectures import ArchitectureError, arch_for
    from evaluator.training.memory.plan import (
        JudgeSettings,
        PlanError,
        estimate,
        plan_document,
        settings_for_train_config,
        suggest_fixes,
    )

    gpu_mem, judge = extra["gpu_mem"], extra["judge"]
    if overrides.get("model") is None and config is None:
        fail("pass --model (a preset such as qwen3-0.6b, tiny, or a local folder with config.json) or --config")
    if gpu_mem is not None and gpu_mem <= 0:
        fail(f"--gpu-mem must be a positive number of GiB, not {gpu_mem}")
    if extra["judge_quantize"] not in ("4bit", "none"):
        fail(f"--judge-quantize must be 4bit or none, not {extra['judge_quantize']!r}")
    try:
        cfg, ga_note = load_train_config(config, overrides)
        settings = settings_for_train_config(
            cfg, device="cuda", prompt_length=extra["prompt_length"],
            gpu_total_bytes=int(gpu_mem * GIB) if gpu_mem is not None else None,
        )
        if judge:
            settings = settings.replace(
                local_judge=JudgeSettings(model=judge, quantize=extra["judge_quantize"], batch_size=extra["judge_batch"])
            )
        plan = estimate(arch_for(cfg.model), settings)
        gpu_bytes = gpu_mem * GIB if gpu_mem is not None else None
        fixes = suggest_fixes(plan.arch, settings, gpu_bytes) if gpu_bytes is not None else []
    except (ArchitectureError, ConfigError, PlanError, OSError) as exc:
        fail(str(exc))
    if extra["as_json"]:
        doc = plan_document(plan, gpu_bytes, fixes)
        if ga_note:
            doc["notes"].insert(0, ga_note)
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    print_plan(plan, gpu_bytes, fixes, [ga_note] if ga_note else [])


def _extra(name: str, annotation: Any, option: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)


PLAN_OPTIONS = (
    _extra("gpu_mem", float | None, typer.Option(None, "--gpu-mem", help="GPU memory in GiB (nvidia-smi MiB / 1024), e.g. 48.")),
    _extra("prompt_length", int | None, typer.Option(None, "--prompt-length", help="Prompt tokens to plan for (default 256).")),
    _extra("judge", str | None, typer.Option(None, "--judge", help="Judge model loaded on the same GPU (preset or folder).")),
    _extra("judge_quantize", str, typer.Option("4bit", "--judge-quantize", help="4bit or none for the judge.")),
    _extra("judge_batch", int, typer.Option(8, "--judge-batch", help="Judge prompts per generate call.")),
    _extra("as_json", bool, typer.Option(False, "--json", help="Print the plan as JSON instead of a table.")),
)  # fmt: skip
"""The planner's own options; the run's settings are the config's flags (``PLAN_FIELDS``)."""


def register(app: typer.Typer) -> None:
    from evaluator.app.config_options import config_command
    from evaluator.training.config import TrainConfig
    from evaluator.training.memory.plan import PLAN_FIELDS

    command = config_command(
        TrainConfig,
        plan_run,
        fields=PLAN_FIELDS,
        extra=PLAN_OPTIONS,
        doc="Estimate peak GPU memory of a QLoRA GRPO run (offline), and the cheapest changes that make it fit.",
    )
    app.command("plan")(command)
