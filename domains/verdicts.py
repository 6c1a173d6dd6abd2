"""What a pack's grader returns and what a pack measures: a :class:`Verdict` per completion with its
:class:`Score`, and the :class:`Metric` s a pack declares (reports, CIs, compare and plots iterate over them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class PackError(ValueError):
    """A pack was asked for something it cannot provide (unknown style, source, …)."""


def completion_text(completion: Any) -> str:
    """The assistant text of one TRL completion (a string, or a list of chat messages)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    if isinstance(completion, Sequence):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, Mapping))
    return str(completion)


@dataclass(frozen=True)
class Score:
    """What a pack's grader says about one completion, in the terms of its declared metrics.

    ``value`` is one float (the pack declares one metric) or a dict of named floats (one per metric it
    measured; a metric a grader could not compute, e.g. an optional model-based one, is simply absent).
    """

    value: float | dict[str, float]
    answer: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def values(self, metrics: Sequence[Metric]) -> dict[str, float]:
        """The value as ``{metric name: float}``; a bare float belongs to the first declared metric."""
        if isinstance(self.value, Mapping):
            return {str(k): float(v) for k, v in self.value.items() if v is not None}
        return {metrics[0].name: float(self.value)}


AGGREGATIONS = ("mean",)


@dataclass(frozen=True)
class Metric:
    """A figure a pack reports per item and over items (bootstrap CI over items, paired deltas in compare).

    ``binary`` metrics are 0/1 per item (McNemar applies to them); ``headline`` marks the one number a
    report leads with.
    """

    name: str
    description: str = ""
    aggregation: str = "mean"
    higher_is_better: bool = True
    headline: bool = False
    binary: bool = False

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise PackError(f"metric {self.name!r}: aggregation must be one of {', '.join(AGGREGATIONS)}")


ACCURACY = Metric("accuracy", "Share of items whose extracted answer is correct.", headline=True, binary=True)
"""The metric of a pack whose grader says right or wrong (the default)."""


def check_metrics(metrics: Sequence[Metric], pack: str = "?") -> tuple[Metric, ...]:
    """Metrics with unique names and exactly one headline, or PackError."""
    names = [m.name for m in metrics]
    if not names:
        raise PackError(f"pack {pack!r} declares no metrics")
    if len(set(names)) != len(names):
        raise PackError(f"pack {pack!r} declares a metric twice: {', '.join(names)}")
    heads = [m.name for m in metrics if m.headline]
    if len(heads) != 1:
        raise PackError(f"pack {pack!r} must mark exactly one headline metric, not {heads or 'none'}")
    return tuple(metrics)


@dataclass(frozen=True)
class Verdict:
    """How one completion was graded: what was read, whether it counts, every reward's score, and the
    grader's :class:`Score` in metric terms (None: the pack's default, ``accuracy`` = ``correct``)."""

    extracted: str | None
    correct: bool
    format_ok: bool
    scores: dict[str, float | None]
    details: dict[str, Any] = field(default_factory=dict)
    score: Score | None = None
