"""`evaluator audit` — read the audit log: sign-ins, sign-outs, uploads, exports, key and user changes."""

from __future__ import annotations

import datetime as dt
import json

import typer

from evaluator.app.commands.db import DB_HELP, engine_or_fail
from evaluator.core.console import console, fail


def _day(flag: str, value: str | None) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        fail(f"{flag} {value!r} is not a date; write it as YYYY-MM-DD")


def audit(
    user: str | None = typer.Option(None, "--user", help="Only this actor: a login, or key:<id>."),
    action: str | None = typer.Option(None, "--action", help="Only this action (sign-in, upload, user.add …)."),
    since: str | None = typer.Option(None, "--since", help="From this day on, YYYY-MM-DD (UTC)."),
    until: str | None = typer.Option(None, "--until", help="Up to and including this day, YYYY-MM-DD (UTC)."),
    limit: int = typer.Option(200, "--limit", help="At most this many events, newest first (1–1000)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line instead of a table."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Show audit events, newest first; details never hold a password or a key."""
    from rich.markup import escape
    from rich.table import Table
    from sqlalchemy.orm import Session

    from evaluator.app.storage.audit import ACTIONS, events

    if action and action not in ACTIONS:
        fail(f"--action must be one of {', '.join(ACTIONS)}")
    start, end = _day("--since", since), _day("--until", until)
    if start and end and end < start:
        fail("--until is before --since")
    if not 1 <= limit <= 1000:
        fail("--limit must be between 1 and 1000")
    engine = engine_or_fail(db)
    try:
        with Session(engine) as session:
            rows = events(session, actor=user, action=action, since=start, until=end, limit=limit)
    finally:
        engine.dispose()
    if as_json:
        for e in rows:
            print(json.dumps({"at": e.at.isoformat(), "actor": e.actor, "action": e.action, "address": e.address,
                              "detail": e.detail}, ensure_ascii=False))
        return
    table = Table(title=f"{len(rows)} audit event(s)")
    for col in ("at (UTC)", "actor", "action", "address", "detail"):
        table.add_column(col)
    for e in rows:
        detail = json.dumps(e.detail, ensure_ascii=False) if e.detail else ""
        table.add_row(*(escape(c) for c in (e.at.strftime("%Y-%m-%d %H:%M:%S"), e.actor, e.action,
                                            e.address or "-", detail)))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
