"""`evaluator db` — create/upgrade the database schema and import report folders."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import typer

from evaluator.core.console import console, fail

db_app = typer.Typer(name="db", help="The evaluation database: migrations and report-folder imports.", no_args_is_help=True)

DB_HELP = "Database URL (sqlite:///PATH or postgresql+psycopg://user:pw@host:port/db); default: EVALUATOR_DB, else $EVALUATOR_HOME/evaluator.db."


def engine_or_fail(url: str | None, *, migrate: bool = True):  # type: ignore[no-untyped-def]
    """Open the service database (creating/upgrading the schema); a bad URL is a clear error."""
    from evaluator.app.storage.database import DatabaseError, open_database, service_url

    try:
        return open_database(service_url(url), migrate=migrate)
    except DatabaseError as exc:
        fail(str(exc))


def prepare_store(flag: str | None) -> str | None:
    """For ``fund evaluate``: --db, else EVALUATOR_DB, else None (store nothing). The database is reached and
    migrated before any work, so a wrong URL or a server that is down never costs a long batch."""
    from evaluator.app.storage.database import DatabaseError, check_url, open_database, opt_in_url

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
    from sqlalchemy.exc import SQLAlchemyError

    from evaluator.app.storage.batches import BatchError, store_folder
    from evaluator.app.storage.database import DatabaseError, open_database

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


@db_app.command("upgrade")
def upgrade_cmd(db: str | None = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Create the tables or bring them up to the newest migration (safe to run again)."""
    from evaluator.app.storage.database import current_revision

    engine = engine_or_fail(db, migrate=True)
    console.print(f"database at revision {current_revision(engine)}")
    engine.dispose()


@db_app.command("import")
def import_cmd(
    reports_dir: Path = typer.Argument(..., help="A `fund evaluate --out` folder (summary.json + reports)."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Store an existing report folder as one batch (one transaction; a batch already stored is left alone)."""
    from evaluator.app.storage.database import DatabaseError, check_url, service_url

    if not reports_dir.is_dir():
        fail(f"{reports_dir} is not a folder")
    url = service_url(db)
    try:
        check_url(url)
    except DatabaseError as exc:
        fail(str(exc))
    store_report_folder(url, reports_dir, source="import")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")
