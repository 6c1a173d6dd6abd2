"""Fixed-window rate limits kept in the database, so a limit holds across ``--workers`` processes.

One upsert per hit (INSERT … ON CONFLICT DO UPDATE … RETURNING, in SQLite ≥ 3.35 and PostgreSQL): the
counter restarts when the window moves on. Buckets are strings such as ``key:<id>`` or ``login:<address>``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from sqlalchemy import case, delete, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from evaluator.app.storage.database import BUSY_TIMEOUT_MS
from evaluator.app.storage.tables import RateCounter


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    count: int
    retry_after: int  # seconds until the window ends (meaningful when not allowed)


def _insert(session: Session):  # type: ignore[no-untyped-def]
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


SQLITE_WAIT_MS = 250
log = logging.getLogger("evaluator.api")


def hit_or_pass(session: Session, bucket: str, limit: int, window_s: int) -> Verdict:
    """:func:`hit`, except that on SQLite a counter that cannot be written within a quarter second (a batch
    is being stored: SQLite has one writer) lets the request through instead of making it wait for the
    batch; PostgreSQL writes the counter row beside a batch without waiting."""
    if session.get_bind().dialect.name != "sqlite":
        return hit(session, bucket, limit, window_s)
    session.execute(text(f"PRAGMA busy_timeout={SQLITE_WAIT_MS}"))
    try:
        return hit(session, bucket, limit, window_s)
    except OperationalError:
        session.rollback()
        log.info("rate counter busy (a batch is being written); request let through")
        return Verdict(True, 0, 0)
    finally:
        session.execute(text(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}"))


def hit(session: Session, bucket: str, limit: int, window_s: int, *, now: float | None = None) -> Verdict:
    """Count one hit in ``bucket`` and say whether it is within ``limit`` per ``window_s`` seconds."""
    now = time.time() if now is None else now
    window = int(now // window_s)
    insert = _insert(session)
    stmt = insert(RateCounter).values(bucket=bucket[:120], window=window, count=1)
    stmt = stmt.on_conflict_do_update(
        index_elements=[RateCounter.bucket],
        set_={
            "count": case((RateCounter.window == window, RateCounter.count + 1), else_=1),
            "window": window,
        },
    ).returning(RateCounter.count)
    count = int(session.execute(stmt).scalar_one())
    session.commit()
    retry = max(1, int((window + 1) * window_s - now + 0.999))
    return Verdict(count <= limit, count, retry)


def peek(session: Session, bucket: str, window_s: int, *, now: float | None = None) -> int:
    """Hits so far in the current window (without counting one)."""
    now = time.time() if now is None else now
    row = session.execute(
        select(RateCounter.window, RateCounter.count).where(RateCounter.bucket == bucket[:120])
    ).first()
    return int(row.count) if row is not None and row.window == int(now // window_s) else 0


def clear(session: Session, bucket: str) -> None:
    session.execute(delete(RateCounter).where(RateCounter.bucket == bucket[:120]))
    session.commit()
