"""What an evaluation reads besides its generation settings and model (:mod:`evaluator.core.generation`): the
items and where the report goes.

Small values instead of a long parameter list, so each caller of :func:`~evaluator.evaluation.harness.evaluate`
says in a few words which model, which items and which folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


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
