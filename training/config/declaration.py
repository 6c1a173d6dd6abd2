"""The run configuration's declaration: one dataclass whose fields carry their help, flag aliases and TRL names.

``None`` for a field means "decide from the hardware" (4-bit and paged 8-bit AdamW on CUDA, fp32 and plain
AdamW on CPU); the resolved values are what ``run_config.yaml`` records. Pure data and the mappings read
from it (TRL arguments, field kinds); loading is in :mod:`loading`, the checks in :mod:`checks`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any

from evaluator.domains.registry import DEFAULT_DOMAIN


def _f(default: Any, help: str, *flags: str, cli: str | None = None, trl: str | bool = False) -> Any:
    """A config field: its default, help text, older flag names kept as aliases, how its flag text is read
    (``cli``: ``weights`` for NAME=WEIGHT items, ``mapping`` for YAML text, ``pairs`` for KEY=VALUE items), and
    the TRL argument it sets (``trl="args"``: the same name; ``"derived"``: the run derives TRL's value from it).
    ``{trl_choices}`` in the help is filled with the values the installed TRL allows."""
    meta = {"help": help, "flags": flags, "cli": cli, "trl": trl}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainConfig:
    """Every knob of a GRPO (or SFT) run. Field help texts feed the config reference page (docs/reference/config.md)."""

    domain: str = _f(DEFAULT_DOMAIN, "Domain pack name (`evaluator domains list`); several: `a,b` (comma-separated) with `mix`.")
    mix: list[float] | None = _f(None, "Mixing weights of the packs named in `domain` (one adapter on all of them).")
    model: str = _f("tiny", "Preset (qwen3-0.6b … atomicgpt-gemma2-9b, gpt-oss-20b), `tiny`, hub id or local path.", "-m")
    data: str | None = _f(None, "Data source for the pack: `synthetic`, a hub id, a JSONL file/folder. None = pack default.")
    split: str = _f("train", "Dataset split to train on.")
    style: str | None = _f(None, "Prompt style, one of the pack's (`evaluator domains list`). None = rubric default.")
    language: str | None = _f(None, "System prompt language, one of the pack's (`evaluator domains list`). None = the pack's first.")
    limit: int | None = _f(None, "Use only the first N training rows.")
    output_dir: str = _f(
        f"runs/{DEFAULT_DOMAIN}", "Where adapters, checkpoints, metrics and summaries go.", "-o", trl="derived"
    )
    force: bool = _f(False, "Start over in a non-empty output dir: the earlier run's outputs are removed first.")
    quantize: str | None = _f(None, "`4bit` (NF4, double quant) or `none`. None = 4bit on CUDA, none on CPU.")
    lora: bool = _f(True, "Train a LoRA adapter (False = full fine-tune).")
    lora_r: int = _f(16, "LoRA rank.", "--lora-rank")
    lora_alpha: int = _f(32, "LoRA alpha.")
    lora_dropout: float = _f(0.05, "LoRA dropout.")
    lora_target: str = _f("all-linear", "LoRA target modules (`all-linear` = every linear projection).")
    algorithm: str = _f("grpo", "Policy-gradient trainer: grpo (TRL GRPOTrainer) or rloo (TRL RLOOTrainer).")
    num_generations: int = _f(4, "Completions per prompt (GRPO group size).", trl="rollout")
    max_completion_length: int = _f(256, "Max new tokens per completion.", trl="rollout")
    learning_rate: float = _f(5e-6, "Peak learning rate.", "--lr", trl="args")
    lr_scheduler_type: str = _f(
        "linear", "Learning-rate schedule over max_steps: linear, cosine, constant, …", "--lr-scheduler", trl="args"
    )
    beta: float = _f(0.0, "KL coefficient (0 = no reference model).", trl="rollout")
    loss_type: str = _f("dapo", "GRPO loss, one of TRL's: {trl_choices}.", trl="rollout")
    scale_rewards: str = _f("group", "Advantage scaling, one of TRL's: {trl_choices}.", trl="rollout")
    normalize_advantages: bool = _f(False, "RLOO: scale advantages to unit std per generation batch.", trl="rloo")
    dynamic_sampling: int | None = _f(
        None, "Rest a prompt for this many steps after its group scored all alike (no signal); None = off."
    )
    epsilon: float = _f(
        0.2, "Lower clip range; acts only with several optimisation steps per generation batch (see trl).", trl="rollout"
    )
    epsilon_high: float | None = _f(
        None, "Upper clip range (DAPO clip-higher; acts only when epsilon can); None = epsilon.", trl="rollout"
    )
    temperature: float = _f(1.0, "Sampling temperature for rollouts.", trl="rollout")
    top_p: float = _f(1.0, "Nucleus sampling for rollouts.", trl="rollout")
    per_device_train_batch_size: int = _f(
        4, "Completions per device per step (must divide by num_generations).", "--per-device-batch", trl="args"
    )
    gradient_accumulation_steps: int = _f(1, "Gradient accumulation steps.", "--grad-accum", trl="args")
    max_steps: int = _f(-1, "Stop after this many optimizer steps (-1 = use num_train_epochs).", trl="args")
    num_train_epochs: float = _f(1.0, "Epochs over the training set when max_steps is -1.", "--epochs", trl="args")
    max_seconds: float | None = _f(None, "Stop cleanly after this much wall time (checkpoint and adapter saved).")
    seed: int = _f(42, "Random seed.", trl="args")
    logging_steps: int = _f(1, "Log metrics every N steps.", trl="args")
    save_steps: int = _f(50, "Checkpoint every N steps (the last step is always saved).", trl="args")
    save_total_limit: int | None = _f(3, "Keep at most N checkpoints.", trl="args")
    rewards: list[str] | None = _f(None, "Subset of the pack's rewards to use, comma-separated (None = all).")
    reward_weights: dict[str, float] | None = _f(
        None, "Override rubric weights, e.g. {correctness: 2.0}.", "--reward-weight", cli="weights"
    )
    optim: str | None = _f(
        None, "Optimizer, one of TRL's: {trl_choices}. None = paged_adamw_8bit on CUDA, adamw_torch on CPU.", trl="derived"
    )
    gradient_checkpointing: bool | None = _f(None, "None = on for CUDA, off on CPU.", trl="derived")
    init_from: str | None = _f(None, "Start from this adapter (e.g. an `evaluator sft` output).", "--adapter")
    resume: bool = _f(False, "Continue from the last checkpoint in output_dir.")
    judge: dict[str, Any] | None = _f(
        None, "LLM judge reward: {kind: api|local, model, weight, …} as YAML/JSON text or a file.", cli="mapping"
    )
    completions_per_log: int = _f(4, "Completions written to completions.jsonl per logging step.")
    max_seq_length: int | None = _f(
        None,
        "SFT: max tokens per example. None = measured: the longest sampled prompt + reference answer, +10 %.",
        trl="sft:max_length",
    )
    num_processes: int = _f(1, "Training processes (GPUs; gloo processes on CPU). >1 re-launches the run.")
    launch_config: str | None = _f(None, "Multi-process engine: ddp (default), fsdp, zero2, zero3 or an accelerate YAML.")
    use_vllm: bool = _f(False, "Generate rollouts with vLLM (TRL's use_vllm; CUDA and the vllm extra).")
    vllm_mode: str | None = _f(None, "colocate (default: vLLM shares the training GPU) or server (`evaluator vllm-serve`).")
    vllm_server_host: str | None = _f(None, "Server mode: host of the vLLM server (TRL default 0.0.0.0).")
    vllm_server_port: int | None = _f(None, "Server mode: port of the vLLM server (TRL default 8000).")
    vllm_gpu_memory_utilization: float | None = _f(None, "Colocate mode: fraction of the GPU vLLM reserves (TRL default 0.3).")
    vllm_enable_sleep_mode: bool = _f(
        False, "Colocate mode: vLLM releases its memory while the trainer steps.", "--vllm-sleep-mode"
    )
    eval_every: int | None = _f(None, "Grade the policy on a held-out slice every N steps (at logging points); None = off.")
    eval_limit: int = _f(100, "Held-out problems per in-training evaluation (the first N of eval_split).")
    eval_split: str = _f("test", "Split the held-out slice comes from (never the training split).")
    eval_batch_size: int = _f(32, "Prompts per generate call in the held-out evaluation.")
    collapse_drop: float = _f(0.10, "Warn when held-out accuracy falls this far below its best while format holds.")
    stop_on_collapse: bool = _f(False, "Stop the run cleanly (best adapter kept) when the collapse guard fires.")
    report_to: list[str] | str | None = _f(
        None,
        "Trackers for TRL: none, tensorboard, wandb, trackio (a list, or one comma-separated text). None = none.",
        trl="derived",
    )
    run_name: str | None = _f(None, "Run name shown by the trackers (default: the output folder's name).", trl="derived")
    trl: dict[str, Any] | None = _f(
        None,
        "Any other field of the installed TRL's GRPOConfig/RLOOConfig/SFTConfig, checked against it: "
        "{num_iterations: 2, mask_truncated_completions: true}; flag: --trl KEY=VALUE, repeatable.",
        cli="pairs",
    )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def hints(cls) -> dict[str, Any]:
        """Each field's resolved annotation (the declaration's types, for checks and flags)."""
        return typing.get_type_hints(cls)

    def replace(self, **changes: Any) -> TrainConfig:
        return dataclasses.replace(self, **changes)


@dataclass
class SFTRunConfig(TrainConfig):
    """``evaluator sft``'s run: the same fields, with SFT's own defaults where GRPO's would be wrong.

    Named apart from ``trl.SFTConfig``, which it maps onto (see :func:`trl_kwargs`).
    """

    output_dir: str = _f("runs/sft", "Where the SFT adapter, checkpoints and summary go.", "-o")
    learning_rate: float = _f(2e-4, "Peak learning rate (GRPO's 5e-6 is far too small for SFT).", "--lr", trl="args")


SFT_DEFAULT_LR = SFTRunConfig.learning_rate
"""SFT's learning rate when neither a flag nor the YAML sets one."""


TRL_FAMILIES = {"grpo": ("args", "rollout"), "rloo": ("args", "rollout", "rloo"), "sft": ("args", "sft")}
"""Which declared TRL arguments each trainer takes."""


def trl_names(cls: type[TrainConfig] = TrainConfig, families: tuple[str, ...] = ("args", "rollout", "sft")) -> dict[str, str]:
    """Config field → TRL argument name, for every field of ``families`` that sets one."""
    out = {}
    for f in fields(cls):
        family, _, name = (f.metadata.get("trl") or "").partition(":")
        if family in families:
            out[f.name] = name or f.name
    return out


def trl_kwargs(cfg: TrainConfig, target: type, trainer: str) -> dict[str, Any]:
    """The config's values for TRL's ``target`` config class (``GRPOConfig``, ``SFTConfig``, ``RLOOConfig``).

    One mapping, driven by the names the fields declare: ``trainer`` picks the families that apply, and a
    declared argument the target lacks (``RLOOConfig`` has no ``loss_type``) is left out.
    """
    accepted = {f.name for f in fields(target)}
    return {
        name: getattr(cfg, field_name)
        for field_name, name in trl_names(type(cfg), TRL_FAMILIES[trainer]).items()
        if name in accepted
    }


def field_kinds(annotation: Any) -> tuple[set[type], bool]:
    """The plain types a field annotation allows, and whether None is allowed."""
    args = typing.get_args(annotation)
    options = args if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (annotation,)
    kinds = {typing.get_origin(o) or o for o in options if o is not type(None)}
    return {k for k in kinds if isinstance(k, type)}, type(None) in options


def report_to(cfg: TrainConfig) -> list[str] | str:
    """What TRL's ``report_to`` gets: the trackers asked for, or ``"none"``."""
    trackers = [t for t in cfg.report_to or [] if t != "none"]
    return trackers or "none"
