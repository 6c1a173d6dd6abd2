"""Which rewards a single-pack run uses (the rubric's, or the configured subset), their weights, and their names
as TRL logs them (``rewards/<name>/mean``); mixed runs name theirs ``pack.reward`` through the same wrapper."""

from __future__ import annotations

import functools
from typing import Any

from evaluator.domains.base import DomainPack, RewardFn
from evaluator.training.config import TrainConfig, TrainingError


def named_reward(name: str, fn: RewardFn) -> RewardFn:
    """Give a reward the rubric's name, so TRL logs ``rewards/<name>/mean``."""

    @functools.wraps(fn)
    def reward(*args: Any, **kwargs: Any) -> list[float | None]:
        return fn(*args, **kwargs)

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


def select_rewards(pack: DomainPack, cfg: TrainConfig) -> tuple[list[str], list[RewardFn], list[float]]:
    """The pack's rewards (or the configured subset) with rubric weights, overrides applied."""
    available = pack.reward_functions()
    names = list(cfg.rewards or available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise TrainingError(
            f"unknown reward(s) {', '.join(unknown)} for {pack.name}; available: {', '.join(available)}"
        )
    weights = pack.default_weights()
    overrides = cfg.reward_weights or {}
    bad = [n for n in overrides if n not in available and n != "judge"]
    if bad:
        raise TrainingError(f"reward_weights names unknown reward(s): {', '.join(bad)}")
    weights.update(overrides)
    return names, [named_reward(n, available[n]) for n in names], [float(weights.get(n, 1.0)) for n in names]
