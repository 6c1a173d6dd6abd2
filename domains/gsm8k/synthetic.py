"""Offline GSM8K-style word problems with exact integer answers, for training and tests without the hub.

Six story templates (a running tally with mixed steps, shopping, ages, rates and time, sharing,
percentages), names and items varied, worked solutions in GSM8K's own format (``<<a*b=c>>`` calculator
annotations and a final ``#### N``). Difficulty is the number of arithmetic steps (one annotation each):
the default, 1–3 steps with numbers up to 20, is learnable by a small model. Generation is seeded, and a
question belongs to ``test`` or ``train`` by a hash of its text, so the two splits never share a question.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from evaluator.domains.base import PackError
from evaluator.domains.gsm8k.stories import TEMPLATES, Story

TEST_FRACTION = 0.1
MAX_TEMPLATE_STEPS = 4


@dataclass(frozen=True)
class SyntheticConfig:
    """How hard the problems are: steps per problem and the size of the numbers in the story."""

    min_steps: int = 1
    max_steps: int = 3
    max_number: int = 20

    def __post_init__(self) -> None:
        if not 1 <= self.min_steps <= self.max_steps <= 8:
            raise PackError(
                f"synthetic steps must satisfy 1 <= min <= max <= 8, got {self.min_steps}-{self.max_steps}"
            )
        if not 6 <= self.max_number <= 10_000:
            raise PackError(f"synthetic max number must be between 6 and 10000, got {self.max_number}")


@dataclass(frozen=True)
class Problem:
    question: str
    answer_field: str
    """The worked solution in GSM8K format: lines with ``<<…>>`` annotations, then ``#### N``."""
    answer: int
    template: str
    steps: int


def split_of(question: str) -> str:
    """``test`` for about one question in ten (by a hash of its text), ``train`` otherwise."""
    bucket = hashlib.sha256(question.encode("utf-8")).digest()[0]
    return "test" if bucket < 256 * TEST_FRACTION else "train"


def make_problem(rng: random.Random, config: SyntheticConfig) -> Problem:
    steps = rng.randint(config.min_steps, config.max_steps)
    name = rng.choice(tuple(TEMPLATES)) if steps <= MAX_TEMPLATE_STEPS else "tally"
    question, lines, answer = TEMPLATES[name](Story(rng, config.max_number), steps)
    return Problem(question, "\n".join([*lines, f"#### {answer}"]), answer, name, steps)


def generate(n: int, split: str, *, seed: int = 0, config: SyntheticConfig | None = None) -> list[Problem]:
    """``n`` distinct problems of ``split`` (``train``/``test``; other names share train's pool), reproducibly."""
    config = config or SyntheticConfig()
    pool = "test" if split == "test" else "train"
    rng = random.Random(f"gsm8k-synthetic/{split}/{seed}/{config}")
    seen: set[str] = set()
    problems: list[Problem] = []
    attempts = 0
    while len(problems) < n:
        attempts += 1
        if attempts > 50 * n + 20_000:  # the story space at this difficulty is (nearly) used up
            raise PackError(
                f"could only generate {len(problems)} distinct synthetic {split} problems of {n}; "
                "allow more steps or larger numbers"
            )
        problem = make_problem(rng, config)
        if problem.question in seen or split_of(problem.question) != pool:
            continue
        seen.add(problem.question)
        problems.append(problem)
    return problems
