"""Run configuration as data: one dataclass, loadable from YAML, overridable by CLI flags, saved with the run.

``None`` for a field means "decide from the hardware" (4-bit and paged 8-bit AdamW on CUDA, fp32 and plain
AdamW on CPU); the resolved values are what ``run_config.yaml`` records.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from evaluator.domains.registry import DEFAULT_DOMAIN


def _f(default: Any, help: str, *flags: str, cli: str | None = None, trl: str | bool = False) -> Any:
    """A config field: its default, help text, older flag names kept as aliases, how its flag text is read
    (``cli``: ``weights`` for NAME=WEIGHT items, ``mapping`` for YAML text), and the TRL argument it sets
    (``trl="args"``: the same name)."""
    meta = {"help": help, "flags": flags, "cli": cli, "trl": trl}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainConfig:
    """Every knob of a GRPO (or SFT) run. Field help texts feed the README's config reference."""

    domain: str = _f(DEFAULT_DOMAIN, "Domain pack name (`evaluator domains list`); several: `a,b` (comma-separated) with `mix`.")
    mix: list[float] | None = _f(None, "Mixing weights of the packs named in `domain` (one adapter on all of them).")
    model: str = _f("tiny", "Preset (qwen3-0.6b … atomicgpt-gemma2-9b, gpt-oss-20b), `tiny`, hub id or local path.", "-m")
    data: str | None = _f(None, "Data source for the pack: `synthetic`, a hub id, a JSONL file/folder. None = pack default.")
    split: str = _f("train", "Dataset split to train on.")
    style: str | None = _f(None, "Prompt style, one of the pack's (`evaluator domains list`). None = rubric default.")
    language: str | None = _f(None, "System prompt language, one of the pack's (`evaluator domains list`). None = the pack's first.")
    limit: int | None = _f(None, "Use only the first N training rows.")
    output_dir: str = _f(f"runs/{DEFAULT_DOMAIN}", "Where adapters, checkpoints, metrics and summaries go.", "-o")
    force: bool = _f(False, "Write into a non-empty output dir that is not being resumed.")
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
    loss_type: str = _f("dapo", "GRPO loss: dapo, grpo, dr_grpo, bnpo, …", trl="rollout")
    scale_rewards: str = _f("group", "Advantage scaling: group, batch or none.", trl="rollout")
    normalize_advantages: bool = _f(False, "RLOO: scale advantages to unit std per generation batch.", trl="rloo")
    dynamic_sampling: int | None = _f(
        None, "Rest a prompt for this many steps after its group scored all alike (no signal); None = off."
    )
    epsilon: float = _f(0.2, "Lower clip range.", trl="rollout")
    epsilon_high: float | None = _f(None, "Upper clip range (DAPO clip-higher); None = epsilon.", trl="rollout")
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
    optim: str | None = _f(None, "Optimizer. None = paged_adamw_8bit on CUDA, adamw_torch on CPU.")
    gradient_checkpointing: bool | None = _f(None, "None = on for CUDA, off on CPU.")
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
        None, "Trackers for TRL: none, tensorboard, wandb, trackio (a list, or one comma-separated text). None = none."
    )
    run_name: str | None = _f(None, "Run name shown by the trackers (default: the output folder's name).")

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


def field_help(cls: type[TrainConfig] = TrainConfig) -> list[tuple[str, str, str]]:
    """(name, default, help) for every field, in declaration order."""
    out = []
    for f in fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        out.append((f.name, repr(default), f.metadata.get("help", "")))
    return out


def config_table() -> str:
    """The README's config reference, generated from the declaration (a test keeps the README equal to it)."""
    rows = ["| field | default | meaning |", "|---|---|---|"]
    rows += [f"| `{name}` | `{default}` | {text} |" for name, default, text in field_help()]
    return "\n".join(rows) + "\n"


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


LR_SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_restarts", "polynomial")
"""The transformers schedules that need no extra arguments."""


class ConfigError(ValueError):
    """A config file or override is not understood."""


def load_config(
    path: str | Path | None = None, overrides: dict[str, Any] | None = None, cls: type[TrainConfig] = TrainConfig
) -> TrainConfig:
    """YAML file (optional) then non-None ``overrides``; unknown keys are an error, not a silent ignore.

    ``cls`` is the config class whose defaults fill the rest (``SFTRunConfig`` for ``evaluator sft``)."""
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
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config field(s): {', '.join(unknown)}; known fields: {', '.join(sorted(known))}")
    problems = check_types(data, cls)
    if problems:
        where = f"{path}: " if path else ""
        raise ConfigError(where + "; ".join(problems))
    cfg = cls(**coerce(data, cls))
    validate(cfg)
    return cfg


TRACKERS = ("none", "tensorboard", "wandb", "trackio")
# Ranges of numeric fields: (lowest, lowest allowed?, highest, highest allowed?); None = unbounded.
RANGES: dict[str, tuple[float | None, bool, float | None, bool]] = {
    "limit": (1, True, None, False),
    "lora_r": (1, True, None, False),
    "lora_alpha": (1, True, None, False),
    "lora_dropout": (0, True, 1, False),
    "num_generations": (2, True, None, False),
    "max_completion_length": (1, True, None, False),
    "learning_rate": (0, False, 1, True),
    "beta": (0, True, None, False),
    "epsilon": (0, False, None, False),
    "epsilon_high": (0, False, None, False),
    "temperature": (0, False, None, False),
    "top_p": (0, False, 1, True),
    "per_device_train_batch_size": (1, True, None, False),
    "gradient_accumulation_steps": (1, True, None, False),
    "num_train_epochs": (0, False, None, False),
    "max_seconds": (0, False, None, False),
    "seed": (0, True, None, False),
    "logging_steps": (1, True, None, False),
    "save_steps": (1, True, None, False),
    "save_total_limit": (1, True, None, False),
    "completions_per_log": (0, True, None, False),
    "max_seq_length": (1, True, None, False),
    "dynamic_sampling": (1, True, None, False),
}
ALGORITHMS = ("grpo", "rloo")


def field_kinds(annotation: Any) -> tuple[set[type], bool]:
    """The plain types a field annotation allows, and whether None is allowed."""
    args = typing.get_args(annotation)
    options = args if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (annotation,)
    kinds = {typing.get_origin(o) or o for o in options if o is not type(None)}
    return {k for k in kinds if isinstance(k, type)}, type(None) in options


def _as_float(value: Any) -> float | None:
    """A number, or a YAML string such as ``5e-6`` (PyYAML reads exponents without a dot as text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
        return out if math.isfinite(out) else None
    return None


def _range_text(name: str) -> str:
    lo, lo_in, hi, hi_in = RANGES[name]
    parts = [f"{'≥' if lo_in else '>'} {lo:g}"] if lo is not None else []
    parts += [f"{'≤' if hi_in else '<'} {hi:g}"] if hi is not None else []
    return " and ".join(parts)


def _check_one(name: str, value: Any, annotation: Any) -> str | None:
    kinds, nullable = field_kinds(annotation)
    if value is None:
        return None if nullable else f"{name}: must be set (got null)"
    number: float | None = None
    if bool in kinds:
        if not isinstance(value, bool):
            return f"{name}: expected true or false, got {value!r}"
        return None
    if int in kinds and float not in kinds:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name}: expected a whole number, got {value!r}"
        number = float(value)
    elif float in kinds:
        number = _as_float(value)
        if number is None:
            return f"{name}: expected a number, got {value!r}"
    elif str in kinds and list not in kinds:
        if not isinstance(value, str):
            return f"{name}: expected text, got {value!r}"
    elif list in kinds:
        if isinstance(value, str) and str in kinds:  # typed `list[str] | str`: one comma-separated text too
            return None
        if name == "mix":
            if not isinstance(value, list) or any(_as_float(v) is None or _as_float(v) <= 0 for v in value):
                return f"{name}: expected a list of weights > 0, got {value!r}"
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{name}: expected a list of names, got {value!r}"
    elif dict in kinds:
        if not isinstance(value, dict):
            return f"{name}: expected a mapping, got {value!r}"
        if name == "reward_weights":
            bad = {k: v for k, v in value.items() if _as_float(v) is None or _as_float(v) < 0}
            if bad:
                return f"{name}: weights must be numbers ≥ 0, got {bad!r}"
    if number is not None and name in RANGES:
        lo, lo_in, hi, hi_in = RANGES[name]
        too_low = lo is not None and (number < lo or (number == lo and not lo_in))
        too_high = hi is not None and (number > hi or (number == hi and not hi_in))
        if (too_low or too_high) and not (name == "max_steps" and number == -1):
            return f"{name}: must be {_range_text(name)}, got {value!r}"
    if name == "max_steps" and number is not None and number != -1 and number < 1:
        return f"{name}: must be -1 (use epochs) or ≥ 1, got {value!r}"
    return None


def check_types(data: dict[str, Any], cls: type[TrainConfig] = TrainConfig) -> list[str]:
    """One line per config value whose type or range is wrong, each naming its field."""
    hints = cls.hints()
    problems = [_check_one(k, v, hints[k]) for k, v in data.items() if k in hints]
    return [p for p in problems if p]


def coerce(data: dict[str, Any], cls: type[TrainConfig] = TrainConfig) -> dict[str, Any]:
    """Numeric text in float fields (``learning_rate: 5e-6`` from YAML) as floats; the rest unchanged."""
    hints = cls.hints()
    out = dict(data)
    for key, value in data.items():
        kinds, _ = field_kinds(hints.get(key))
        if float in kinds and isinstance(value, str):
            out[key] = float(value.strip())
        elif list in kinds and str in kinds and isinstance(value, str):
            out[key] = [part.strip() for part in value.split(",") if part.strip()]
        elif key == "mix" and isinstance(value, list):
            out[key] = [float(v) for v in value]
        elif key == "reward_weights" and isinstance(value, dict):
            out[key] = {k: float(v) for k, v in value.items()}
    return out


def validate(cfg: TrainConfig) -> None:
    """Catch the mistakes TRL would report late or cryptically."""
    validate_tracking(cfg)
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
    if cfg.algorithm not in ALGORITHMS:
        raise ConfigError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {cfg.algorithm!r}")
    if cfg.normalize_advantages and cfg.algorithm != "rloo":
        raise ConfigError("normalize_advantages is an RLOO setting (algorithm: rloo); GRPO scales with scale_rewards")
    if cfg.dynamic_sampling is not None and cfg.max_steps < 1:
        raise ConfigError("dynamic_sampling streams prompts without end: set max_steps")
    if cfg.quantize not in (None, "4bit", "none"):
        raise ConfigError(f"quantize must be 4bit or none, not {cfg.quantize!r}")
    _check_pack_fields(cfg)
    if cfg.quantize == "4bit" and not cfg.lora:
        raise ConfigError("4-bit weights cannot be trained directly: keep LoRA on with --quantize 4bit")
    from evaluator.training.scale_checks import validate_scale

    validate_scale(cfg)


def validate_tracking(cfg: TrainConfig) -> None:
    """Held-out evaluation, collapse guard and tracker settings (the fields this part of a run adds)."""
    if isinstance(cfg.report_to, str):  # `report_to: tensorboard` in YAML, or "tensorboard,wandb"
        cfg.report_to = [t.strip() for t in cfg.report_to.split(",") if t.strip()]
    if cfg.eval_every is not None and cfg.eval_every < 1:
        raise ConfigError(f"eval_every must be at least 1 (or unset to turn evaluation off), not {cfg.eval_every}")
    if cfg.eval_limit < 1:
        raise ConfigError(f"eval_limit must be at least 1, not {cfg.eval_limit}")
    if cfg.eval_batch_size < 1:
        raise ConfigError(f"eval_batch_size must be at least 1, not {cfg.eval_batch_size}")
    if cfg.eval_every is not None and cfg.eval_split == cfg.split:
        raise ConfigError(
            f"eval_split {cfg.eval_split!r} is the training split: held-out accuracy needs problems the run "
            "never trains on (e.g. --eval-split test)"
        )
    if not 0 < cfg.collapse_drop <= 1:
        raise ConfigError(f"collapse_drop is an accuracy drop between 0 and 1 (e.g. 0.10), not {cfg.collapse_drop}")
    if cfg.stop_on_collapse and cfg.eval_every is None:
        raise ConfigError("stop_on_collapse watches held-out accuracy: turn evaluation on with --eval-every N")
    unknown = [t for t in cfg.report_to or [] if t not in TRACKERS]
    if unknown:
        raise ConfigError(f"report_to: unknown tracker(s) {', '.join(unknown)}; choose from {', '.join(TRACKERS)}")
    if "none" in (cfg.report_to or []) and len(cfg.report_to or []) > 1:
        raise ConfigError("report_to: 'none' cannot be combined with a tracker")


def report_to(cfg: TrainConfig) -> list[str] | str:
    """What TRL's ``report_to`` gets: the trackers asked for, or ``"none"``."""
    trackers = [t for t in cfg.report_to or [] if t != "none"]
    return trackers or "none"


def _check_mix(cfg: TrainConfig) -> None:
    """Several packs: every name a pack, one positive weight each, and only what a mixed run supports."""
    from evaluator.domains.base import PackError
    from evaluator.domains.registry import get_pack

    names = [d.strip() for d in cfg.domain.split(",") if d.strip()]
    for name in names:
        try:
            get_pack(name)
        except PackError as exc:
            raise ConfigError(f"domain: {exc}") from exc
    if len(set(names)) != len(names):
        raise ConfigError(f"domain: a pack is named twice in {cfg.domain!r}")
    if cfg.mix is None or len(cfg.mix) != len(names) or any(not (w > 0) for w in cfg.mix):
        raise ConfigError(f"mix: one weight > 0 per pack in {cfg.domain!r} (e.g. --mix 0.5,0.5), got {cfg.mix!r}")
    if cfg.judge:
        raise ConfigError("judge: a judge grades against one pack's rubric; a mixed run cannot take one")
    if cfg.eval_every is not None:
        raise ConfigError("eval_every: held-out evaluation of a mixed run is per pack (evaluator eval per pack, or an experiment)")
    if cfg.data is not None:
        raise ConfigError("data: a mixed run reads each pack's default data; leave data unset")


def _check_pack_fields(cfg: TrainConfig) -> None:
    """``domain`` names a registered pack and ``language`` is one it has prompts in."""
    from evaluator.domains.base import PackError
    from evaluator.domains.registry import get_pack

    if "," in cfg.domain:
        return _check_mix(cfg)
    if cfg.mix is not None:
        raise ConfigError("mix: needs several packs in domain, comma-separated")
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
    from evaluator.core.outputs import atomic_write_text

    doc = cfg.to_dict()
    if resolved:
        doc["resolved"] = resolved
    atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
