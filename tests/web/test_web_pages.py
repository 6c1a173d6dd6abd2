"""The pages on the loaded database (SQLite and a real PostgreSQL server): sign-in and sessions, CSRF,
the failed-sign-in limit, and that each page shows a client exactly its API scope and nothing else.

Expected funds and counts come from the report files on disk, independently of the storage code.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
from pathlib import Path

from service_fixtures import (  # noqa: F401
    AS_OF_LATE,
    CLIENT_A_COMPANY,
    CLIENT_B_COMPANY,
    Loaded,
    db_url,
    loaded,
    pg_server,
    report_folders,
    reports_in,
)
from sqlalchemy import update
from sqlalchemy.orm import Session
from web_fixtures import page_csrf, sign_in, web_client

from evaluator.app.storage.apikeys import revoke_key
from evaluator.app.storage.tables import WebSession
from evaluator.app.web.extensions import Extensions

PAGES = ("/", "/funds", "/funds?q=x&type=&grade=&company=&status=", "/uploads", "/jobs/1", "/funds/KR0000000000",
         "/companies", "/companies/x/y", "/export/funds.xlsx", "/export/funds/KR0000000000.pdf")


def _mine(docs: list[dict], who: str, loaded: Loaded) -> list[dict]:
    if who == "admin":
        return docs
    if who == "a":
        return [d for d in docs if d["company"] == CLIENT_A_COMPANY]
    return [d for d in docs if d["company"] == CLIENT_B_COMPANY or d["fund_code"] == loaded.b_extra_fund]


def test_sign_in_sets_a_safe_cookie_and_every_page_needs_it(loaded: Loaded, caplog) -> None:
    client = web_client(loaded)
    form = client.get("/login")
    assert form.status_code == 200
    assert form.text.count("<input") == 4 and 'type="password"' in form.text and 'name="password"' in form.text
    for path in PAGES:
        r = client.get(path)
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next="), path
    assert client.get("/healthz").status_code == 200
    key = loaded.keys["a"]
    with caplog.at_level(logging.INFO):
        wrong = client.post("/login", data={"key": key[:-3] + "abc", "csrf": page_csrf(form.text)})
        ok = sign_in(client, key)
    assert wrong.status_code == 401 and key[:-3] not in wrong.text
    assert ok.status_code == 303 and ok.headers["location"] == "/"
    cookie = next(c for c in ok.headers.get_list("set-cookie") if c.startswith("evaluator_session="))
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower() and "expires=" in cookie.lower()
    assert "Secure" not in cookie  # plain http
    assert key not in caplog.text and key.split("_", 2)[2] not in caplog.text
    page = client.get("/")
    assert page.status_code == 200 and "client-a" in page.text
    assert key not in page.text and key.split("_", 2)[2] not in page.text
    # over HTTPS the cookie is Secure
    secure = sign_in(web_client(loaded, base_url="https://testserver"), key)
    assert any("Secure" in c for c in secure.headers.get_list("set-cookie") if c.startswith("evaluator_session="))


def test_logout_revocation_and_expiry_end_the_session(loaded: Loaded) -> None:
    client = web_client(loaded)
    sign_in(client, loaded.keys["a"])
    page = client.get("/")
    assert client.post("/logout", data={"csrf": "wrong"}).status_code == 403  # CSRF checked
    assert client.get("/").status_code == 200
    assert client.post("/logout", data={"csrf": page_csrf(page.text)}).status_code == 303
    assert client.get("/").status_code == 303
    # a session whose key is revoked ends at once
    sign_in(client, loaded.keys["b"])
    assert client.get("/").status_code == 200
    revoke_key(loaded.engine, loaded.key_ids["b"])
    assert client.get("/").status_code == 303
    # an expired session row is refused
    sign_in(client, loaded.keys["admin"])
    assert client.get("/").status_code == 200
    upload = client.post("/uploads", data={"csrf": "forged"}, files={"data": ("n.csv", b"a,b\n")})
    assert upload.status_code == 403 and "/jobs/" not in upload.headers.get("location", "")
    assert "#1" not in client.get("/uploads").text  # no job was started
    with Session(loaded.engine) as s, s.begin():
        s.execute(update(WebSession).values(expires_at=dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)))
    assert client.get("/").status_code == 303


def _wrong(key: str) -> str:
    """The same account (key id) with a wrong secret."""
    return key[: len("ev_") + 12 + 1] + "A" * 43


def test_failed_sign_ins_lock_the_account_not_the_firm(loaded: Loaded) -> None:
    client = web_client(loaded, login_failures=3, login_address_failures=5)
    for _ in range(3):
        assert sign_in(client, _wrong(loaded.keys["a"])).status_code == 401
    blocked = sign_in(client, loaded.keys["a"])  # the guessed account waits, even with its right key
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0
    assert sign_in(client, loaded.keys["b"]).status_code == 303  # another account from the same address
    client.cookies.clear()
    assert sign_in(client, _wrong(loaded.keys["b"])).status_code == 401
    assert sign_in(client, "not a key").status_code == 401  # 5th failure from this address
    assert sign_in(client, loaded.keys["admin"]).status_code == 429  # the looser address limit
    # a login form without its token is refused (no login CSRF)
    other = web_client(loaded)
    assert other.post("/login", data={"key": loaded.keys["a"], "csrf": "x"}).status_code == 403


def test_each_page_shows_exactly_the_scope(loaded: Loaded, report_folders: dict[str, Path]) -> None:
    late = reports_in(report_folders[AS_OF_LATE])
    for who in ("a", "b", "admin"):
        client = web_client(loaded)
        sign_in(client, loaded.keys[who])
        mine = _mine(late, who, loaded)
        others = [d for d in late if d not in mine]
        rated = [d for d in mine if d["status"] == "ok"]
        listing = html.unescape(client.get("/funds").text)
        assert f"펀드 {len(mine)}개" in listing  # every fund in scope, rated or not
        assert f"평가된 펀드 {len(rated)}개" in html.unescape(client.get("/funds", params={"status": "ok"}).text)
        overview = html.unescape(client.get("/").text)
        for d in others:
            assert d["fund_code"] not in listing and d["fund_code"] not in overview, (who, d["fund_code"])
        for d in mine if who != "admin" else rated:  # the admin's list runs to a second page
            assert d["fund_code"] in listing
        total = sum(1 for _ in mine)
        assert f'<td class="n">{total}</td>' in overview  # the runs table counts only visible funds
        own = next(d for d in rated)
        page = client.get(f"/funds/{own['fund_code']}")
        assert page.status_code == 200 and html.escape(own["fund_name"]) in page.text
        assert f"{own['grade']}등급" in page.text
        for d in others[:5]:
            denied = client.get(f"/funds/{d['fund_code']}")
            unknown = client.get("/funds/KR0000000000")
            assert denied.status_code == unknown.status_code == 404
            assert denied.text == unknown.text  # absent, and the page names nothing
            assert d["fund_name"] not in denied.text
        if who != "admin":
            assert client.get("/uploads").status_code == 404 and client.get("/jobs/1").status_code == 404
            other_company = CLIENT_B_COMPANY if who == "a" else CLIENT_A_COMPANY
            body = html.unescape(client.get("/funds", params={"company": other_company}).text)
            assert "펀드 0개" in body
        companies = client.get("/companies")  # no 운용사 ratings stored: the page says so
        assert companies.status_code == 200 and "볼 수 있는 운용사 평가가 없습니다" in companies.text


def test_search_filters_and_paging_match_a_hand_filter(loaded: Loaded, report_folders: dict[str, Path]) -> None:
    late = reports_in(report_folders[AS_OF_LATE])  # rated or not: the list holds every fund
    client = web_client(loaded)
    sign_in(client, loaded.keys["admin"])
    word = late[0]["fund_name"].split()[1]
    expected = {d["fund_code"] for d in late if word.lower() in d["fund_name"].lower()}
    body = html.unescape(client.get("/funds", params={"q": word}).text)
    assert f"펀드 {len(expected)}개" in body
    assert {d["fund_code"] for d in late if d["fund_code"] in body} == expected
    graded = [d for d in late if d["grade"] == 1 and d["status"] == "ok"]
    assert f"펀드 {len(graded)}개" in html.unescape(client.get("/funds", params={"grade": "1"}).text)
    assert client.get("/funds", params={"grade": "9"}).status_code == 422
    assert client.get("/funds", params={"q": "\x00"}).status_code == 422
    assert client.get("/funds", params={"page": "0"}).status_code == 422


def test_companies_page_follows_the_extension_hook(loaded: Loaded) -> None:
    """The served app provides the stored ratings; an app built without the hook has no 운용사 pages or link."""
    from fastapi.testclient import TestClient
    from web_fixtures import settings

    from evaluator.app.web.app import create_web_app

    def ratings(_session, principal):  # type: ignore[no-untyped-def]
        rows = [{"company": CLIENT_A_COMPANY, "grade": 2, "grade_label": "2등급", "funds_rated": 3, "score": 61.0,
                 "as_of": AS_OF_LATE, "run_id": None},
                {"company": CLIENT_B_COMPANY, "grade": 4, "grade_label": "4등급", "funds_rated": 5, "score": 40.0,
                 "as_of": AS_OF_LATE, "run_id": None}]
        return rows if principal.admin else [r for r in rows if r["company"] in principal.companies]

    app = create_web_app(engine=loaded.engine, settings=settings(), extensions=Extensions(company_ratings=ratings))
    client = TestClient(app, follow_redirects=False)
    sign_in(client, loaded.keys["a"])
    assert 'href="/companies"' in client.get("/").text
    page = client.get("/companies").text
    assert CLIENT_A_COMPANY in page and CLIENT_B_COMPANY not in page and "2등급" in page
    served = web_client(loaded)  # what `evaluator serve` builds: the stored ratings
    sign_in(served, loaded.keys["a"])
    assert 'href="/companies"' in served.get("/").text
    bare = TestClient(create_web_app(engine=loaded.engine, settings=settings(), extensions=Extensions()),
                      follow_redirects=False)
    sign_in(bare, loaded.keys["a"])
    assert 'href="/companies"' not in bare.get("/").text
    assert bare.get("/companies").status_code == bare.get(f"/companies/{CLIENT_A_COMPANY}").status_code == 404
