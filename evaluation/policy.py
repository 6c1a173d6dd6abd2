"""The harness as a policy grader for training: a live model graded on fixed rows.

Training's in-run held-out evaluation receives this function from its caller (it never imports this floor), so
a run grades its own policy exactly as a later ``evaluator eval`` would: same pack grader, same prompt
rendering, the same batched generation with the settings training hands in (greedy). ``Generator`` switches
the policy to eval mode for its forward passes and turns off bitsandbytes' CPU repack of 4-bit weights, which
would otherwise corrupt later LoRA gradients.
"""

from __future__ import annotations

from typing import Any

from evaluator.core.generation import GenerationSettings
from evaluator.domains.base import DomainPack
from evaluator.evaluation.backends import Generator
from evaluator.evaluation.harness import evaluate
from evaluator.evaluation.inputs import Items


def grade_policy(
    pack: DomainPack,
    model: Any,
    tokenizer: Any,
    rows: list[dict[str, Any]],
    *,
    split: str,
    style: str | None,
    language: str,
    generation: GenerationSettings,
) -> dict[str, Any]:
    """An evaluation report of ``model`` as it is now on ``rows``."""
    items = Items(split=split, style=style, language=language, rows=rows)
    return evaluate(pack, Generator(model, tokenizer), items, generation)
