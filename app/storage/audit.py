"""The audit log: who did what, when and from where, in the database (every worker and the CLI write to it).

:func:`record` is the one way in: any route or command that signs in, uploads, exports or changes a key or a
user calls it with the actor (a :class:`Principal`, a login, ``key:<id>``, or None for a shell command), an action name and a
small JSON detail. Details never carry a secret: fields named like a password, key, secret or token are
dropped, and anything shaped like an API key (``ev_<id>_<secret>``) is redacted, so a careless caller cannot
leak one. :func:`events` reads it back with the filters the page and ``evaluator audit`` offer.
"""

from __future__ import annotations

import datetime as dt
import getpass
import re
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from evaluator.app.storage.tables import AuditEvent


class Actor(Protocol):
    """Who did something: a signed-in principal (``apikeys.Principal``, which records through this module)."""

    @property
    def actor(self) -> str: ...


# the actions the product records (filters offer these; a new caller adds its action here)
ACTIONS = ("sign-in", "sign-in-failed", "sign-out", "upload", "export", "key.create", "key.revoke",
           "user.add", "user.passwd", "user.disable")
SECRET_FIELD = re.compile(r"pass|secret|token|^key$|api_key|csrf", re.IGNORECASE)
KEY_SHAPE = re.compile(r"ev_[0-9A-Za-z]+_[A-Za-z0-9_-]+")
MAX_TEXT = 500
MAX_ROWS = 1000


def _clean(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return KEY_SHAPE.sub("ev_[redacted]", value)[:MAX_TEXT]
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, dict) and depth < 3:
        return {str(k)[:100]: _clean(v, depth + 1) for k, v in value.items() if not SECRET_FIELD.search(str(k))}
    if isinstance(value, list | tuple) and depth < 3:
        return [_clean(v, depth + 1) for v in list(value)[:100]]
    return _clean(str(value), depth)


def cli_actor() -> str:
    """How a shell command is named: ``cli:<operating-system user>`` (``cli`` when the user is unknown)."""
    try:
        return f"cli:{getpass.getuser()}"[:100]
    except (KeyError, OSError):
        return "cli"


def _actor(actor: Actor | str | None) -> str:
    if actor is None:
        return cli_actor()
    name = actor if isinstance(actor, str) else actor.actor
    return KEY_SHAPE.sub("ev_[redacted]", name)[:100]


def record(session: Session, actor: Actor | str | None, action: str, detail: dict[str, Any] | None = None,
           *, address: str | None = None, commit: bool = True) -> None:
    """Append one event. ``commit=False`` leaves it in the caller's transaction (so the change and its
    record are stored together, or neither)."""
    session.add(AuditEvent(at=dt.datetime.now(dt.timezone.utc), actor=_actor(actor), action=action[:40],
                           address=(address or None) and address[:100], detail=_clean(detail or {})))
    if commit:
        session.commit()


def _utc(day: dt.date | dt.datetime, end: bool) -> dt.datetime:
    if isinstance(day, dt.datetime):
        return day if day.tzinfo else day.replace(tzinfo=dt.timezone.utc)
    moment = dt.datetime.combine(day, dt.time.min, dt.timezone.utc)
    return moment + dt.timedelta(days=1) if end else moment


def events(session: Session, *, actor: str | None = None, action: str | None = None,
           since: dt.date | dt.datetime | None = None, until: dt.date | dt.datetime | None = None,
           limit: int = 200) -> list[AuditEvent]:
    """Newest first. ``since``/``until`` as dates include the whole day (UTC)."""
    stmt = select(AuditEvent)
    if actor:  # logins are stored in lower case; key:<id> and cli:<user> as they are
        name = actor.strip()
        stmt = stmt.where(AuditEvent.actor == (name if ":" in name else name.lower()))
    if action:
        stmt = stmt.where(AuditEvent.action == action.strip())
    if since is not None:
        stmt = stmt.where(AuditEvent.at >= _utc(since, end=False))
    if until is not None:
        stmt = stmt.where(AuditEvent.at < _utc(until, end=True))
    stmt = stmt.order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(max(1, min(limit, MAX_ROWS)))
    return list(session.scalars(stmt))
