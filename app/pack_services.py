"""The application's side of :class:`~evaluator.domains.base.CommandServices`: what packs' own commands reach
through it (the database for ``--db``, the evaluation harness for ``--model``), both above the packs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from evaluator.app.storage.batches import BatchError, store_folder
from evaluator.app.storage.companies import store_companies
from evaluator.app.storage.database import DatabaseError, check_url, open_database, opt_in_url
from evaluator.core.console import console, fail
from evaluator.core.generation import GenerationSettings
from evaluator.domains.base import DomainPack
from evaluator.evaluation.backends import GenerationError, load_generator
from evaluator.evaluation.harness import evaluate
from evaluator.evaluation.inputs import Items


def prepare_store(flag: str | None) -> str | None:
    """For ``fund evaluate``: --db, else EVALUATOR_DB, else None (store nothing). The database is reached and
    migrated before any work, so a wrong URL or a server that is down never costs a long batch."""
    url = opt_in_url(flag)
    if url is None:
        return None
    try:
        open_database(check_url(url), migrate=True).dispose()
    except DatabaseError as exc:
        fail(str(exc))
    return url


def store_report_folder(url: str, folder: Path, *, source: str, texts: Mapping[str, str] | None = None) -> None:
    """Store one report folder and say what happened (stored, or already there); ``texts``: its files as
    just written (name → text), read instead of the files."""
    later = f"; the reports are in {folder}: store them with `evaluator db import {folder}`" if source == "evaluate" else ""
    try:
        engine = open_database(url, migrate=True)
    except DatabaseError as exc:
        fail(f"{exc}{later}")
    try:
        result = store_folder(engine, folder, source=source, texts=texts)
    except BatchError as exc:
        fail(f"nothing stored: {exc}{later}")
    except SQLAlchemyError as exc:
        fail(f"nothing stored: database error ({type(exc).__name__}: {str(exc).splitlines()[0]}){later}")
    finally:
        engine.dispose()
    if result.created:
        console.print(f"stored run {result.run_id}: {result.funds} fund reports as of {result.as_of}")
    else:
        console.print(
            f"already stored as run {result.run_id} (same inputs, rubric, as-of and engine version); nothing changed"
        )


class AppServices:
    """Handed to each pack's ``cli.register`` by :mod:`evaluator.app.cli`."""

    def prepare_db(self, flag: str | None) -> str | None:
        return prepare_store(flag)

    def store_folder(
        self, url: str, folder: Path, *, source: str, texts: Mapping[str, str] | None = None
    ) -> None:
        store_report_folder(url, folder, source=source, texts=texts)

    def store_companies(self, url: str, reports: Path, doc: dict[str, Any]) -> None:
        """Store a report folder's batch (if new) and its 운용사 ratings (``companies.json``) with it."""
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
        generation = GenerationSettings(**_take(settings, GenerationSettings))
        items = Items(**_take(settings, Items), rows=rows)
        try:
            generator = load_generator(
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
    return {f.name: settings.pop(f.name) for f in dataclasses.fields(cls) if f.name in settings}
