"""What an evaluation reads besides its generation settings: the model, the items and where the report goes.

Three small values instead of a long parameter list, so each caller of :func:`~evaluator.evaluation.harness.evaluate`
says in a few words which model, which items and which folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from evaluator.evaluation.backends.protocol import BACKENDS
from evaluator.models.loading import model_source


@dataclass(frozen=True)
class ModelRef:
    """A model to load by name (``tiny``, a preset, a hub id or a local path), with a LoRA adapter and how."""

    model: str
    adapter: str | os.PathLike[str] | None = None
    quantize: str | None = None
    device: str | None = None
    backend: str = "hf"

    def check(self) -> None:
        """A bad backend or a missing model folder / unreachable hub fails now, before any data is built."""
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")

        model_source(self.model)


@dataclass(frozen=True)
class Items:
    """The items to grade: the pack's ``data`` source and ``split`` (first ``limit`` rows), or ``rows`` as given.

    ``style`` and ``language`` choose the prompts (None: the pack's defaults).
    """

    data: str | None = None
    split: str = "test"
    limit: int | None = None
    style: str | None = None
    language: str | None = None
    rows: Any = None
    """Rows with ``prompt`` and the pack's gold columns; they replace ``pack.dataset(data, split…)``."""

    def check(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit must be at least 1, got {self.limit}")


@dataclass(frozen=True)
class ReportFolder:
    """Where ``report.json`` and ``samples.jsonl`` go; a non-empty folder is refused unless ``force``."""

    path: str | os.PathLike[str]
    force: bool = False
