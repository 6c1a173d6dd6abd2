"""Personal accounts on the pages, on SQLite and a real PostgreSQL: sign-in by login and password (and by an API
key in the password field), throttling per account with the looser per-address limit, sessions ended in every
worker by a password change or disabling the account, the idle timeout, and an audit row for each action with
no secret in any of them; one sign-in in real headless Chromium."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest
from account_fixtures import PASSWORDS, add_accounts, cli
from service_fixtures import CLIENT_A_COMPANY, Loaded, db_url, loaded, pg_server, report_folders  # noqa: F401
from sqlalchemy import select, update
from sqlalchemy.orm import Session
from web_fixtures import browser, live_server, page_csrf, sign_in, web_app, web_client  # noqa: F401

from evaluator.app.storage import jobs
from evaluator.app.storage.audit import events
from evaluator.app.storage.tables import AuditEvent, FundResult, WebSession

ADMIN, ANALYST, CLIENT = "boss.admin", "ana.lyst", "client.a"


def _signed_in(client: Any) -> bool:
    return client.get("/funds").status_code == 200


def _audit(loaded: Loaded) -> list[AuditEvent]:
    with Session(loaded.engine) as s:
        return list(reversed(events(s, limit=1000)))


def test_a_wrong_password_locks_only_its_account(loaded: Loaded) -> None:
    add_accounts(loaded)
    client = web_client(loaded, login_failures=3, login_address_failures=8)
    for _ in range(3):
        assert sign_in(client, "not the password at all", ADMIN).status_code == 401
    locked = sign_in(client, PASSWORDS[ADMIN], ADMIN)  # the right password, too late
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0
    assert sign_in(web_client(loaded), PASSWORDS[ANALYST], ANALYST).status_code == 303  # another account
    assert sign_in(web_client(loaded), loaded.keys["a"]).status_code == 303  # and a key, same address
    for n in range(5):  # unknown logins count per address too: the looser limit
        assert sign_in(client, "guess guess guess", f"nobody{n}").status_code == 401
    assert sign_in(client, PASSWORDS[CLIENT], CLIENT).status_code == 429  # 8 failures from this address
    failed = [e for e in _audit(loaded) if e.action == "sign-in-failed"]
    assert [e.actor for e in failed[:3]] == [ADMIN] * 3 and failed[0].address == "testclient"
    assert {e.detail["reason"] for e in failed} == {"wrong credentials", "throttled"}
    assert [e.actor for e in failed[3:]] == [ADMIN, *["(unknown)"] * 5, CLIENT]  # logins that do not exist are not written down


def test_a_password_typed_into_the_login_field_is_kept_nowhere(loaded: Loaded) -> None:
    from evaluator.app.storage.tables import RateCounter

    add_accounts(loaded)
    assert sign_in(web_client(loaded), "", PASSWORDS[CLIENT]).status_code == 401  # fields swapped by mistake
    with Session(loaded.engine) as s:
        stored = json.dumps([[r.bucket for r in s.scalars(select(RateCounter))],
                             [[e.actor, e.detail] for e in s.scalars(select(AuditEvent))]], ensure_ascii=False)
    assert "(unknown)" in stored and PASSWORDS[CLIENT].lower() not in stored.lower()


def test_login_is_case_blind_and_a_key_signs_in_with_the_login_empty(loaded: Loaded) -> None:
    add_accounts(loaded)
    client = web_client(loaded)
    assert sign_in(client, PASSWORDS[ANALYST], "Ana.Lyst").status_code == 303 and _signed_in(client)
    assert sign_in(web_client(loaded), loaded.keys["a"], ANALYST).status_code == 401  # a key is no password
    assert sign_in(web_client(loaded), PASSWORDS[ANALYST]).status_code == 401  # a password needs its login
    keyed = web_client(loaded)
    assert sign_in(keyed, loaded.keys["b"]).status_code == 303 and _signed_in(keyed)


def test_passwd_and_disable_end_sessions_in_every_worker(loaded: Loaded) -> None:
    add_accounts(loaded)
    workers = [web_client(loaded) for _ in range(2)]  # two apps on one database stand for two workers
    for w in workers:
        assert sign_in(w, PASSWORDS[ANALYST], ANALYST).status_code == 303 and _signed_in(w)
    other = web_client(loaded)
    assert sign_in(other, PASSWORDS[CLIENT], CLIENT).status_code == 303
    new = "a brand new passphrase 2026"
    r = cli("users", "passwd", ANALYST, "--db", loaded.url, env={"EVALUATOR_PASSWORD": new})
    assert r.exit_code == 0 and "2 session(s) ended" in r.output, r.output
    for w in workers:
        page = w.get("/funds")
        assert page.status_code == 303 and page.headers["location"].startswith("/login")
    assert _signed_in(other)  # another account's session is untouched
    assert sign_in(web_client(loaded), PASSWORDS[ANALYST], ANALYST).status_code == 401
    fresh = web_client(loaded)
    assert sign_in(fresh, new, ANALYST).status_code == 303 and _signed_in(fresh)
    r = cli("users", "disable", ANALYST, "--db", loaded.url)
    assert r.exit_code == 0 and "1 session(s) ended" in r.output, r.output
    assert not _signed_in(fresh) and sign_in(web_client(loaded), new, ANALYST).status_code == 401
    with Session(loaded.engine) as s:  # the rows are gone, not just refused
        assert s.scalar(select(WebSession).where(WebSession.user_id.is_not(None),
                                                 WebSession.user_id != _user_id(s, CLIENT))) is None


def _user_id(session: Session, login: str) -> int:
    from evaluator.app.storage.tables import User

    return int(session.scalar(select(User.id).where(User.login == login)))


def test_idle_and_absolute_timeouts(loaded: Loaded) -> None:
    add_accounts(loaded)
    client = web_client(loaded, session_idle_minutes=30)
    assert sign_in(client, PASSWORDS[CLIENT], CLIENT).status_code == 303 and _signed_in(client)
    now = dt.datetime.now(dt.timezone.utc)
    with Session(loaded.engine) as s, s.begin():
        s.execute(update(WebSession).values(last_seen_at=now - dt.timedelta(minutes=29)))
    assert _signed_in(client)  # used 29 minutes ago: still on, and the use is written down
    with Session(loaded.engine) as s:
        seen = s.scalar(select(WebSession.last_seen_at))
        assert (seen if seen.tzinfo else seen.replace(tzinfo=dt.timezone.utc)) >= now
    with Session(loaded.engine) as s, s.begin():
        s.execute(update(WebSession).values(last_seen_at=now - dt.timedelta(minutes=31)))
    assert not _signed_in(client)
    assert sign_in(client, PASSWORDS[CLIENT], CLIENT).status_code == 303 and _signed_in(client)
    with Session(loaded.engine) as s, s.begin():
        s.execute(update(WebSession).values(expires_at=now - dt.timedelta(seconds=1), last_seen_at=now))
    assert not _signed_in(client)


def _wait_job(loaded: Loaded, job_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with Session(loaded.engine) as s:
            doc = jobs.get_job(s, job_id)
        if doc and doc["state"] in ("done", "failed"):
            return doc
        time.sleep(0.2)
    raise AssertionError("the job did not end")


def test_every_action_leaves_an_audit_row_and_none_holds_a_secret(loaded: Loaded) -> None:
    from evaluator.app.storage.apikeys import revoke_key

    add_accounts(loaded)
    client = web_client(loaded)
    assert sign_in(client, "wrong password, long enough", ANALYST).status_code == 401
    assert sign_in(client, PASSWORDS[ANALYST], ANALYST).status_code == 303
    form = client.get("/uploads")
    sent = client.post("/uploads", data={"csrf": page_csrf(form.text), "as_of": "2025-06-30"},
                       files={"data": ("nav.csv", "날짜,펀드\n2025-06-30,x\n".encode(), "text/csv")})
    assert sent.status_code == 303, sent.text
    job_id = int(sent.headers["location"].rsplit("/", 1)[1])
    _wait_job(loaded, job_id)
    assert client.get("/export/funds.xlsx", params={"status": "ok"}).status_code == 200
    with Session(loaded.engine) as s:
        code = s.scalar(select(FundResult.fund_code).where(FundResult.status == "ok"))
    assert client.get(f"/export/funds/{code}.pdf").status_code == 200
    assert client.post("/logout", data={"csrf": page_csrf(client.get("/funds").text)}).status_code == 303
    keyed = web_client(loaded)
    assert sign_in(keyed, loaded.keys["a"][:-2] + "xx").status_code == 401
    r = cli("keys", "create", "--client", "새고객", "--company", CLIENT_A_COMPANY, "--db", loaded.url)
    new_key = r.output.strip().splitlines()[-1]
    revoke_key(loaded.engine, new_key.split("_")[1])
    cli("users", "add", "new.one", "--role", "analyst", "--password-stdin", "--db", loaded.url,
            input="a fresh passphrase here\n")
    cli("users", "passwd", "new.one", "--db", loaded.url, env={"EVALUATOR_PASSWORD": "changed passphrase here"})
    cli("users", "disable", "new.one", "--db", loaded.url)
    rows = _audit(loaded)
    seen = [("cli" if e.actor.startswith("cli:") else e.actor, e.action) for e in rows]  # cli:<OS user>
    key_a = f"key:{loaded.key_ids['a']}"
    for pair in [("cli", "user.add"), (ANALYST, "sign-in-failed"), (ANALYST, "sign-in"), (ANALYST, "upload"),
                 (ANALYST, "export"), (ANALYST, "sign-out"), (key_a, "sign-in-failed"), ("cli", "key.create"), ("cli", "key.revoke"),
                 ("cli", "user.passwd"), ("cli", "user.disable")]:
        assert pair in seen, pair
    upload = next(e for e in rows if e.action == "upload")
    assert upload.detail["job_id"] == job_id and upload.detail["files"]["data"]["name"] == "nav.csv"
    assert next(e for e in rows if e.action == "sign-in").address == "testclient"
    exports = [e.detail for e in rows if e.action == "export"]
    assert [d["file"] for d in exports] == ["funds.xlsx", "fund.pdf"]
    assert exports[0]["status"] == "ok" and exports[0]["funds"] > 0 and exports[1]["fund_code"] == code
    text = json.dumps([[e.actor, e.action, e.address, e.detail] for e in rows], ensure_ascii=False)
    secrets = [*PASSWORDS.values(), "wrong password, long enough", "a fresh passphrase here",
               "changed passphrase here", new_key, new_key.split("_", 2)[2], *loaded.keys.values(),
               *(k.split("_", 2)[2] for k in loaded.keys.values()), "argon2"]  # ev_<id>_<secret>: "_" may be in it
    assert all(secrets), "an empty secret would be found in any text"
    assert not [s for s in secrets if s in text]


def test_record_drops_secret_fields_and_redacts_key_shapes(loaded: Loaded) -> None:
    from evaluator.app.storage.audit import record

    key = loaded.keys["admin"]
    with Session(loaded.engine) as s:
        record(s, key, "export", {"password": "hunter2hunter2", "note": f"sent {key} by mail", "csrf": "t",
                                  "nested": {"api_key": key, "rows": 3}})
        row = events(s, action="export")[0]
    assert row.actor == "ev_[redacted]" and row.detail == {"note": "sent ev_[redacted] by mail", "nested": {"rows": 3}}


def test_the_audit_page_and_command_filter_by_user_action_and_day(loaded: Loaded) -> None:
    add_accounts(loaded)
    admin, analyst = web_client(loaded), web_client(loaded)
    assert sign_in(analyst, PASSWORDS[ANALYST], ANALYST).status_code == 303
    assert sign_in(admin, PASSWORDS[ADMIN], ADMIN).status_code == 303
    assert analyst.get("/audit").status_code == 404
    old = dt.datetime(2025, 1, 15, 9, 0, tzinfo=dt.timezone.utc)
    with Session(loaded.engine) as s, s.begin():
        s.add(AuditEvent(at=old, actor=CLIENT, action="export", address="10.0.0.9", detail={"funds": 3}))
    page = admin.get("/audit", params={"user": ANALYST, "action": "sign-in"}).text
    assert page.count('class="event"') == 1 and ANALYST in page
    only_old = admin.get("/audit", params={"since": "2025-01-15", "until": "2025-01-15"}).text
    assert only_old.count('class="event"') == 1 and "10.0.0.9" in only_old
    assert admin.get("/audit", params={"since": "15/01/2025"}).status_code == 422
    listed = cli("audit", "--db", loaded.url, "--json", "--until", "2025-01-31")
    assert [json.loads(line)["actor"] for line in listed.output.strip().splitlines()] == [CLIENT]
    listed = cli("audit", "--db", loaded.url, "--json", "--user", ADMIN, "--action", "sign-in")
    assert len(listed.output.strip().splitlines()) == 1
    assert cli("audit", "--db", loaded.url, "--action", "nonsense").exit_code == 2


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_sign_in_with_login_and_password_in_chromium(loaded: Loaded, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    add_accounts(loaded)
    with live_server(web_app(loaded)) as base:
        browser.delete_all_cookies()
        browser.get(f"{base}/login")
        browser.find_element(By.NAME, "login").send_keys(CLIENT)
        field = browser.find_element(By.NAME, "password")
        assert field.get_attribute("type") == "password" and field.get_attribute("autocomplete") == "current-password"
        field.send_keys(PASSWORDS[CLIENT])
        field.submit()
        WebDriverWait(browser, 60).until(lambda d: d.current_url.rstrip("/") == base)
        assert CLIENT in browser.find_element(By.CSS_SELECTOR, ".who .client").text
        browser.get(f"{base}/funds")
        assert CLIENT_A_COMPANY in browser.page_source
        cookie = browser.get_cookie("evaluator_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
        browser.find_element(By.CSS_SELECTOR, ".who form button").click()
        WebDriverWait(browser, 60).until(lambda d: "/login" in d.current_url)
        browser.get(f"{base}/funds")
        assert "/login" in browser.current_url
