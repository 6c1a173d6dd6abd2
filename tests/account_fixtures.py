"""Personal accounts for the web tests: an admin, an analyst and a client of client A's company, with
passwords that pass the policy, added through the same storage calls as `evaluator users add`."""

from __future__ import annotations

from service_fixtures import CLIENT_A_COMPANY, Loaded

PASSWORDS = {
    "boss.admin": "관리자-비밀번호-2026-봄",
    "ana.lyst": "analyst passphrase nine",
    "client.a": "client a sees its own funds",
}
ROLES = {"boss.admin": "admin", "ana.lyst": "analyst", "client.a": "client"}


def add_accounts(loaded: Loaded) -> dict[str, int]:
    """Add the three accounts; returns login → user id."""
    from evaluator.app.storage.users import add_user

    ids = {}
    for login, role in ROLES.items():
        scope = {"client": "client-a", "companies": [CLIENT_A_COMPANY]} if role == "client" else {}
        ids[login] = add_user(loaded.engine, login, role, PASSWORDS[login], **scope)
    return ids


def cli(*args: str, env: dict[str, str] | None = None, input: str | None = None):  # type: ignore[no-untyped-def]
    """The ``evaluator`` CLI in-process with environment variables and stdin (for passwords)."""
    from typer.testing import CliRunner

    from evaluator.app.cli import app

    return CliRunner().invoke(app, list(args), env=env, input=input, catch_exceptions=False)
