"""Where the database is and how to connect: URL resolution, engines (SQLite WAL + busy timeout), migrations.

``fund evaluate`` stores only with ``--db`` or ``EVALUATOR_DB``; ``serve``/``db``/``keys`` fall back to a
SQLite file under ``$EVALUATOR_HOME`` (default ``~/.local/share/evaluator``). PostgreSQL is reached with a
``postgresql+psycopg://user:password@host:port/dbname`` URL (psycopg 3).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from evaluator.core.fast_json import dumps_default

ENV_URL = "EVALUATOR_DB"
ENV_HOME = "EVALUATOR_HOME"
BUSY_TIMEOUT_MS = 15_000
SUPPORTED = ("sqlite", "postgresql")


class DatabaseError(Exception):
    """A database URL or state the user must fix (printed without a traceback)."""


def default_home() -> Path:
    home = os.environ.get(ENV_HOME)
    return Path(home).expanduser() if home else Path.home() / ".local" / "share" / "evaluator"


def default_url() -> str:
    return f"sqlite:///{default_home() / 'evaluator.db'}"


def opt_in_url(flag: str | None) -> str | None:
    """URL for ``fund evaluate``: the flag, else ``EVALUATOR_DB``, else None (store nothing)."""
    return flag or os.environ.get(ENV_URL) or None


def service_url(flag: str | None) -> str:
    """URL for ``serve``/``db``/``keys``: the flag, else ``EVALUATOR_DB``, else the default SQLite file."""
    return flag or os.environ.get(ENV_URL) or default_url()


def check_url(url: str) -> str:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseError(f"not a database URL: {url!r} ({exc})") from None
    if parsed.get_backend_name() not in SUPPORTED:
        raise DatabaseError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///PATH or postgresql+psycopg://…"
        )
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() != "psycopg":
        raise DatabaseError("PostgreSQL URLs must name the psycopg 3 driver: postgresql+psycopg://…")
    return url


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")  # readers keep working while a batch is written
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str, *, create_parent: bool = False) -> Engine:
    """An engine for ``url``; for SQLite, optionally create the file's folder first."""
    check_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database
        if path and path != ":memory:" and create_parent:
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
            json_serializer=dumps_default,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=dumps_default)


def _alembic_config(engine: Engine):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("evaluator.app.storage") / "migrations"))
    cfg.attributes["connection_engine"] = engine
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run Alembic migrations up to ``revision`` (idempotent)."""
    from alembic import command

    command.upgrade(_alembic_config(engine), revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision(engine: Engine) -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config(engine)).get_current_head()


def require_current(engine: Engine) -> None:
    """Refuse to work on a database that is missing tables or behind the code's migrations."""
    if not inspect(engine).has_table("runs"):
        raise DatabaseError("the database has no evaluator tables yet; run `evaluator db upgrade` first")
    if current_revision(engine) != head_revision(engine):
        raise DatabaseError("the database schema is out of date; run `evaluator db upgrade`")


def open_database(url: str, *, migrate: bool) -> Engine:
    """Connect; with ``migrate`` bring the schema up to date first (CLI writers), else require it current."""
    engine = make_engine(url, create_parent=migrate)
    try:
        if migrate:
            upgrade(engine)
        else:
            require_current(engine)
    except DatabaseError:
        engine.dispose()
        raise
    except Exception as exc:  # connection refused, bad credentials, unreadable file …
        engine.dispose()
        raise DatabaseError(f"cannot use database {make_url(url).render_as_string(hide_password=True)}: "
                            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    return engine
