"""One verdict per finished GRPO/RLOO run: did it learn, or did it only run?

A run that ends without an error can still have learned nothing: every group scored alike (zero advantages,
zero gradients), the policy fell into garbage (format and reward at ~0 after starting higher), or every
completion hit the length cap (the reward never saw a whole answer). The verdict names the first of these
that holds, with the numbers behind it, so a console line, ``run_summary.json``, the run viewer and the
experiment results all say the same thing. Pure: it reads the logged rows, nothing else.

Order: ``collapsed`` (the worst outcome, whatever caused it), ``clipped`` (the usual cause of a run with no
signal: no answer fits the cap), ``no_signal``, then ``learning``. Every condition that holds is listed in
``flags``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.training.collapse import format_signal
from evaluator.training.length_budget import CLIPPED_MAJORITY

NO_SIGNAL_ZERO_STD = 0.9
"""Mean share of groups whose rewards were all equal at or above which the run had (almost) no signal."""
ZERO_GRAD = 1e-12
COLLAPSE_FROM = 0.2
"""A collapse needs the early format signal or reward at least this high …"""
COLLAPSE_TO = 0.02
"""… and the late one at or below this (absolute, for format rates in [0, 1]) or this share of the early reward."""
MIN_STEPS_FOR_TREND = 4

VERDICTS = ("learning", "no_signal", "collapsed", "clipped")


def _values(rows: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    out = []
    for row in rows:
        value = row.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out.append(float(value))
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _ends(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean of the first and of the last quarter (at least one value each)."""
    if len(values) < MIN_STEPS_FOR_TREND:
        return None, None
    k = max(1, len(values) // 4)
    return _mean(values[:k]), _mean(values[-k:])


def run_health(rows: Sequence[Mapping[str, Any]], held_out: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The verdict of a run from its logged step rows (``metrics.jsonl``) and its held-out record, if any."""
    steps = [r for r in rows if "loss" in r or "reward" in r]
    zero_std = _mean(_values(steps, "frac_reward_zero_std"))
    grads = _values(steps, "grad_norm")
    zero_grad_share = sum(1 for g in grads if abs(g) <= ZERO_GRAD) / len(grads) if grads else None
    clipped_values = _values(steps, "completions/clipped_ratio")
    clipped = _mean(clipped_values[len(clipped_values) // 2:]) if clipped_values else None  # the second half
    reward_first, reward_last = _ends(_values(steps, "reward"))
    fmt = [v for v in (format_signal(dict(r)) for r in steps) if v is not None]
    format_first, format_last = _ends(fmt)
    events = list((held_out or {}).get("collapse_events") or [])
    numbers = {
        "steps": len(steps),
        "frac_reward_zero_std_mean": _round(zero_std),
        "zero_grad_norm_share": _round(zero_grad_share),
        "clipped_ratio_late": _round(clipped),
        "reward_first": _round(reward_first),
        "reward_last": _round(reward_last),
        "format_first": _round(format_first),
        "format_last": _round(format_last),
        "held_out_collapse_events": len(events),
    }
    reasons: dict[str, str] = {}
    if format_first is not None and format_last is not None and format_first >= COLLAPSE_FROM and format_last <= COLLAPSE_TO:
        reasons["collapsed"] = f"the format signal fell from {format_first:.2f} to {format_last:.2f}"
    elif (
        reward_first is not None and reward_last is not None and reward_first >= COLLAPSE_FROM
        and reward_last <= COLLAPSE_TO * reward_first
    ):
        reasons["collapsed"] = f"the reward fell from {reward_first:.3g} to {reward_last:.3g}"
    elif events:
        e = events[0]
        reasons["collapsed"] = (
            f"held-out accuracy fell {e.get('drop', 0):.1%} below its best while the format held (step {e.get('step')})"
        )
    if clipped is not None and clipped > CLIPPED_MAJORITY:
        reasons["clipped"] = (
            f"{clipped:.0%} of completions hit the length cap in the run's second half: raise "
            "max_completion_length (or ask for shorter answers)"
        )
    if (zero_std is not None and zero_std >= NO_SIGNAL_ZERO_STD) or (grads and zero_grad_share == 1.0):
        parts = []
        if zero_std is not None:
            parts.append(f"{zero_std:.0%} of groups scored alike (zero advantage)")
        if zero_grad_share is not None:
            parts.append(f"grad norm 0 at {zero_grad_share:.0%} of steps")
        reasons["no_signal"] = "; ".join(parts)
    order = ("collapsed", "clipped", "no_signal")
    verdict = next((v for v in order if v in reasons), "learning")
    reason = reasons.get(verdict) or "rewards varied within groups and gradients flowed; no collapse or clipping"
    return {"verdict": verdict, "reason": reason, "flags": [v for v in order if v in reasons], "numbers": numbers}


def verdict_line(health: Mapping[str, Any]) -> str:
    """One console line: the verdict and why."""
    return f"run health: {health.get('verdict')} — {health.get('reason')}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
