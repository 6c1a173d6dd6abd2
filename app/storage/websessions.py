"""Browser sessions kept in the database: every worker sees them, and logout or revoking the key ends them.

The cookie carries a 256-bit random token; only its SHA-256 is stored, with the key id, a CSRF token and
an expiry. Each request re-reads the key's row, so a revoked or expired key signs its sessions out at once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import Principal, active_principal
from evaluator.app.storage.tables import WebSession


@dataclass(frozen=True)
class SignedIn:
    """A live session: who it is, the CSRF token its forms must carry, and when it ends."""

    principal: Principal
    csrf: str
    expires_at: dt.datetime


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def start_session(session: Session, key_id: str, ttl: dt.timedelta) -> tuple[str, dt.datetime]:
    """Store a new session for ``key_id``; return the cookie token (never stored) and its expiry."""
    token = secrets.token_urlsafe(32)
    now = _now()
    expires = now + ttl
    session.execute(delete(WebSession).where(WebSession.expires_at < now))  # sweep old rows as we go
    session.add(WebSession(token_hash=_hash(token), key_id=key_id, csrf=secrets.token_urlsafe(32),
                           created_at=now, expires_at=expires))
    session.commit()
    return token, expires


def lookup(session: Session, token: str) -> SignedIn | None:
    """The live session behind a cookie token, or None (unknown, expired, or its key no longer active)."""
    if not token or len(token) > 100:
        return None
    row = session.scalar(select(WebSession).where(WebSession.token_hash == _hash(token)))
    if row is None:
        return None
    expires = row.expires_at if row.expires_at.tzinfo else row.expires_at.replace(tzinfo=dt.timezone.utc)
    if expires <= _now():
        return None
    who = active_principal(session, row.key_id)
    return SignedIn(who, row.csrf, expires) if who is not None else None


def end_session(session: Session, token: str) -> None:
    session.execute(delete(WebSession).where(WebSession.token_hash == _hash(token)))
    session.commit()
