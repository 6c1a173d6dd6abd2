"""The metric options a pack offers ``eval`` and ``score`` as flags (what the application services a pack's own
commands get is :class:`~evaluator.domains.base.CommandServices`, beside the pack it is handed)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricOption:
    """A command-line option of a pack's metric: ``eval`` and ``score`` offer it as ``flag``."""

    name: str
    flag: str
    kind: type
    help: str


def option_flag(name: str) -> str:
    """The flag a metric option is known by (``bertscore_num_layers`` → ``--bertscore-num-layers``)."""
    return "--" + name.replace("_", "-")
