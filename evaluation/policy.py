"""The harness as a policy grader for training: a live model graded greedily on fixed rows.

Training's in-run held-out evaluation receives this function from its caller (it never imports this floor), so
a run grades its own policy exactly as a later ``evaluator eval`` would: same pack grader, same prompt
rendering, greedy, batched. ``Generator`` switches the policy to eval mode for its forward passes and turns off
bitsandbytes' CPU repack of 4-bit weights, which would otherwise corrupt later LoRA gradients.
"""

from __future__ import annotations

from typing import Any

from evaluator.domains.base import DomainPack
from evaluator.evaluation.generate import Generator
from evaluator.evaluation.harness import evaluate


def grade_policy(
    pack: DomainPack,
    model: Any,
    tokenizer: Any,
    rows: list[dict[str, Any]],
    *,
    split: str,
    style: str | None,
    language: str,
    max_new_tokens: int,
    batch_size: int,
    seed: int,
) -> dict[str, Any]:
    """An evaluation report of ``model`` as it is now on ``rows`` (greedy, temperature 0)."""
    return evaluate(
        pack,
        generator=Generator(model, tokenizer),
        dataset=rows,
        split=split,
        temperature=0.0,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        style=style,
        language=language,
        seed=seed,
    )
