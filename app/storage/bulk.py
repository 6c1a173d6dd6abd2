"""Many rows into one table inside the caller's transaction: PostgreSQL ``COPY``, SQLite the driver's own
``executemany``, one Core ``executemany`` elsewhere.

A batch is 15,000 funds × three tables. The ORM's bulk insert spends most of its time collecting
parameters, and a Core ``INSERT`` still builds and processes one parameter dict per row in Python; here
each row becomes one tuple of the column values. On PostgreSQL a ``COPY … FROM STDIN`` through psycopg 3
sends the rows as one stream instead of statements; on SQLite the ``sqlite3`` cursor on the session's own
connection (so inside its transaction) runs one prepared ``INSERT`` per row without SQLAlchemy in the loop.
Every value goes through the column type's own bind processing first (a JSON column's serialiser; a Python
``None`` in a JSON column is JSON ``null``, as SQLAlchemy stores it; a date as SQLite's text) and the
driver's own adapters, so the rows are the same whichever way they went in
(``tests/web/test_storage_bulk.py`` compares them column by column).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Table
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows`` (every row with the same keys) into ``table`` in ``session``'s transaction."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    if dialect.name == "postgresql" and dialect.driver == "psycopg":
        _copy(connection, table, rows)
    elif dialect.name == "sqlite" and dialect.driver == "pysqlite":
        _executemany(connection, table, rows)
    else:
        connection.execute(table.insert(), list(rows))


def _values(connection: Any, table: Table, rows: Sequence[dict[str, Any]]) -> tuple[list[str], Iterator[Any]]:
    """The column names and each row as a tuple of its bind-processed values (in that order)."""
    names = list(rows[0])
    dialect = connection.dialect
    processors: list[Callable[[Any], Any] | None] = [
        table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
    ]  # a JSON column's gives psycopg's Json wrapper on PostgreSQL, the serialised text on SQLite
    pick = itemgetter(*names) if len(names) > 1 else (lambda row: (row[names[0]],))
    if not any(processors):
        return names, map(pick, rows)
    work = [(i, p) for i, p in enumerate(processors) if p is not None]

    def processed(row: dict[str, Any]) -> list[Any]:
        values = list(pick(row))
        for i, p in work:
            values[i] = p(values[i])
        return values

    return names, map(processed, rows)


def _executemany(connection: Any, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    names, values = _values(connection, table, rows)
    dialect = connection.dialect
    columns = ", ".join(dialect.identifier_preparer.quote(n) for n in names)
    statement = (
        f"INSERT INTO {dialect.identifier_preparer.format_table(table)} ({columns}) "
        f"VALUES ({', '.join('?' * len(names))})"
    )
    cursor = connection.connection.driver_connection.cursor()
    try:
        cursor.executemany(statement, values)
    except dialect.loaded_dbapi.Error as exc:  # as SQLAlchemy raises it (IntegrityError …), for the callers
        raise DBAPIError.instance(statement, None, exc, dialect.loaded_dbapi.Error, dialect=dialect) from exc
    finally:
        cursor.close()


def _copy(connection: Any, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    names, values = _values(connection, table, rows)
    dialect = connection.dialect
    columns = ", ".join(dialect.identifier_preparer.quote(n) for n in names)
    statement = f"COPY {dialect.identifier_preparer.format_table(table)} ({columns}) FROM STDIN"
    driver = connection.connection.driver_connection
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in values:
                copy.write_row(row)
    except dialect.loaded_dbapi.Error as exc:  # as SQLAlchemy raises it (IntegrityError …), for the callers
        raise DBAPIError.instance(statement, None, exc, dialect.loaded_dbapi.Error, dialect=dialect) from exc

