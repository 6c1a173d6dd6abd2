"""What a pack's own commands and options get from the application when it mounts them: the database and
the evaluation harness (:class:`CommandServices`, which live above the packs), and the metric options
``eval`` and ``score`` offer as flags."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from evaluator.domains.base import DomainPack


@dataclass(frozen=True)
class MetricOption:
    """A command-line option of a pack's metric: ``eval`` and ``score`` offer it as ``flag``."""

    name: str
    flag: str
    kind: type
    help: str


class CommandServices(Protocol):
    """What a pack's own commands get from the application: the database and the evaluation harness live above
    the packs, so they are handed in when the commands are mounted."""

    def prepare_db(self, flag: str | None) -> str | None:
        """The database URL to store into (``--db`` or the environment's), checked now; None for no database."""
        ...

    def store_folder(
        self, url: str, folder: Path, *, source: str, texts: Mapping[str, str] | None = None
    ) -> None:
        """Store a report folder as one batch (one transaction); a clear message and exit on failure.
        ``texts``: the folder's files as just written (name → text), read instead of the files."""
        ...

    def store_companies(self, url: str, reports: Path, doc: dict[str, Any]) -> None:
        """Store a report folder's batch (if new) and its 운용사 ratings with it; a clear message and exit on failure."""
        ...

    def grade_with_model(
        self, pack: DomainPack, rows: list[dict[str, Any]], model: dict[str, Any], **settings: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Generate for ``rows`` with ``model`` ({model, adapter, quantize, backend}) through the evaluation
        harness and grade with the pack: (report, samples). Raises ``ValueError`` when the model cannot run."""
        ...


def option_flag(name: str) -> str:
    """The flag a metric option is known by (``bertscore_num_layers`` → ``--bertscore-num-layers``)."""
    return "--" + name.replace("_", "-")
