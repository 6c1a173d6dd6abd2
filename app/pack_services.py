"""The application's side of :class:`~evaluator.domains.base.CommandServices`: what packs' own commands reach
through it (the database for ``--db``, the evaluation harness for ``--model``), both above the packs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluator.domains.base import DomainPack


class AppServices:
    """Handed to each pack's ``cli.register`` by :mod:`evaluator.app.cli`."""

    def prepare_db(self, flag: str | None) -> str | None:
        from evaluator.app.commands.db import prepare_store

        return prepare_store(flag)

    def store_folder(
        self, url: str, folder: Path, *, source: str, texts: Mapping[str, str] | None = None
    ) -> None:
        from evaluator.app.commands.db import store_report_folder

        store_report_folder(url, folder, source=source, texts=texts)

    def store_companies(self, url: str, reports: Path, doc: dict[str, Any]) -> None:
        """Store a report folder's batch (if new) and its 운용사 ratings (``companies.json``) with it."""
        from sqlalchemy.exc import SQLAlchemyError

        from evaluator.app.storage.batches import BatchError
        from evaluator.app.storage.companies import store_companies
        from evaluator.app.storage.database import DatabaseError, open_database
        from evaluator.core.console import console, fail

        try:
            engine = open_database(url, migrate=True)
        except DatabaseError as exc:
            fail(str(exc))
        try:
            run_id, n = store_companies(engine, reports, doc)
        except BatchError as exc:
            fail(f"company ratings not stored: {exc}")
        except SQLAlchemyError as exc:
            fail(f"company ratings not stored: database error ({type(exc).__name__})")
        finally:
            engine.dispose()
        console.print(f"stored {n} company ratings with run {run_id}")

    def grade_with_model(
        self, pack: DomainPack, rows: list[dict[str, Any]], model: dict[str, Any], **settings: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """``settings``: the harness's item, generation and grading keywords (``style``, ``max_new_tokens``,
        ``batch_size``, ``extract``, ``on_batch`` …), sorted here into the harness's typed values."""
        from evaluator.evaluation.generate import GenerationError, Generator
        from evaluator.evaluation.harness import evaluate
        from evaluator.evaluation.inputs import Items
        from evaluator.models.generation import GenerationSettings

        generation = GenerationSettings(**_take(settings, GenerationSettings))
        items = Items(**_take(settings, Items), rows=rows)
        try:
            generator = Generator.load(
                model["model"],
                adapter=model.get("adapter"),
                quantize=model.get("quantize"),
                backend=model.get("backend") or "hf",
            )
            return evaluate(pack, generator, items, generation, return_samples=True, **settings)
        except GenerationError as exc:
            raise ValueError(str(exc)) from exc


def _take(settings: dict[str, Any], cls: type) -> dict[str, Any]:
    """Remove and return the keywords that are fields of the dataclass ``cls``."""
    import dataclasses

    return {f.name: settings.pop(f.name) for f in dataclasses.fields(cls) if f.name in settings}
