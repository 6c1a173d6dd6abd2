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

import dataclasses
from typing import Any

from evaluator.training.config import TrainConfig

SHARED_FIELDS = ("num_generations", "max_completion_length", "beta", "epsilon", "epsilon_high", "temperature", "top_p")
"""``TrainConfig`` fields both TRL configs declare with the same meaning."""

OWN_FIELDS = {"grpo": ("loss_type", "scale_rewards"), "rloo": ("normalize_advantages",)}
"""Fields only one algorithm has; the other's are recorded as ignored."""

TRAINERS = {"grpo": ("GRPOConfig", "GRPOTrainer"), "rloo": ("RLOOConfig", "RLOOTrainer")}


def trl_classes(algorithm: str) -> tuple[type, type]:
    """(TRL config class, TRL trainer class) for ``algorithm``."""
    import trl

    config_name, trainer_name = TRAINERS[algorithm]
    return getattr(trl, config_name), getattr(trl, trainer_name)


def mapped_fields(cfg: TrainConfig) -> dict[str, Any]:
    """The algorithm's fields, by name, from the run's config (the only place their values come from)."""
    return {name: getattr(cfg, name) for name in (*SHARED_FIELDS, *OWN_FIELDS[cfg.algorithm])}


def trl_args(cfg: TrainConfig, common: dict[str, Any], weights: list[float], extra: dict[str, Any]) -> Any:
    """The TRL config of ``cfg.algorithm``: ``common`` (TrainingArguments) + the mapped fields + ``extra``.

    A mapped field the installed TRL config does not declare is an error, not a silent drop.
    """
    config_cls, _ = trl_classes(cfg.algorithm)
    declared = {f.name for f in dataclasses.fields(config_cls)}
    fields = mapped_fields(cfg)
    missing = [name for name in fields if name not in declared]
    if missing:
        raise TypeError(f"{config_cls.__name__} of this TRL has no {', '.join(missing)}; the mapping needs updating")
    return config_cls(**common, **fields, reward_weights=weights, log_completions=False, **extra)


def algorithm_record(cfg: TrainConfig) -> dict[str, Any]:
    """What ``run_config.yaml`` records: the trainer, the values it got, and the fields it ignores."""
    ignored = [name for algo, names in OWN_FIELDS.items() if algo != cfg.algorithm for name in names]
    return {
        "name": cfg.algorithm,
        "trainer": TRAINERS[cfg.algorithm][1],
        **mapped_fields(cfg),
        "ignored_fields": ignored,
        "note": "TRL 1.16 has no PPOTrainer; RLOO is its critic-free alternative" if cfg.algorithm == "rloo" else None,
    }

