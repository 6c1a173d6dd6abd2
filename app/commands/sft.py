"""`evaluator sft`: supervised cold start on the pack's reference solutions (same model/LoRA machinery as train)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from evaluator.core.console import console, fail

SFT_FIELDS = (
    "domain", "model", "data", "split", "style", "language", "limit", "output_dir", "force", "quantize", "lora",
    "lora_r", "lora_alpha", "lora_dropout", "lora_target", "learning_rate", "lr_scheduler_type",
    "per_device_train_batch_size", "gradient_accumulation_steps", "max_steps", "num_train_epochs", "max_seconds",
    "seed", "logging_steps", "save_steps", "save_total_limit", "optim", "gradient_checkpointing", "init_from",
    "resume", "max_seq_length", "report_to", "run_name", "trl",
)  # fmt: skip
"""The run-config fields SFT reads; the rest (rollouts, rewards, judges, vLLM) are GRPO's."""


def resolve_config(config: Path | None, overrides: dict[str, Any]) -> Any:
    """The SFT run config: flags, then the YAML, then SFT's own defaults (``SFTRunConfig``)."""
    from evaluator.training.config import SFTRunConfig, load_config

    return load_config(config, overrides, SFTRunConfig)


def run_sft(overrides: dict[str, Any], config: Path | None, _: dict[str, Any]) -> None:
    """Load the config, train, report; expected failures become one clear message."""
    from evaluator.core.outputs import OutputExistsError
    from evaluator.domains.base import PackError
    from evaluator.training.config import ConfigError, TrainingError
    from evaluator.training.run_setup import check_model_available

    try:
        cfg = resolve_config(config, overrides)
        from evaluator.training.trl_fields import check_fields

        check_fields(cfg, "sft")  # TRL's names, types and values from its cached schema: a typo is told at once
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


def register(app: typer.Typer) -> None:
    from evaluator.app.config_options import config_command
    from evaluator.training.config import SFTRunConfig

    command = config_command(
        SFTRunConfig,
        run_sft,
        fields=SFT_FIELDS,
        doc="Supervised warm start (TRL SFTTrainer) before GRPO; continue with `train --init-from DIR`.",
    )
    app.command("sft")(command)
