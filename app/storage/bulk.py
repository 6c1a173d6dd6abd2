"""Many rows into one table inside the caller's transaction: PostgreSQL ``COPY``, one ``executemany`` elsewhere.

A batch is 15,000 funds × three tables. The ORM's bulk insert spends most of its time collecting
parameters; a Core ``INSERT`` with the rows as one ``executemany`` skips that, and on PostgreSQL a
``COPY … FROM STDIN`` through psycopg 3 sends the rows as one stream instead of statements. Every value
goes through the column type's own bind processing first (a JSON column's serialiser; a Python ``None``
in a JSON column is JSON ``null``, as SQLAlchemy stores it) and the driver's own adapters, so the rows
are the same whichever way they went in (``tests/web/test_storage_bulk.py`` compares them column by column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows`` (every row with the same keys) into ``table`` in ``session``'s transaction."""
    if not rows:
        return
    connection = session.connection()
    if connection.dialect.name == "postgresql" and connection.dialect.driver == "psycopg":
        _copy(connection, table, rows)
    else:
        connection.execute(table.insert(), list(rows))


def _copy(connection: Any, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    names = list(rows[0])
    dialect = connection.dialect
    processors: list[Callable[[Any], Any] | None] = [
        table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
    ]  # a JSON column's gives psycopg's Json wrapper, which COPY writes with the same dumper as an INSERT
    columns = ", ".join(dialect.identifier_preparer.quote(n) for n in names)
    statement = f"COPY {dialect.identifier_preparer.format_table(table)} ({columns}) FROM STDIN"
    driver = connection.connection.driver_connection
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row([v if p is None else p(v) for p, v in zip(processors, map(row.__getitem__, names),
                                                                         strict=True)])
    except dialect.loaded_dbapi.Error as exc:  # as SQLAlchemy raises it (IntegrityError …), for the callers
        raise DBAPIError.instance(statement, None, exc, dialect.loaded_dbapi.Error, dialect=dialect) from exc
