"""TRL reward functions: format, exact match on the sentence, ROUGE-1 on the reason.

Every reward reads a completion with :func:`.answer.parse_answer` (the one parser) and the gold answer from
the ``answer`` column; the evaluation grader calls these same functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluator.domains.base import completion_text
from evaluator.domains.ko_grammar.answer import parse_answer
from evaluator.domains.ko_grammar.metrics import exact_match, rouge1

RewardFn = Callable[..., list[float | None]]


def _golds(answer: Any, n: int) -> list[str]:
    values = answer if isinstance(answer, list) else [answer] * n
    return [str(v or "") for v in values]


def format_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
    """1 when the answer is ``"문장"이/가 옳다. 이유`` with the particle agreeing, else 0."""
    return [1.0 if parse_answer(completion_text(c)).ok else 0.0 for c in completions]


def exact_match_reward(completions: list[Any], answer: Any = None, **kwargs: Any) -> list[float | None]:
    """1 when the quoted sentence equals the gold sentence (whitespace-normalised); strict reading only."""
    golds = _golds(answer, len(completions))
    return [
        exact_match(parse_answer(completion_text(c)).sentence, parse_answer(g).sentence)
        for c, g in zip(completions, golds, strict=True)
    ]


def rouge1_reward(completions: list[Any], answer: Any = None, **kwargs: Any) -> list[float | None]:
    """ROUGE-1 F1 of the reason against the gold reason (Korean morphemes); 0 without a readable answer."""
    golds = _golds(answer, len(completions))
    out: list[float | None] = []
    for c, g in zip(completions, golds, strict=True):
        parsed = parse_answer(completion_text(c))
        out.append(rouge1(parsed.reason, parse_answer(g).reason) if parsed.sentence is not None else 0.0)
    return out


def build_reward_functions() -> dict[str, RewardFn]:
    return {"format": format_reward, "exact_match": exact_match_reward, "rouge1": rouge1_reward}
