"""TRL reward functions for GSM8K: correctness plus the four shaping rewards of the GRPO-GSM8K recipe.

TRL calls ``fn(prompts=…, completions=…, completion_ids=…, trainer_state=…, **dataset_columns)``; these read
``style`` (one per completion; the pack default when missing) and ``answer`` (the gold number). Every score is
in 0..1 — the rubric weights carry the scale (the recipe's 2.0 for correctness is a weight here).
``correctness`` is None for a row without a gold answer ("not applicable" to TRL).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from evaluator.domains.base import RewardFn, completion_text
from evaluator.domains.gsm8k.extract import strict_answer
from evaluator.domains.gsm8k.formats import int_ok, soft_format_ok, strict_format_ok, xmlcount_score
from evaluator.domains.gsm8k.numbers import answers_match, gold_text
from evaluator.domains.gsm8k.styles import get_style

REWARD_NAMES = ("correctness", "int", "strict_format", "soft_format", "xmlcount")


def correctness_score(text: str, gold: Any, style: str) -> float | None:
    """1.0 when the strict answer equals the gold number, 0.0 otherwise, None without a gold answer."""
    gold = gold_text(gold)
    if gold is None:
        return None
    return 1.0 if answers_match(strict_answer(text, style), gold) else 0.0


def int_score(text: str, style: str) -> float:
    return 1.0 if int_ok(text, style) else 0.0


def strict_format_score(text: str, style: str) -> float:
    return 1.0 if strict_format_ok(text, style) else 0.0


def soft_format_score(text: str, style: str) -> float:
    return 1.0 if soft_format_ok(text, style) else 0.0


def _column(kwargs: dict[str, Any], name: str, n: int, default: Any) -> list[Any]:
    """A dataset column as a per-completion list (a scalar is broadcast; missing gives ``default``)."""
    value = kwargs.get(name)
    if value is None or isinstance(value, str):
        return [value if value is not None else default] * n
    values = list(value)
    if len(values) != n:
        raise ValueError(f"reward column {name!r} has {len(values)} values for {n} completions")
    return [default if v is None else v for v in values]


def _styles(kwargs: dict[str, Any], n: int, default_style: str) -> list[str]:
    styles = _column(kwargs, "style", n, default_style)
    for style in set(styles):
        get_style(style)  # a clear error for an unknown style, before any scoring
    return styles


_SCORERS: dict[str, Callable[[str, str], float]] = {
    "int": int_score,
    "strict_format": strict_format_score,
    "soft_format": soft_format_score,
    "xmlcount": xmlcount_score,
}


class GSM8KReward:
    """One named reward. A callable class, not a closure, so it pickles (TRL's async rollout workers need that);
    ``__name__`` is the reward's name because TRL logs ``rewards/<__name__>``."""

    def __init__(self, name: str, default_style: str) -> None:
        if name not in REWARD_NAMES:
            raise ValueError(f"unknown gsm8k reward {name!r}; choose one of {', '.join(REWARD_NAMES)}")
        get_style(default_style)
        self.__name__ = name
        self.default_style = default_style

    def __repr__(self) -> str:
        return f"GSM8KReward({self.__name__!r}, default_style={self.default_style!r})"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        texts = [completion_text(c) for c in completions]
        styles = _styles(kwargs, len(texts), self.default_style)
        if self.__name__ == "correctness":
            golds = _column(kwargs, "answer", len(texts), None)
            return [correctness_score(t, g, s) for t, g, s in zip(texts, golds, styles, strict=True)]
        score = _SCORERS[self.__name__]
        return [score(t, s) for t, s in zip(texts, styles, strict=True)]


def build_reward_functions(default_style: str) -> dict[str, RewardFn]:
    """Name → TRL reward function, in the rubric's order."""
    return {name: GSM8KReward(name, default_style) for name in REWARD_NAMES}
