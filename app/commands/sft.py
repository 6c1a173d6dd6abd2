"""`evaluator sft`: supervised cold start on the pack's reference solutions (same model/LoRA machinery as train)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from evaluator.app.console import console, fail

SFT_OUTPUT_DIR = "runs/sft"


def resolve_config(config: Path | None, overrides: dict[str, Any], learning_rate: float | None) -> Any:
    """The SFT run config: flags, then the YAML, then SFT's own defaults (output dir, learning rate).

    SFT's defaults fill only what neither a flag nor the YAML set; GRPO's defaults (``runs/gsm8k``, 5e-6) never
    leak into an SFT run.
    """
    from evaluator.training.config import SFT_DEFAULT_LR, load_config, yaml_keys

    cfg = load_config(config, {**overrides, "learning_rate": learning_rate})
    in_yaml = yaml_keys(config)
    if overrides.get("output_dir") is None and "output_dir" not in in_yaml:
        cfg = cfg.replace(output_dir=SFT_OUTPUT_DIR)
    if learning_rate is None and "learning_rate" not in in_yaml:
        cfg = cfg.replace(learning_rate=SFT_DEFAULT_LR)
    return cfg


def register(app: typer.Typer) -> None:
    @app.command("sft")
    def sft_cmd(
        domain: str = typer.Option(None, help="Domain pack (must have reference solutions)."),
        model: str = typer.Option(None, help="Preset, tiny, tiny-demo, hub id or local path."),
        data: str = typer.Option(None, help="The pack's data source (`evaluator domains list` shows what each pack takes); default: the pack's."),
        split: str = typer.Option(None, help="Training split."),
        style: str = typer.Option(None, help="Prompt style the solutions are rendered in."),
        language: str = typer.Option(None, help="System prompt language, one of the pack's (default: its first)."),
        limit: int = typer.Option(None, help="Use only the first N rows."),
        output_dir: str = typer.Option(None, "--output-dir", "-o", help="Run folder."),
        config: Path = typer.Option(None, "--config", "-c", help="YAML run config; flags override it."),
        quantize: str = typer.Option(None, help="4bit or none."),
        lora: bool = typer.Option(None, "--lora/--no-lora", help="LoRA adapter (default) or full fine-tune."),
        lora_r: int = typer.Option(None, "--lora-r", help="LoRA rank (default 16)."),
        learning_rate: float = typer.Option(
            None, "--learning-rate", "--lr", help="Learning rate (default 2e-4)."
        ),
        lr_scheduler: str = typer.Option(None, "--lr-scheduler", help="linear (default), cosine, constant, …"),
        per_device_batch: int = typer.Option(
            None, "--per-device-batch", help="Per-device batch (default 4)."
        ),
        grad_accum: int = typer.Option(None, "--grad-accum", help="Gradient accumulation steps."),
        max_steps: int = typer.Option(None, help="Optimizer steps (-1 = epochs)."),
        epochs: float = typer.Option(None, help="Epochs when max-steps is -1."),
        max_seconds: float = typer.Option(None, help="Stop cleanly after this much wall time."),
        save_steps: int = typer.Option(None, help="Checkpoint every N steps (default 50; last step always)."),
        max_seq_length: int = typer.Option(None, help="Max tokens per example (default 512)."),
        seed: int = typer.Option(None, help="Random seed."),
        init_from: str = typer.Option(None, "--init-from", help="Continue from an adapter or full-weight run."),
        resume: bool = typer.Option(False, "--resume", help="Continue from the last checkpoint."),
        force: bool = typer.Option(False, "--force", help="Start a new run in a non-empty output dir."),
    ) -> None:
        """Supervised warm start (TRL SFTTrainer) before GRPO; continue with `train --init-from DIR`."""
        from evaluator.core.outputs import OutputExistsError
        from evaluator.domains.base import PackError
        from evaluator.training.config import ConfigError
        from evaluator.training.run_setup import TrainingError, check_model_available

        overrides = {
            "domain": domain,
            "model": model,
            "data": data,
            "split": split,
            "style": style,
            "language": language,
            "limit": limit,
            "output_dir": output_dir,
            "quantize": quantize,
            "lora": lora,
            "lora_r": lora_r,
            "per_device_train_batch_size": per_device_batch,
            "gradient_accumulation_steps": grad_accum,
            "max_steps": max_steps,
            "num_train_epochs": epochs,
            "max_seconds": max_seconds,
            "save_steps": save_steps,
            "lr_scheduler_type": lr_scheduler,
            "max_seq_length": max_seq_length,
            "seed": seed,
            "init_from": init_from,
            "resume": resume or None,
            "force": force or None,
        }
        try:
            cfg = resolve_config(config, overrides, learning_rate)
            check_model_available(cfg)  # before importing TRL (seconds): an unavailable model is told at once
            from evaluator.training.sft import sft

            summary = sft(cfg, console=console)
        except (ConfigError, PackError, OutputExistsError, TrainingError, FileNotFoundError) as exc:
            fail(str(exc))
        console.print(
            f"[bold green]done[/] SFT step {summary['global_step']} · loss {summary['loss_first']} → "
            f"{summary['loss_last']} · {summary['examples']} examples"
        )
        console.print(
            f"adapter: {summary['final_adapter']}  ·  continue with: evaluator train --init-from {summary['output_dir']}"
        )
