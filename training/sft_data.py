"""Supervised pairs from a pack's reference solutions, in the chat format's shape (one pack's; a mixed run
interleaves several of these)."""

from __future__ import annotations

from typing import Any

from evaluator.domains.base import DomainPack
from evaluator.models.chat_format import ChatFormat, fold_dataset
from evaluator.training.config import TrainConfig, TrainingError


def sft_dataset(pack: DomainPack, cfg: TrainConfig, style: str, fmt: ChatFormat | None = None) -> Any:
    """Prompt-completion pairs (conversational) from the pack's reference solutions, in ``fmt`` when given."""
    data = pack.dataset(
        cfg.data, cfg.split, style=style, language=cfg.language, limit=cfg.limit, seed=cfg.seed
    )
    if len(data) == 0:
        raise TrainingError(f"the {pack.name} data {cfg.data or '(default)'} has no rows in split {cfg.split!r} to train on")
    first = pack.reference_solution(data[0], style=style)
    if first is None:
        raise TrainingError(
            f"the {pack.name} pack has no reference solutions, so there is nothing to imitate; "
            "use `evaluator train` (GRPO) directly"
        )

    def to_pair(row: dict[str, Any]) -> dict[str, Any]:
        return {"completion": [{"role": "assistant", "content": pack.reference_solution(row, style=style)}]}

    data = data.map(to_pair)
    return with_chat_format(data, fmt) if fmt is not None else data


def with_chat_format(data: Any, fmt: ChatFormat) -> Any:
    """Prompts folded where the template needs it; the template arguments in TRL's per-row column.

    SFTTrainer renders the rows itself and reads extra template arguments only from a
    ``chat_template_kwargs`` column, so that is where the thinking switch goes.
    """
    if fmt.template_kwargs:
        kwargs = dict(fmt.template_kwargs)
        data = data.map(lambda _row: {"chat_template_kwargs": kwargs})
    return fold_dataset(data, fmt)
