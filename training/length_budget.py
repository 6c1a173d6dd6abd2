"""Length budgets: a pack's prompts and reference answers measured with the run's tokenizer, before a trainer loads.

Lengths differ by pack and by tokenizer by an order of magnitude (a GSM8K prompt is ~100 tokens; a fund
prompt ~850–2,150 and its answer ~150–440), so no fixed default fits: a fixed SFT length silently truncated
answers or dropped every example (a traceback deep inside TRL), and a fixed GRPO completion length cut every
answer before its JSON closed (every reward 0, and no word why). A sample of rows is measured instead, once,
with the exact chat rendering the trainer will use.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.domains.base import DomainPack
from evaluator.models.chat_format import ChatFormat
from evaluator.training.config import TrainingError

SAMPLE_ROWS = 64
"""Rows measured (a random sample, seeded): enough for a 95th percentile, seconds even for long prompts."""
MARGIN = 1.1
"""SFT's measured length is the longest sampled example plus 10 % (rows outside the sample may be longer)."""
ROUND_TO = 64
CLIPPED_MAJORITY = 0.5
"""A GRPO run is flagged when more than this share of completions hit ``max_completion_length``."""


def percentile(values: Sequence[int], q: float) -> int:
    """Nearest-rank percentile (the value at or below which ``q`` of the values lie)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class LengthBudget:
    """Token counts of a sample of rows: rendered prompts, reference answers (None: the pack has none)."""

    prompts: tuple[int, ...]
    answers: tuple[int, ...]
    rows: int
    """Rows in the dataset the sample came from."""

    @property
    def prompt_max(self) -> int:
        return max(self.prompts)

    @property
    def answer_max(self) -> int | None:
        return max(self.answers) if self.answers else None

    @property
    def answer_p95(self) -> int | None:
        return percentile(self.answers, 95) if self.answers else None

    @property
    def example_max(self) -> int:
        """The longest prompt + answer pair of the sample (prompt alone without references)."""
        if not self.answers:
            return self.prompt_max
        return max(p + a for p, a in zip(self.prompts, self.answers, strict=True))

    def sft_length(self) -> int:
        """SFT's max length when none is given: the longest sampled example plus a margin, rounded up."""
        return math.ceil(self.example_max * MARGIN / ROUND_TO) * ROUND_TO

    def record(self) -> dict[str, Any]:
        return {
            "sampled_rows": len(self.prompts),
            "rows": self.rows,
            "prompt_max": self.prompt_max,
            "prompt_p95": percentile(self.prompts, 95),
            "answer_max": self.answer_max,
            "answer_p95": self.answer_p95,
            "example_max": self.example_max,
        }


def measure(
    pack: DomainPack,
    dataset: Any,
    tokenizer: Any,
    fmt: ChatFormat,
    style: str,
    *,
    sample: int = SAMPLE_ROWS,
    seed: int = 0,
    completion_column: str | None = None,
) -> LengthBudget:
    """Tokens of a seeded sample of ``dataset``'s prompts (as the trainer renders them) and answers.

    Answers come from ``completion_column`` (an SFT dataset's rendered completions) or else from the pack's
    reference solutions; conversational completions are rendered with their prompt as SFT renders them,
    plain answers get one end-of-turn token.
    """
    n = len(dataset)
    if n == 0:
        return LengthBudget((0,), (), 0)
    indices = sorted(random.Random(seed).sample(range(n), min(sample, n)))
    prompts, answers = [], []

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    for i in indices:
        row = dataset[i]
        prompt = count(fmt.render(tokenizer, row["prompt"]))
        prompts.append(prompt)
        value = row.get(completion_column) if completion_column else None
        if isinstance(value, list) and isinstance(row["prompt"], list):  # rendered as SFT renders the pair
            full = tokenizer.apply_chat_template(
                fmt.messages(row["prompt"]) + list(value), tokenize=False, **fmt.template_kwargs
            )
            answers.append(count(full) - prompt)
            continue
        answer = str(value) if value is not None else pack.reference_solution(row, style=style)
        if answer is not None:
            answers.append(count(answer) + 1)  # and the end-of-turn token
    if len(answers) != len(prompts):  # a pack with references for some rows only: prompts alone
        answers = []
    return LengthBudget(tuple(prompts), tuple(answers), n)


def sft_max_length(budget: LengthBudget, given: int | None) -> int:
    """The SFT length: ``given`` when every sampled example fits it, the measured one when not given.

    A given length that would cut a sampled reference answer stops the run (a cut answer teaches the model
    never to finish one); the message names the length needed.
    """
    if given is None:
        return budget.sft_length()
    if budget.example_max > given:
        cut = sum(p + a > given for p, a in zip(budget.prompts, budget.answers or (0,) * len(budget.prompts), strict=True))
        raise TrainingError(
            f"--max-seq-length {given} is too short: {cut} of {len(budget.prompts)} sampled examples are longer "
            f"(the longest is {budget.example_max} tokens: prompts up to {budget.prompt_max}, answers up to "
            f"{budget.answer_max}); pass --max-seq-length {budget.sft_length()} or leave it unset to size it "
            "from the data"
        )
    return given


def completion_warning(budget: LengthBudget, max_completion_length: int) -> str | None:
    """A warning when ``max_completion_length`` is below the reference answers' 95th percentile."""
    p95 = budget.answer_p95
    if p95 is None or max_completion_length >= p95:
        return None
    return (
        f"--max-completion-length {max_completion_length} is below the reference answers' 95th percentile "
        f"({p95} tokens, longest {budget.answer_max}): most completions will be cut before they end and score "
        f"nothing; pass --max-completion-length {math.ceil((budget.answer_max or p95) * MARGIN)} or more"
    )


def clipped_note(rows: Sequence[dict[str, Any]], max_completion_length: int) -> dict[str, Any] | None:
    """How many completions hit the length limit, from TRL's ``completions/clipped_ratio`` per logged step."""
    ratios = [float(r["completions/clipped_ratio"]) for r in rows if r.get("completions/clipped_ratio") is not None]
    if not ratios:
        return None
    mean = sum(ratios) / len(ratios)
    note: dict[str, Any] = {"clipped_ratio_mean": round(mean, 4), "max_completion_length": max_completion_length}
    if mean > CLIPPED_MAJORITY:
        note["warning"] = (
            f"{mean:.0%} of completions were cut at --max-completion-length {max_completion_length} before they "
            "ended: their rewards mostly measure the cut, not the answer; raise --max-completion-length"
        )
    return note


def say_warning(console: Any, text: str) -> None:
    """A warning on the run's console, or on stderr for a caller without one (benchmarks, tests)."""
    if console is not None:
        console.print(f"[bold yellow]warning:[/] {text}")
    else:
        import sys

        print(f"warning: {text}", file=sys.stderr, flush=True)


def check_grpo_lengths(
    pack: DomainPack, dataset: Any, tokenizer: Any, fmt: ChatFormat, style: str, cfg: Any, console: Any
) -> dict[str, Any]:
    """Measure before GRPO's trainer loads; warn when completions cannot hold a typical reference answer."""
    budget = measure(pack, dataset, tokenizer, fmt, style, seed=cfg.seed)
    record = budget.record()
    warning = completion_warning(budget, cfg.max_completion_length)
    if warning is not None:
        say_warning(console, warning)
        record["warning"] = warning
    return record
