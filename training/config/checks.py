"""Every check a run config passes, as functions of the values alone: each value's type and range (one message
naming every bad field), then the rules between fields that TRL would report late or cryptically (batch
divisibility, held-out split, packs, scale-out options).

:func:`~evaluator.training.config.loading.load_config` runs them on YAML values and flags alike; the experiment
runner runs them on each arm.
"""

from __future__ import annotations

import math
from typing import Any

from evaluator.domains.base import PackError
from evaluator.domains.registry import get_pack
from evaluator.training.config.declaration import TrainConfig, field_kinds
from evaluator.training.config.errors import ConfigError
from evaluator.training.config.scale import validate_launch, validate_vllm

LR_SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_restarts", "polynomial")
"""The transformers schedules that need no extra arguments."""


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
    _check_generation_batch(cfg)
    trl = cfg.trl if isinstance(cfg.trl, dict) else {}
    if cfg.lr_scheduler_type not in LR_SCHEDULERS and not trl.get("lr_scheduler_kwargs"):
        raise ConfigError(
            f"lr_scheduler_type must be one of {', '.join(LR_SCHEDULERS)}, not {cfg.lr_scheduler_type!r} (TRL's "
            "other schedules need their arguments: --trl lr_scheduler_kwargs='{…}')"
        )
    if cfg.algorithm not in ALGORITHMS:
        raise ConfigError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {cfg.algorithm!r}")
    if cfg.normalize_advantages and cfg.algorithm != "rloo":
        raise ConfigError(
            "normalize_advantages is an RLOO setting (algorithm: rloo); GRPO scales with scale_rewards"
        )
    if cfg.dynamic_sampling is not None and cfg.max_steps < 1:
        raise ConfigError("dynamic_sampling streams prompts without end: set max_steps")
    if cfg.quantize not in (None, "4bit", "none"):
        raise ConfigError(f"quantize must be 4bit or none, not {cfg.quantize!r}")
    _check_pack_fields(cfg)
    if cfg.quantize == "4bit" and not cfg.lora:
        raise ConfigError("4-bit weights cannot be trained directly: keep LoRA on with --quantize 4bit")
    validate_launch(cfg)
    validate_vllm(cfg)


def _check_generation_batch(cfg: TrainConfig) -> None:
    """The completions generated at once (TRL's generation batch) must be whole groups of num_generations."""
    trl = cfg.trl if isinstance(cfg.trl, dict) else {}
    given = trl.get("generation_batch_size")
    if isinstance(given, int) and not isinstance(given, bool):
        what, size = f"trl.generation_batch_size ({given})", given
    else:
        steps = trl.get("steps_per_generation")
        steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else None
        what = (f"per_device_train_batch_size × {'trl.steps_per_generation' if steps else 'gradient_accumulation_steps'} "
                f"({cfg.per_device_train_batch_size}×{steps or cfg.gradient_accumulation_steps})")  # fmt: skip
        size = cfg.per_device_train_batch_size * (steps or cfg.gradient_accumulation_steps)
    if size % cfg.num_generations:
        raise ConfigError(f"{what} must be divisible by num_generations ({cfg.num_generations})")


def validate_tracking(cfg: TrainConfig) -> None:
    """Held-out evaluation, collapse guard and tracker settings (the fields this part of a run adds)."""
    if isinstance(cfg.report_to, str):  # `report_to: tensorboard` in YAML, or "tensorboard,wandb"
        cfg.report_to = [t.strip() for t in cfg.report_to.split(",") if t.strip()]
    if cfg.eval_every is not None and cfg.eval_every < 1:
        raise ConfigError(
            f"eval_every must be at least 1 (or unset to turn evaluation off), not {cfg.eval_every}"
        )
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
        raise ConfigError(
            f"collapse_drop is an accuracy drop between 0 and 1 (e.g. 0.10), not {cfg.collapse_drop}"
        )
    if cfg.stop_on_collapse and cfg.eval_every is None:
        raise ConfigError(
            "stop_on_collapse watches held-out accuracy: turn evaluation on with --eval-every N"
        )
    unknown = [t for t in cfg.report_to or [] if t not in TRACKERS]
    if unknown:
        raise ConfigError(
            f"report_to: unknown tracker(s) {', '.join(unknown)}; choose from {', '.join(TRACKERS)}"
        )
    if "none" in (cfg.report_to or []) and len(cfg.report_to or []) > 1:
        raise ConfigError("report_to: 'none' cannot be combined with a tracker")


def _check_mix(cfg: TrainConfig) -> None:
    """Several packs: every name a pack, one positive weight each, and only what a mixed run supports."""
    names = [d.strip() for d in cfg.domain.split(",") if d.strip()]
    for name in names:
        try:
            get_pack(name)
        except PackError as exc:
            raise ConfigError(f"domain: {exc}") from exc
    if len(set(names)) != len(names):
        raise ConfigError(f"domain: a pack is named twice in {cfg.domain!r}")
    if cfg.mix is None or len(cfg.mix) != len(names) or any(not (w > 0) for w in cfg.mix):
        raise ConfigError(
            f"mix: one weight > 0 per pack in {cfg.domain!r} (e.g. --mix 0.5,0.5), got {cfg.mix!r}"
        )
    if cfg.judge:
        raise ConfigError("judge: a judge grades against one pack's rubric; a mixed run cannot take one")
    if cfg.data is not None:
        raise ConfigError("data: a mixed run reads each pack's default data; leave data unset")


def _check_pack_fields(cfg: TrainConfig) -> None:
    """``domain`` names a registered pack and ``language`` is one it has prompts in."""
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
