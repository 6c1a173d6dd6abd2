"""`evaluator users` — personal accounts for people (keys are for machines): add, list, passwd, disable.

A password is read from ``EVALUATOR_PASSWORD``, from stdin (``--password-stdin``, one line) or from a hidden
prompt with confirmation — never from the command line, where ``ps`` and shell history would keep it.
"""

from __future__ import annotations

import os
import sys

import typer

from evaluator.app.commands.db import DB_HELP, engine_or_fail
from evaluator.core.console import console, fail

ENV_PASSWORD = "EVALUATOR_PASSWORD"
users_app = typer.Typer(name="users", help="Personal accounts: admin, analyst or client (scoped like a client key).",
                        no_args_is_help=True)
STDIN_HELP = "Read the password from the first line of stdin (else EVALUATOR_PASSWORD, else a hidden prompt)."


def read_password(from_stdin: bool) -> str:
    """The new password: stdin, the environment, or a prompt typed twice."""
    if from_stdin:
        line = sys.stdin.readline()
        password = line[:-1] if line.endswith("\n") else line
        if not password:
            fail("--password-stdin: stdin held no password")
        return password.rstrip("\r")
    env = os.environ.get(ENV_PASSWORD)
    if env:
        return env
    if not sys.stdin.isatty():
        fail(f"no password: set {ENV_PASSWORD}, pass --password-stdin, or run in a terminal to be prompted")
    return typer.prompt("password", hide_input=True, confirmation_prompt=True)


@users_app.command("add")
def add_cmd(
    login: str = typer.Argument(..., help="The login (a–z, 0–9, '.', '@', '-'; stored in lower case)."),
    role: str = typer.Option(..., "--role", help="admin (everything), analyst (every fund, uploads, runs) or client."),
    client: str = typer.Option("", "--client", help="Client firm (위탁사) of a client account."),
    company: list[str] = typer.Option([], "--company", help="운용사 a client account may see (repeatable)."),
    fund: list[str] = typer.Option([], "--fund", help="Fund code a client account may see (repeatable)."),
    allow_unknown: bool = typer.Option(
        False, "--allow-unknown", help="Accept a --company/--fund no stored batch knows yet (default: refused)."
    ),
    password_stdin: bool = typer.Option(False, "--password-stdin", help=STDIN_HELP),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Add an account; the password is stored only as an argon2id hash."""
    from evaluator.app.storage.apikeys import KeyCommandError
    from evaluator.app.storage.users import ROLES, add_user

    if role not in ROLES:
        fail(f"--role must be one of {', '.join(ROLES)}")
    if role != "client" and (client or company or fund):
        fail(f"{role} accounts see every fund; --client/--company/--fund are for client accounts")
    password = read_password(password_stdin)
    engine = engine_or_fail(db)
    try:
        add_user(engine, login, role, password, client=client, companies=company, funds=fund,
                 allow_unknown=allow_unknown)
    except KeyCommandError as exc:  # the account's own checks, and the scope checks shared with keys
        fail(str(exc))
    finally:
        engine.dispose()
    scope = "all funds" if role != "client" else f"{client}: " + ", ".join([*company, *fund])
    console.print(f"user {login.strip().lower()} added as {role} ({scope})", markup=False)


@users_app.command("list")
def list_cmd(db: str | None = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Every account's login, role, scope and state (never a password or hash)."""
    from rich.markup import escape
    from rich.table import Table

    from evaluator.app.storage.users import list_users, user_state

    engine = engine_or_fail(db)
    users = list_users(engine)
    engine.dispose()
    table = Table(title=f"{len(users)} user(s)")
    for col in ("login", "role", "client", "scope", "created", "password set", "state"):
        table.add_column(col)
    for u in users:
        scope = "all funds" if u.role != "client" else ", ".join([*u.companies, *u.funds])
        cells = (u.login, u.role, u.client or "-", scope, u.created_at.strftime("%Y-%m-%d"),
                 u.password_changed_at.strftime("%Y-%m-%d"), user_state(u))
        table.add_row(*(escape(c) for c in cells))
    console.print(table)


@users_app.command("passwd")
def passwd_cmd(
    login: str = typer.Argument(..., help="The account's login."),
    password_stdin: bool = typer.Option(False, "--password-stdin", help=STDIN_HELP),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Set a new password; the account's browser sessions end in every server worker."""
    from evaluator.app.storage.users import UserCommandError, set_password

    password = read_password(password_stdin)
    engine = engine_or_fail(db)
    try:
        ended = set_password(engine, login, password)
    except UserCommandError as exc:
        fail(str(exc))
    finally:
        engine.dispose()
    console.print(f"password of {login.strip().lower()} changed; {ended} session(s) ended", markup=False)


@users_app.command("disable")
def disable_cmd(
    login: str = typer.Argument(..., help="The account's login."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Disable an account: it signs in no more and its sessions end at once (the row stays for the audit log)."""
    from evaluator.app.storage.users import UserCommandError, disable_user

    engine = engine_or_fail(db)
    try:
        ended = disable_user(engine, login)
    except UserCommandError as exc:
        fail(str(exc))
    finally:
        engine.dispose()
    name = login.strip().lower()
    console.print(f"{name} was already disabled" if ended is None else f"{name} disabled; {ended} session(s) ended",
                  markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")
