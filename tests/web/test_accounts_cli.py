"""`evaluator users` and migration 0007: passwords only from stdin, the environment or a prompt (never argv),
the password policy (length, login, the commonest passwords), roles and scopes checked like keys', argon2id
hashes only; the migration up, down and up again on SQLite and a real PostgreSQL."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa
from account_fixtures import cli
from alembic import command
from service_fixtures import CLIENT_A_COMPANY, Loaded, db_url, loaded, pg_server, report_folders  # noqa: F401
from sqlalchemy.orm import Session

from evaluator.app.storage.tables import User

GOOD = "a long and unusual passphrase"


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_users_add_reads_the_password_from_stdin_or_the_environment_only(loaded: Loaded) -> None:  # noqa: F811
    url = loaded.url
    r = cli("users", "add", "kim", "--role", "analyst", "--password", GOOD, "--db", url)
    assert r.exit_code == 2 and "No such option" in r.output  # no way to put it on the command line
    r = cli("users", "add", "kim", "--role", "analyst", "--db", url, env={"EVALUATOR_PASSWORD": ""}, input="")
    assert r.exit_code != 0 and GOOD not in r.output  # no password: refused, nothing asked of a pipe
    assert cli("users", "add", "kim", "--role", "analyst", "--password-stdin", "--db", url,
               input=GOOD + "\n").exit_code == 0
    assert cli("users", "add", "lee@firm.kr", "--role", "client", "--client", "가람", "--company",
               CLIENT_A_COMPANY, "--db", url, env={"EVALUATOR_PASSWORD": GOOD + "!"}).exit_code == 0
    with Session(loaded.engine) as s:
        users = {u.login: u for u in s.scalars(sa.select(User))}
    assert set(users) == {"kim", "lee@firm.kr"}
    assert all(u.password_hash.startswith("$argon2id$") and GOOD not in u.password_hash for u in users.values())
    assert users["lee@firm.kr"].companies == [CLIENT_A_COMPANY] and users["kim"].companies == []
    listed = cli("users", "list", "--db", url).output
    assert "kim" in listed and "analyst" in listed and "argon2" not in listed
    assert cli("users", "add", "KIM", "--role", "admin", "--password-stdin", "--db", url,
               input=GOOD + "\n").exit_code == 2  # logins are case-blind: already there


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(("args", "password", "says"), [
    (("--role", "admin"), "short pass", "at least 12 characters"),
    (("--role", "admin"), "password1234", "commonest passwords"),
    (("--role", "admin"), "qwerty123456", "commonest passwords"),
    (("--role", "admin"), "Sunshine2026!", "commonest passwords"),
    (("--role", "admin"), "abcabcabcabc", "a short piece repeated"),
    (("--role", "admin"), "Park.Analyst", "must not be the login"),
    (("--role", "boss"), GOOD, "--role must be one of admin, analyst, client"),
    (("--role", "client", "--client", "x"), GOOD, "at least one --company or --fund"),
    (("--role", "client", "--client", "x", "--company", "없는운용"), GOOD, "no stored batch knows --company 없는운용"),
    (("--role", "client", "--company", CLIENT_A_COMPANY), GOOD, "--client must not be empty"),
    (("--role", "analyst", "--company", CLIENT_A_COMPANY), GOOD, "analyst accounts see every fund"),
])
def test_users_add_refuses_with_a_reason(loaded: Loaded, args: tuple[str, ...], password: str, says: str) -> None:  # noqa: F811
    r = cli("users", "add", "park.analyst", *args, "--password-stdin", "--db", loaded.url, input=password + "\n")
    assert r.exit_code == 2 and says in " ".join(r.output.split()), r.output
    assert password not in r.output or password == GOOD
    with Session(loaded.engine) as s:
        assert s.scalar(sa.select(sa.func.count()).select_from(User)) == 0


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_an_unknown_company_is_accepted_only_when_asked(loaded: Loaded) -> None:  # noqa: F811
    r = cli("users", "add", "early.client", "--role", "client", "--client", "새고객", "--company", "없는운용",
            "--allow-unknown", "--password-stdin", "--db", loaded.url, input=GOOD + "\n")
    assert r.exit_code == 0, r.output
    assert cli("users", "passwd", "nobody.here", "--db", loaded.url, env={"EVALUATOR_PASSWORD": GOOD}).exit_code == 2
    assert cli("users", "passwd", "early.client", "--db", loaded.url,
               env={"EVALUATOR_PASSWORD": "password1234"}).exit_code == 2  # the policy holds on a change too


def test_the_accounts_migration_goes_down_and_up_again(db_url: str, tmp_path: Path) -> None:  # noqa: F811
    from evaluator.app.storage.database import _alembic_config, make_engine, upgrade
    from evaluator.app.storage.users import add_user

    engine = make_engine(db_url, create_parent=True)
    try:
        upgrade(engine, "0006_grade_scale")
        with engine.begin() as conn:  # a key and its session from before accounts existed
            now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
            conn.execute(sa.text("INSERT INTO api_keys (id, client, secret_hash, admin, companies, funds, created_at) "
                                 "VALUES ('k1', 'c', 'h', false, '[]', '[]', :now)"), {"now": now})
            conn.execute(sa.text("INSERT INTO web_sessions VALUES ('t', 'k1', 'x', :now, :now)"), {"now": now})
        upgrade(engine)
        inspector = sa.inspect(engine)
        assert {"users", "audit_log"} <= set(inspector.get_table_names())
        assert {c["name"] for c in inspector.get_columns("web_sessions")} >= {"user_id", "last_seen_at"}
        add_user(engine, "after.upgrade", "admin", GOOD)
        command.downgrade(_alembic_config(engine), "0006_grade_scale")
        inspector = sa.inspect(engine)
        assert not {"users", "audit_log"} & set(inspector.get_table_names())
        assert "user_id" not in {c["name"] for c in inspector.get_columns("web_sessions")}
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT id FROM api_keys")).scalars().all() == ["k1"]  # keys kept
        upgrade(engine)
        add_user(engine, "after.upgrade", "admin", GOOD)
    finally:
        engine.dispose()
