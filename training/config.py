"""Run configuration as data: one dataclass, loadable from YAML, overridable by CLI flags, saved with the run.

``None`` for a field means "decide from the hardware" (4-bit and paged 8-bit AdamW on CUDA, fp32 and plain
AdamW on CPU); the resolved values are what ``run_config.yaml`` records.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml


def _f(default: Any, help: str) -> Any:
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Every knob of a GRPO (or SFT) run. Field help texts feed the README's config reference."""

    domain: str = _f("gsm8k", "Domain pack name (`evaluator domains list`).")
    model: str = _f("tiny", "Preset (qwen3-0.6b … atomicgpt-gemma2-9b, gpt-oss-20b), `tiny`, hub id or local path.")
    data: str | None = _f(None, "Data source for the pack: `synthetic`, a hub id, a JSONL file/folder. None = pack default.")
    split: str = _f("train", "Dataset split to train on.")
    style: str | None = _f(None, "Prompt style (gsm8k: xml, think-solution, qwen3-think). None = rubric default.")
    language: str | None = _f(None, "System prompt language, one of the pack's (`evaluator domains show`). None = the pack's first.")
    limit: int | None = _f(None, "Use only the first N training rows.")
    output_dir: str = _f("runs/gsm8k", "Where adapters, checkpoints, metrics and summaries go.")
    force: bool = _f(False, "Write into a non-empty output dir that is not being resumed.")
    quantize: str | None = _f(None, "`4bit` (NF4, double quant) or `none`. None = 4bit on CUDA, none on CPU.")
    lora: bool = _f(True, "Train a LoRA adapter (False = full fine-tune).")
    lora_r: int = _f(16, "LoRA rank.")
    lora_alpha: int = _f(32, "LoRA alpha.")
    lora_dropout: float = _f(0.05, "LoRA dropout.")
    lora_target: str = _f("all-linear", "LoRA target modules (`all-linear` = every linear projection).")
    num_generations: int = _f(4, "Completions per prompt (GRPO group size).")
    max_completion_length: int = _f(256, "Max new tokens per completion.")
    learning_rate: float = _f(5e-6, "Peak learning rate.")
    lr_scheduler_type: str = _f("linear", "Learning-rate schedule over max_steps: linear, cosine, constant, …")
    beta: float = _f(0.0, "KL coefficient (0 = no reference model).")
    loss_type: str = _f("dapo", "GRPO loss: dapo, grpo, dr_grpo, bnpo, …")
    scale_rewards: str = _f("group", "Advantage scaling: group, batch or none.")
    epsilon: float = _f(0.2, "Lower clip range.")
    epsilon_high: float | None = _f(None, "Upper clip range (DAPO clip-higher); None = epsilon.")
    temperature: float = _f(1.0, "Sampling temperature for rollouts.")
    top_p: float = _f(1.0, "Nucleus sampling for rollouts.")
    per_device_train_batch_size: int = _f(4, "Completions per device per step (must divide by num_generations).")
    gradient_accumulation_steps: int = _f(1, "Gradient accumulation steps.")
    max_steps: int = _f(-1, "Stop after this many optimizer steps (-1 = use num_train_epochs).")
    num_train_epochs: float = _f(1.0, "Epochs over the training set when max_steps is -1.")
    max_seconds: float | None = _f(None, "Stop cleanly after this much wall time (checkpoint and adapter saved).")
    seed: int = _f(42, "Random seed.")
    logging_steps: int = _f(1, "Log metrics every N steps.")
    save_steps: int = _f(50, "Checkpoint every N steps (the last step is always saved).")
    save_total_limit: int | None = _f(3, "Keep at most N checkpoints.")
    rewards: list[str] | None = _f(None, "Subset of the pack's rewards to use (None = all).")
    reward_weights: dict[str, float] | None = _f(None, "Override rubric weights, e.g. {correctness: 2.0}.")
    optim: str | None = _f(None, "Optimizer. None = paged_adamw_8bit on CUDA, adamw_torch on CPU.")
    gradient_checkpointing: bool | None = _f(None, "None = on for CUDA, off on CPU.")
    init_from: str | None = _f(None, "Start from this adapter (e.g. an `evaluator sft` output).")
    resume: bool = _f(False, "Continue from the last checkpoint in output_dir.")
    judge: dict[str, Any] | None = _f(None, "LLM judge reward: {kind: api|local, model, weight, …}.")
    completions_per_log: int = _f(4, "Completions written to completions.jsonl per logging step.")
    max_seq_length: int = _f(512, "SFT: max tokens per example.")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> TrainConfig:
        return dataclasses.replace(self, **changes)


def field_help() -> list[tuple[str, str, str]]:
    """(name, default, help) for every field, in declaration order."""
    out = []
    for f in fields(TrainConfig):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        out.append((f.name, repr(default), f.metadata.get("help", "")))
    return out


LR_SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_restarts", "polynomial")
"""The transformers schedules that need no extra arguments."""


class ConfigError(ValueError):
    """A config file or override is not understood."""


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """YAML file (optional) then non-None ``overrides``; unknown keys are an error, not a silent ignore."""
    data: dict[str, Any] = {}
    if path:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"config file {p} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p} is not valid YAML: {exc}") from exc
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p} must hold a mapping of config fields")
        data.update(loaded)
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config field(s): {', '.join(unknown)}; known fields: {', '.join(sorted(known))}")
    cfg = TrainConfig(**data)
    validate(cfg)
    return cfg


def validate(cfg: TrainConfig) -> None:
    """Catch the mistakes TRL would report late or cryptically."""
    if cfg.num_generations < 2:
        raise ConfigError("num_generations must be at least 2 (GRPO compares completions within a group)")
    if (cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps) % cfg.num_generations:
        raise ConfigError(
            f"per_device_train_batch_size × gradient_accumulation_steps "
            f"({cfg.per_device_train_batch_size}×{cfg.gradient_accumulation_steps}) must be divisible by "
            f"num_generations ({cfg.num_generations})"
        )
    if cfg.lr_scheduler_type not in LR_SCHEDULERS:
        raise ConfigError(
            f"lr_scheduler_type must be one of {', '.join(LR_SCHEDULERS)}, not {cfg.lr_scheduler_type!r}"
        )
    if cfg.quantize not in (None, "4bit", "none"):
        raise ConfigError(f"quantize must be 4bit or none, not {cfg.quantize!r}")
    _check_pack_fields(cfg)
    if cfg.quantize == "4bit" and not cfg.lora:
        raise ConfigError("4-bit weights cannot be trained directly: keep LoRA on with --quantize 4bit")


def _check_pack_fields(cfg: TrainConfig) -> None:
    """``domain`` names a registered pack and ``language`` is one it has prompts in."""
    from evaluator.domains.base import PackError
    from evaluator.domains.registry import get_pack

    try:
        pack = get_pack(cfg.domain)
    except PackError as exc:
        raise ConfigError(f"domain: {exc}") from exc
    if cfg.language is not None and cfg.language not in pack.languages:
        raise ConfigError(
            f"language: pack {cfg.domain!r} has prompts in {', '.join(pack.languages)}, not {cfg.language!r}"
        )


def save_config(cfg: TrainConfig, path: str | Path, resolved: dict[str, Any] | None = None) -> None:
    """Write the resolved config (plus hardware decisions) as YAML, atomically."""
    from evaluator.methodology.outputs import atomic_write_text

    doc = cfg.to_dict()
    if resolved:
        doc["resolved"] = resolved
    atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
