"""One adapter on several packs: their rows drawn by mixing weights, each pack's rewards scoring only its rows.

``domain: gsm8k,fund`` with ``mix: [0.5, 0.5]`` (weights that do not sum to 1 are used as proportions, and
``run_config.yaml`` records them normalised under ``resolved.mix``). Each pack's reward weights are normalised to
sum to 1 (:func:`mixed_rewards`), so every pack's reward lies on the same 0..1 scale. Packs' gold columns differ, so a mixed row keeps the
shared ``prompt`` and moves the rest into ``pack`` (its name) and ``payload`` (its columns as JSON).
A pack's reward sees only its own rows, rebuilt from the payload, and returns ``None`` for the others:
TRL turns that into NaN and sums the rewards with ``nansum``, so each row is scored by its own rubric.
Each pack keeps its own data default, style and chat format; the held-out evaluation (``eval_every``) grades each
pack on its own slice, and the best adapter follows the mean of the packs' held-out accuracies.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from evaluator.domains.base import DomainPack, RewardFn
from evaluator.domains.registry import get_pack
from evaluator.models.chat_format import chat_format, fold_dataset
from evaluator.training.rewards import named_reward
from evaluator.training.sft_data import sft_dataset, with_chat_format

PASS_THROUGH = frozenset({"trainer_state", "log_extra", "log_metric", "environments"})


def pack_names(domain: str) -> list[str]:
    """``gsm8k,fund`` → ``["gsm8k", "fund"]`` (one name for a single-pack run)."""
    return [d.strip() for d in str(domain).split(",") if d.strip()]


def is_mixed(domain: str) -> bool:
    return len(pack_names(domain)) > 1


def probabilities(mix: list[float]) -> list[float]:
    total = float(sum(mix))
    return [float(m) / total for m in mix]


def pack_rows(pack: DomainPack, cfg: Any, split: str, fmt: Any = None) -> Any:
    """One pack's rows as ``prompt, pack, payload`` (the prompt folded for the chat format when given)."""
    style = pack.check_style(cfg.style if cfg.style in pack.styles else None)
    data = pack.dataset(cfg.data if cfg.data and not is_mixed(cfg.domain) else None, split, style=style,
                        language=cfg.language if cfg.language in pack.languages else None, limit=cfg.limit, seed=cfg.seed)
    if fmt is not None:
        data = fold_dataset(data, fmt)
    others = [c for c in data.column_names if c != "prompt"]

    def to_mixed(row: dict[str, Any]) -> dict[str, Any]:
        return {"pack": pack.name, "payload": json.dumps({k: row[k] for k in others}, ensure_ascii=False, default=str)}

    return data.map(to_mixed, remove_columns=others)


def mixed_dataset(cfg: Any, tokenizer: Any, split: str) -> Any:
    """The packs' rows interleaved by ``cfg.mix`` (seeded), every pack's prompts in its own chat format."""
    import datasets

    parts = []
    for name in pack_names(cfg.domain):
        pack = get_pack(name)
        style = pack.check_style(cfg.style if cfg.style in pack.styles else None)
        parts.append(pack_rows(pack, cfg, split, chat_format(tokenizer, style, pack)))
    return datasets.interleave_datasets(
        parts, probabilities=probabilities(cfg.mix), seed=cfg.seed, stopping_strategy="all_exhausted"
    )


def own_rows_only(pack_name: str, fn: RewardFn) -> RewardFn:
    """``fn`` on its pack's rows (columns rebuilt from ``payload``); ``None`` for every other pack's row."""

    @functools.wraps(fn)
    def reward(prompts: list[Any] | None = None, completions: list[Any] | None = None, **columns: Any) -> list[Any]:
        completions = list(completions or [])
        n = len(completions)
        mine = [i for i, p in enumerate(columns.get("pack") or []) if p == pack_name]
        out: list[Any] = [None] * n
        if not mine:
            return out
        rows = [json.loads(columns["payload"][i]) for i in mine]
        kwargs: dict[str, Any] = {k: [r.get(k) for r in rows] for k in rows[0]}
        for key, value in columns.items():
            if key in ("pack", "payload") or key in kwargs:
                continue
            if key in PASS_THROUGH or not isinstance(value, list) or len(value) != n:
                kwargs[key] = value
            else:
                kwargs[key] = [value[i] for i in mine]
        sub = fn(prompts=[prompts[i] for i in mine] if prompts is not None else None,
                 completions=[completions[i] for i in mine], **kwargs)
        for i, value in zip(mine, sub, strict=True):
            out[i] = value
        return out

    return reward


def mixed_rewards(cfg: Any) -> tuple[list[str], list[RewardFn], list[float]]:
    """Every pack's rewards (named ``pack.reward``) with the pack's rubric weights, ``reward_weights`` over them,
    each pack's weights then divided by their sum.

    Rubrics weigh on their own scales (the fund rubric's weights sum to 100, GSM8K's to 4) while every reward
    scores 0..1, so unnormalised a fund row could earn 25× a GSM8K row and the gradient, ``scale_rewards:
    batch|none`` and the best-reward adapter would follow the fund prompts. Divided by its pack's total, every
    row's reward is its rubric's weighted mean: 0..1 for every pack, the rubric's proportions kept.
    """
    names: list[str] = []
    funcs: list[RewardFn] = []
    weights: list[float] = []
    overrides = cfg.reward_weights or {}
    for pack_name in pack_names(cfg.domain):
        pack = get_pack(pack_name)
        available = pack.reward_functions()
        chosen = [n for n in (cfg.rewards or available) if n in available]
        defaults = pack.default_weights()
        given = [float(overrides.get(f"{pack_name}.{n}", defaults.get(n, 1.0))) for n in chosen]
        total = sum(given)
        for reward_name, weight in zip(chosen, given, strict=True):
            full = f"{pack_name}.{reward_name}"
            names.append(full)
            funcs.append(named_reward(full, own_rows_only(pack_name, available[reward_name])))
            weights.append(weight / total if total > 0 else weight)  # each pack's weights sum to 1: one scale
    known = {n.split(".", 1)[1] for n in names}
    unused = [n for n in cfg.rewards or [] if n not in known]
    if unused:
        raise ValueError(f"rewards: {', '.join(unused)} is a reward of none of the packs {cfg.domain}")
    return names, funcs, weights


def mixed_sft_dataset(cfg: Any, tokenizer: Any) -> Any:
    """SFT pairs of every pack (reference solutions in each pack's format), interleaved by ``cfg.mix``."""
    import datasets

    parts = []
    for name in pack_names(cfg.domain):
        pack = get_pack(name)
        style = pack.check_style(cfg.style if cfg.style in pack.styles else None)
        one = cfg.replace(domain=name, data=None, style=style,
                          language=cfg.language if cfg.language in pack.languages else None)
        data = with_chat_format(sft_dataset(pack, one, style), chat_format(tokenizer, style, pack))
        keep = [c for c in ("prompt", "completion", "chat_template_kwargs") if c in data.column_names]
        parts.append(data.select_columns(keep))
    return datasets.interleave_datasets(
        parts, probabilities=probabilities(cfg.mix), seed=cfg.seed, stopping_strategy="all_exhausted"
    )


def mix_record(cfg: Any) -> dict[str, Any]:
    """What ``run_config.yaml`` records of a mixed run: the drawing probabilities (the ``mix`` weights divided
    by their sum, so ``[2, 1]`` is stated as 2/3, 1/3) and how rewards were put on one scale."""
    names = pack_names(cfg.domain)
    return {
        "probabilities": dict(zip(names, probabilities(cfg.mix), strict=True)),
        "given": list(cfg.mix),
        "normalised": abs(sum(cfg.mix) - 1.0) > 1e-9,
        "reward_scale": "each pack's reward weights divided by their sum (every pack's reward on 0..1)",
    }
