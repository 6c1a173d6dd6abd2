"""The whole run config turned into TRL's config object before the model, data or judge load, and the settings
that would do nothing in that object said out loud.

``check_run`` is what ``evaluator train`` / ``sft``, the trainers themselves and ``experiment run --dry-run``
call first: a bad value (``loss_type: dapoo``, ``--trl num_iterations=x``) is one :class:`ConfigError` naming
the field, the value and the allowed ones, before a run folder exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.training.algorithms import grpo_args
from evaluator.training.config import ConfigError, SFTRunConfig, TrainConfig
from evaluator.training.run_setup import planned_policy, trainer_kwargs
from evaluator.training.trl_fields import TRL_CLASSES, check_declared, config_class

RATIO_ONE_LOSSES = ("grpo", "bnpo", "dr_grpo", "dapo", "luspo")
"""TRL 1.16 losses that clip the importance ratio with epsilon / epsilon_high (and cap it with delta)."""
NO_CLIP_LOSSES = ("sapo", "vespo")
"""Losses that replace clipping with a soft gate: epsilon, epsilon_high and delta do nothing there."""


def trainer_name(cfg: TrainConfig) -> str:
    """The TRL trainer the run uses: grpo, rloo or sft."""
    return "sft" if isinstance(cfg, SFTRunConfig) else cfg.algorithm


def build_args(cfg: TrainConfig, trainer: str | None = None, out: Path | None = None) -> Any:
    """TRL's config object for the run (GRPOConfig, RLOOConfig or SFTConfig), decided without loading a weight.

    The chat format's template arguments and the reward weights are filled once the model's tokenizer and the
    rewards exist; neither can make TRL refuse a config.
    """
    trainer = trainer or trainer_name(cfg)
    check_declared(cfg, trainer)
    out = out or Path(cfg.output_dir)
    policy = planned_policy(cfg)
    try:
        if trainer == "sft":
            cls = config_class("sft")
            return cls(**trainer_kwargs(cfg, out, policy, cls, "sft"))
        return grpo_args(cfg, out, policy, None)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"TRL {TRL_CLASSES[trainer]} refuses this run config: {exc}") from exc


def check_run(cfg: TrainConfig, trainer: str | None = None) -> tuple[Any, list[str]]:
    """(TRL's config object, warnings about settings that would do nothing); raises :class:`ConfigError`."""
    trainer = trainer or trainer_name(cfg)
    args = build_args(cfg, trainer)
    return args, ([] if trainer == "sft" else idle_settings(cfg, args))


def idle_settings(cfg: TrainConfig, args: Any) -> list[str]:
    """One line per setting the run asked for that TRL will not act on, and what would make it count."""
    defaults = TrainConfig()
    out: list[str] = []
    given = dict(cfg.trl or {})
    if cfg.algorithm == "rloo":
        for name in ("loss_type", "scale_rewards", "epsilon_high"):
            if getattr(cfg, name) != getattr(defaults, name) and not hasattr(args, name):
                out.append(f"{name}: RLOO has no such setting (TRL RLOOConfig); it does nothing here (algorithm: grpo uses it)")
    clip = {n: v for n, v in (("epsilon", cfg.epsilon if cfg.epsilon != defaults.epsilon else None),
                              ("epsilon_high", cfg.epsilon_high), ("delta", getattr(args, "delta", None))) if v is not None}  # fmt: skip
    loss = getattr(args, "loss_type", None)
    if loss == "cispo" and "epsilon" in clip:
        out.append("epsilon: loss_type cispo caps the ratio from above only (epsilon_high); epsilon does nothing")
        clip.pop("epsilon")
    if clip and loss in NO_CLIP_LOSSES:
        out.append(f"{', '.join(clip)}: loss_type {loss} has no clipping; these do nothing (use dapo, grpo, … to clip)")
    elif clip and (loss in RATIO_ONE_LOSSES or cfg.algorithm == "rloo") and ratio_is_one(args):
        out.append(
            f"{', '.join(clip)}: with one optimisation step per generation batch the importance ratio is always 1, "
            "so clipping never acts; set --trl num_iterations=2 (or --trl steps_per_generation=N, N > "
            f"gradient_accumulation_steps {args.gradient_accumulation_steps}) to make it count"
        )
    if cfg.beta == 0:
        for name in ("sync_ref_model", "use_bias_correction_kl"):
            if given.get(name):
                out.append(f"trl.{name}: needs a reference model, and beta is 0; set --beta > 0 for it to act")
    for prefix, loss_name in (("sapo_", "sapo"), ("vespo_", "vespo")):
        for name in given:
            if name.startswith(prefix) and loss != loss_name:
                out.append(f"trl.{name}: used only by loss_type {loss_name} (this run: {loss}); it does nothing")
    return out


def ratio_is_one(args: Any) -> bool:
    """TRL reuses the rollout's own log-probs as the "old" policy unless a generation batch feeds more than one
    optimisation step (``num_iterations`` > 1 or ``steps_per_generation`` beyond the accumulation steps) or
    vLLM's importance-sampling correction is on: then the ratio is exactly 1 and nothing is clipped."""
    every = (args.steps_per_generation or args.gradient_accumulation_steps) * getattr(args, "num_iterations", 1)
    vllm_is = getattr(args, "use_vllm", False) and getattr(args, "vllm_importance_sampling_correction", False)
    return args.gradient_accumulation_steps % every == 0 and not vllm_is


def say_idle(console: Any, warnings: list[str]) -> None:
    """Each warning on the console (or stderr without one)."""
    import sys

    for line in warnings:
        if console is not None:
            from rich.markup import escape

            console.print(f"[bold yellow]warning:[/] {escape(line)}")
        else:
            print(f"warning: {line}", file=sys.stderr)


def recorded(cfg: TrainConfig, args: Any) -> dict[str, Any]:
    """What ``run_config.yaml`` records of TRL's object: each ``trl:`` key as TRL holds it after its checks."""
    return {key: _plain(getattr(args, key)) for key in (cfg.trl or {})}


def _plain(value: Any) -> Any:
    import enum

    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value
