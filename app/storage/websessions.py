"""Browser sessions kept in the database: every worker sees them, and logout, a password change, disabling the
account or revoking the key ends them.

The cookie carries a 256-bit random token; only its SHA-256 is stored, with the user or key it belongs to, a
CSRF token, an absolute expiry and the time it was last used (for the idle timeout; written at most once a
minute per session). Each request re-reads the account's or key's row, so a disabled account or a revoked or
expired key signs its sessions out at once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import Principal, active_principal
from evaluator.app.storage.tables import WebSession
from evaluator.app.storage.users import active_user

TOUCH_EVERY = dt.timedelta(seconds=60)


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


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def _owner(principal: Principal) -> dict[str, object]:
    if principal.login is not None:
        return {"user_id": int(principal.key_id.split(":", 1)[1]), "key_id": None}
    return {"key_id": principal.key_id, "user_id": None}


def start_session(session: Session, principal: Principal, ttl: dt.timedelta,
                  idle: dt.timedelta | None = None) -> tuple[str, dt.datetime]:
    """Store a new session for ``principal`` (an account or a key); return the cookie token (never stored)
    and its absolute expiry."""
    token = secrets.token_urlsafe(32)
    now = _now()
    expires = now + ttl
    stale = [WebSession.expires_at < now]
    if idle is not None:
        stale.append(WebSession.last_seen_at < now - idle)
    session.execute(delete(WebSession).where(or_(*stale)))  # sweep old rows as we go
    session.add(WebSession(token_hash=_hash(token), **_owner(principal), csrf=secrets.token_urlsafe(32),
                           created_at=now, expires_at=expires, last_seen_at=now))
    session.commit()
    return token, expires


def lookup(session: Session, token: str, idle: dt.timedelta | None = None) -> SignedIn | None:
    """The live session behind a cookie token, or None (unknown, past its expiry, idle longer than ``idle``,
    or its account or key no longer active)."""
    if not token or len(token) > 100:
        return None
    row = session.scalar(select(WebSession).where(WebSession.token_hash == _hash(token)))
    if row is None:
        return None
    now = _now()
    expires = _utc(row.expires_at)
    if expires <= now or (idle is not None and _utc(row.last_seen_at) + idle <= now):
        return None
    if row.user_id is not None:
        who = active_user(session, row.user_id)
    else:
        who = active_principal(session, row.key_id) if row.key_id is not None else None
    if who is None:
        return None
    if now - _utc(row.last_seen_at) >= TOUCH_EVERY:
        row.last_seen_at = now
        session.commit()
    return SignedIn(who, row.csrf, expires)


def end_session(session: Session, token: str) -> None:
    session.execute(delete(WebSession).where(WebSession.token_hash == _hash(token)))
    session.commit()
