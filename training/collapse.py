"""The collapse guard: held-out accuracy falling while the format rewards hold up.

A policy that learns to emit a well-formed but constant answer (``<answer>2</answer>`` for everything)
keeps collecting the format rewards, so the mean training reward barely moves while accuracy goes to
zero. The guard watches the held-out figures at each evaluation point and raises an event when accuracy
has dropped ``drop`` (absolute) below the best so far while the format signal is at least as high as
it was at the best point (within ``format_slack``) or stays high (``format_high``).

The format signal is the held-out format rate (greedy, same slice every time, in [0, 1]); runs without
it fall back to the mean of the training rewards named ``*format*`` / ``*xml*``, which are sampled and
noisier.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FORMAT_SLACK = 0.05
FORMAT_HIGH = 0.9


def format_signal(logs: dict[str, Any]) -> float | None:
    """How well-formed the outputs are now: the held-out format rate, else the training format rewards' mean.

    Training rewards whose names mention format or xml are the ones a collapsed policy keeps collecting.
    """
    rate = logs.get("eval/format_rate")
    if _finite(rate):
        return float(rate)
    values = [
        float(v)
        for k, v in logs.items()
        if k.startswith("rewards/") and k.endswith("/mean") and _is_format_name(k) and _finite(v)
    ]
    return sum(values) / len(values) if values else None


def _is_format_name(key: str) -> bool:
    name = key.split("/")[1].lower() if key.count("/") >= 2 else key.lower()
    return "format" in name or "xml" in name


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and value == value and abs(value) != float("inf")


@dataclass
class CollapseGuard:
    """Feed it every evaluation point; it returns a collapse event (once per fall) or None."""

    drop: float = 0.10
    format_slack: float = FORMAT_SLACK
    format_high: float = FORMAT_HIGH
    best: float | None = None
    best_step: int | None = None
    format_at_best: float | None = None
    active: bool = False
    """True while an event has been raised and accuracy has not yet recovered: one event per fall."""
    events: list[dict[str, Any]] = field(default_factory=list)

    def update(self, step: int, accuracy: float | None, fmt: float | None) -> dict[str, Any] | None:
        if accuracy is None:
            return None
        if self.best is None or accuracy > self.best:
            self.best, self.best_step, self.format_at_best, self.active = accuracy, step, fmt, False
            return None
        fell = self.best - accuracy
        if fell < self.drop - 1e-12:
            self.active = False  # recovered to within the margin: a later fall is a new event
            return None
        if self.active or fmt is None:
            return None
        ref = self.format_at_best
        holds = fmt >= self.format_high or (ref is not None and fmt >= ref - self.format_slack * max(1.0, abs(ref)))
        if not holds:
            return None
        self.active = True
        event = {
            "event": "collapse",
            "step": step,
            "eval/accuracy": accuracy,
            "best_accuracy": self.best,
            "best_step": self.best_step,
            "drop": round(fell, 6),
            "threshold": self.drop,
            "format": fmt,
            "format_at_best": ref,
        }
        self.events.append(event)
        return event
