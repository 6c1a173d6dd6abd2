"""`evaluator db` — create/upgrade the database schema and import report folders."""

from __future__ import annotations

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
    from evaluator.app.pack_services import store_report_folder
    from evaluator.app.storage.database import DatabaseError, check_url, service_url
    from evaluator.core.batch_gc import collector_paused

    if not reports_dir.is_dir():
        fail(f"{reports_dir} is not a folder")
    url = service_url(db)
    try:
        check_url(url)
    except DatabaseError as exc:
        fail(str(exc))
    with collector_paused():
        store_report_folder(url, reports_dir, source="import")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")
