"""Which TRL trainer a policy-gradient run uses, and its arguments, built from the one ``TrainConfig``.

GRPO and RLOO share most knobs but not their defaults: TRL 1.16's ``RLOOConfig`` starts from
``num_generations=2``, ``beta=0.05`` (a reference model, the KL subtracted from the reward) and
``normalize_advantages=False``, and has no ``loss_type`` or ``scale_rewards``. So nothing is left to a TRL
default here: every field named below is copied by name from the run's config (``beta`` is 0 unless the run
says otherwise), and the record written to ``run_config.yaml`` says which fields the chosen trainer ignores.
TRL 1.16 has no ``PPOTrainer`` (neither top level nor ``trl.experimental``): RLOO is the critic-free
alternative it offers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.models.chat_format import ChatFormat
from evaluator.training.config import TrainConfig, trl_kwargs, trl_names
from evaluator.training.run_setup import trainer_kwargs
from evaluator.training.vllm_options import vllm_kwargs

TRAINERS = {"grpo": ("GRPOConfig", "GRPOTrainer"), "rloo": ("RLOOConfig", "RLOOTrainer")}


def trl_classes(algorithm: str) -> tuple[type, type]:
    """(TRL config class, TRL trainer class) for ``algorithm``."""
    import trl

    config_name, trainer_name = TRAINERS[algorithm]
    return getattr(trl, config_name), getattr(trl, trainer_name)


ROLLOUT_FAMILIES = ("rollout", "rloo")
"""The declared TRL arguments that decide the algorithm (beside the shared TrainingArguments)."""


def mapped_fields(cfg: TrainConfig) -> dict[str, Any]:
    """The rollout fields the algorithm's TRL config takes, by name, from the run's config (the one mapping,
    :func:`evaluator.training.config.trl_kwargs`, restricted to what decides the algorithm)."""
    config_cls, _ = trl_classes(cfg.algorithm)
    rollout = trl_names(type(cfg), ROLLOUT_FAMILIES)
    return {k: v for k, v in trl_kwargs(cfg, config_cls, cfg.algorithm).items() if k in rollout.values()}


def trl_args(cfg: TrainConfig, common: dict[str, Any], weights: list[float] | None, extra: dict[str, Any]) -> Any:
    """The TRL config of ``cfg.algorithm``: the declared fields + ``common`` (what the run derives) + ``extra``."""
    config_cls, _ = trl_classes(cfg.algorithm)
    return config_cls(
        **{**trl_kwargs(cfg, config_cls, cfg.algorithm), **common, **extra},
        reward_weights=weights,
        log_completions=False,
    )


def algorithm_record(cfg: TrainConfig) -> dict[str, Any]:
    """What ``run_config.yaml`` records: the trainer, the values it got, and the declared fields it ignores."""
    fields = mapped_fields(cfg)
    ignored = sorted(name for name in trl_names(type(cfg), ROLLOUT_FAMILIES).values() if name not in fields)
    return {
        "name": cfg.algorithm,
        "trainer": TRAINERS[cfg.algorithm][1],
        **fields,
        "ignored_fields": ignored,
        "note": "TRL 1.16 has no PPOTrainer; RLOO is its critic-free alternative" if cfg.algorithm == "rloo" else None,
    }


def grpo_args(
    cfg: TrainConfig, out: Path, policy: Any, weights: list[float] | None, fmt: ChatFormat | None = None
) -> Any:
    """TRL's GRPOConfig or RLOOConfig (``cfg.algorithm``); the chat format's template arguments reach TRL."""
    extra = {
        "chat_template_kwargs": dict(fmt.template_kwargs) if fmt and fmt.template_kwargs else None,
        **vllm_kwargs(cfg),
    }
    if cfg.dynamic_sampling:  # the prompt stream shuffles itself; TRL's buffered shuffle would read far ahead
        extra["shuffle_dataset"] = False
    config_cls, _ = trl_classes(cfg.algorithm)
    return trl_args(cfg, trainer_kwargs(cfg, out, policy, config_cls, cfg.algorithm), weights, extra)
