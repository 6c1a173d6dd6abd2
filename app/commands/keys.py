"""`evaluator keys` — API keys for client firms (위탁사): create (shown once), list, revoke."""

from __future__ import annotations

import datetime as dt

import typer

from evaluator.app.commands.db import DB_HELP, engine_or_fail
from evaluator.core.console import console, fail

keys_app = typer.Typer(name="keys", help="API keys: each key sees only its client's companies or funds.", no_args_is_help=True)


@keys_app.command("create")
def create_cmd(
    client: str = typer.Option(..., "--client", help="Client firm (위탁사) the key is for."),
    company: list[str] = typer.Option([], "--company", help="운용사 whose funds the key may see (repeatable)."),
    fund: list[str] = typer.Option([], "--fund", help="Fund code the key may see (repeatable)."),
    admin: bool = typer.Option(False, "--admin", help="See every fund (operators only)."),
    expires: str | None = typer.Option(None, "--expires", help="Last valid day, YYYY-MM-DD (UTC)."),
    allow_unknown: bool = typer.Option(
        False, "--allow-unknown", help="Accept a --company/--fund no stored batch knows yet (default: refused)."
    ),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Create a key and print it ONCE, as the last line; only its id and a salted hash are stored."""
    from evaluator.app.storage.apikeys import KeyCommandError, create_key

    try:
        expires_on = dt.date.fromisoformat(expires) if expires else None
    except ValueError:
        fail(f"--expires {expires!r} is not a date; write it as YYYY-MM-DD")
    if admin and (company or fund):
        fail("--admin sees every fund; do not combine it with --company/--fund")
    engine = engine_or_fail(db)
    try:
        key_id, key = create_key(
            engine, client=client, companies=company, funds=fund, admin=admin, expires_on=expires_on,
            allow_unknown=allow_unknown,
        )
    except KeyCommandError as exc:
        fail(str(exc))
    finally:
        engine.dispose()
    scope = "all funds" if admin else ", ".join([*company, *fund])
    console.print(
        f"key {key_id} for {client} ({scope}); expires {expires_on or 'never'}. Store it now: it is not shown again.",
        markup=False,
    )
    print(key)


@keys_app.command("list")
def list_cmd(db: str | None = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Every key's id, client, scope and state (never the secret)."""
    from rich.markup import escape
    from rich.table import Table

    from evaluator.app.storage.apikeys import key_state, list_keys

    engine = engine_or_fail(db)
    keys = list_keys(engine)
    engine.dispose()
    table = Table(title=f"{len(keys)} API key(s)")
    for col in ("id", "client", "scope", "created", "expires", "state"):
        table.add_column(col)
    for k in keys:
        scope = "admin (all funds)" if k.admin else ", ".join([*k.companies, *k.funds])
        cells = (k.id, k.client, scope, k.created_at.strftime("%Y-%m-%d"), str(k.expires_on or "-"), key_state(k))
        table.add_row(*(escape(c) for c in cells))  # client names are data, not Rich markup
    console.print(table)


@keys_app.command("revoke")
def revoke_cmd(
    key_id: str = typer.Argument(..., help="The key's id (the part after ev_, or the whole key)."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Revoke a key; every server worker refuses it from the next request on."""
    from evaluator.app.storage.apikeys import KeyCommandError, revoke_key

    if key_id.startswith("ev_"):
        key_id = key_id.split("_")[1]
    engine = engine_or_fail(db)
    try:
        changed = revoke_key(engine, key_id)
    except KeyCommandError as exc:
        fail(str(exc))
    finally:
        engine.dispose()
    console.print(f"key {key_id} revoked" if changed else f"key {key_id} was already revoked")


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
