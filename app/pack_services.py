"""The application's side of :class:`~evaluator.domains.base.CommandServices`: what packs' own commands reach
through it (the database for ``--db``, the evaluation harness for ``--model``), both above the packs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.domains.base import DomainPack


class AppServices:
    """Handed to each pack's ``cli.register`` by :mod:`evaluator.app.cli`."""

    def prepare_db(self, flag: str | None) -> str | None:
        from evaluator.app.commands.db import prepare_store

        return prepare_store(flag)

    def store_folder(self, url: str, folder: Path, *, source: str) -> None:
        from evaluator.app.commands.db import store_report_folder

        store_report_folder(url, folder, source=source)

    def grade_with_model(
        self, pack: DomainPack, rows: list[dict[str, Any]], model: dict[str, Any], **settings: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        from evaluator.evaluation.generate import GenerationError, Generator
        from evaluator.evaluation.harness import evaluate

        try:
            generator = Generator.load(
                model["model"], adapter=model.get("adapter"), quantize=model.get("quantize"),
                backend=model.get("backend") or "hf",
            )
            return evaluate(pack, generator=generator, dataset=rows, return_samples=True, **settings)
        except GenerationError as exc:
            raise ValueError(str(exc)) from exc
