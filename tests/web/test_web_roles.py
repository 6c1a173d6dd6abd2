"""Every role's reach on every page and API route, as one table: caller × route → expected status.

Callers: anonymous, personal accounts (admin, analyst, client of client A's company) signed in with login and
password, and API keys (client A's, an admin key) signed in on the pages and sent as bearer tokens to the API.
The API takes bearer keys only, so a browser session (accounts) gets 401 there. A test also checks that the
table names every route the API publishes, so a new route cannot go without its row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from account_fixtures import PASSWORDS, add_accounts
from service_fixtures import (  # noqa: F401
    CLIENT_A_COMPANY,
    CLIENT_B_COMPANY,
    Loaded,
    db_url,
    loaded,
    report_folders,
)
from sqlalchemy import select
from sqlalchemy.orm import Session
from web_fixtures import sign_in, web_app

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
CALLERS = ("anon", "admin", "analyst", "client", "key", "admin_key")
STAFF = ("admin", "analyst", "admin_key")
LOGINS = {"admin": "boss.admin", "analyst": "ana.lyst", "client": "client.a"}


def _row(anon: int, admin: int, analyst: int, client: int, key: int, admin_key: int) -> dict[str, int]:
    return dict(zip(CALLERS, (anon, admin, analyst, client, key, admin_key), strict=True))


def _page(signed: int, staff: int | None = None, manager: int | None = None, other: int | None = None) -> dict[str, int]:
    """A page: 303 to /login when anonymous; ``staff``/``manager`` pages answer 404 to those below."""
    own = {c: signed for c in CALLERS[1:]}
    if staff is not None:
        own = {c: (staff if c in STAFF else 404) for c in CALLERS[1:]}
    if manager is not None:
        own = {c: (manager if c in ("admin", "admin_key") else 404) for c in CALLERS[1:]}
    if other is not None:  # another client's fund: absent for client A's account and key
        own = {c: (404 if c in ("client", "key") else other) for c in CALLERS[1:]}
    return {"anon": 303, **own}


def _api(key: int, admin_key: int | None = None) -> dict[str, int]:
    """An API route: bearer keys only (a browser session is no credential there)."""
    return _row(401, 401, 401, 401, key, key if admin_key is None else admin_key)


def _table(code_a: str, code_b: str, job: int) -> list[tuple[str, str, dict[str, int]]]:
    everyone = dict.fromkeys(CALLERS, 200)
    return [
        ("GET", "/", _page(200)),
        ("GET", "/funds", _page(200)),
        ("GET", f"/funds?q={code_a}", _page(200)),
        ("GET", f"/funds/{code_a}", _page(200)),
        ("GET", f"/funds/{code_b}", _page(200, other=200)),
        ("GET", "/companies", _page(200)),  # no ratings stored: a page saying so
        ("GET", f"/companies/{CLIENT_A_COMPANY}", _page(404)),  # no rating stored for it
        ("GET", "/export/funds.xlsx", _page(200)),
        ("GET", f"/export/funds/{code_a}.pdf", _page(200)),
        ("GET", f"/export/funds/{code_b}.pdf", _page(200, other=200)),
        ("GET", "/uploads", _page(200, staff=200)),
        ("POST", "/uploads", _page(403, staff=403)),  # staff: no CSRF token in the form
        ("GET", f"/jobs/{job}", _page(200, staff=200)),
        ("GET", "/runs", _page(200, staff=200)),
        ("GET", "/audit", _page(200, manager=200)),
        ("GET", "/audit?action=sign-in", _page(200, manager=200)),
        ("GET", "/no-such-page", dict.fromkeys(CALLERS, 404)),
        ("GET", "/login", {"anon": 200, **{c: 303 for c in CALLERS[1:]}}),  # signed in: on to the page
        ("POST", "/login", dict.fromkeys(CALLERS, 403)),  # without the sign-in form's CSRF token
        ("POST", "/logout", _page(403)),  # without the session's CSRF token
        ("GET", "/docs", everyone),
        ("GET", "/openapi.json", everyone),
        ("GET", "/healthz", everyone),
        ("GET", "/api/v1/funds", _api(200)),
        ("GET", f"/api/v1/funds/{code_a}", _api(200)),
        ("GET", f"/api/v1/funds/{code_b}", _api(404, 200)),
        ("GET", f"/api/v1/funds/{code_a}/history", _api(200)),
        ("GET", f"/api/v1/funds/{code_a}/nav", _api(200)),
        ("GET", f"/api/v1/funds/{code_b}/nav", _api(404, 200)),
        ("GET", "/api/v1/summary", _api(200)),
        ("GET", "/api/v1/runs", _api(200)),
        ("GET", "/api/v1/companies", _api(200)),
        ("GET", f"/api/v1/companies/{CLIENT_B_COMPANY}", _api(404)),  # no company ratings stored
        ("POST", "/api/v1/evaluations", _api(422)),  # no file sent: refused before the role is looked at
        ("GET", f"/api/v1/jobs/{job}", _api(404, 200)),
    ]


def _fund(loaded: Loaded, company: str) -> str:
    from evaluator.app.storage.tables import FundResult

    with Session(loaded.engine) as s:
        return s.scalar(select(FundResult.fund_code).where(FundResult.company == company, FundResult.is_current,
                                                           FundResult.status == "ok").order_by(FundResult.fund_code))


@pytest.fixture
def world(loaded: Loaded, tmp_path: Path) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from evaluator.app.storage import jobs
    from evaluator.app.web.extensions import Extensions
    from evaluator.app.web.run_pages import runs_page_set

    add_accounts(loaded)
    (tmp_path / "runs").mkdir()
    from evaluator.app.web.company_pages import stored_company_ratings

    app = web_app(loaded, extensions=Extensions(page_sets=[runs_page_set([tmp_path / "runs"])],
                                                company_ratings=stored_company_ratings))
    job = jobs.create_job(loaded.engine, loaded.key_ids["admin"], "evaluate", {"as_of": None, "files": {}})
    clients: dict[str, Any] = {}
    for caller in CALLERS:
        client = TestClient(app, raise_server_exceptions=False, follow_redirects=False)
        if caller in LOGINS:
            assert sign_in(client, PASSWORDS[LOGINS[caller]], LOGINS[caller]).status_code == 303, caller
        elif caller in ("key", "admin_key"):
            key = loaded.keys["a" if caller == "key" else "admin"]
            assert sign_in(client, key).status_code == 303, caller
            client.headers["Authorization"] = f"Bearer {key}"
        clients[caller] = client
    return {"app": app, "clients": clients, "table": _table(_fund(loaded, CLIENT_A_COMPANY),
                                                             _fund(loaded, CLIENT_B_COMPANY), job)}


def test_every_caller_on_every_route(world: dict[str, Any]) -> None:
    wrong = []
    for method, path, expected in world["table"]:
        for caller, status in expected.items():
            got = world["clients"][caller].request(method, path).status_code
            if got != status:
                wrong.append(f"{caller} {method} {path}: {got}, expected {status}")
    assert not wrong, "\n".join(wrong)
    assert len(world["table"]) * len(CALLERS) >= 210  # the size of the table, as reported


def test_the_table_names_every_api_route(world: dict[str, Any]) -> None:
    import re

    published = set(world["app"].openapi()["paths"])
    named = {path.split("?")[0] for _m, path, _e in world["table"]}
    shapes = {re.sub(r"\{[^}]+\}", "{}", p) for p in published}
    covered = set()
    for shape in shapes:
        pattern = "^" + re.escape(shape).replace(r"\{\}", "[^/]+") + "$"
        if any(re.match(pattern, n) for n in named):
            covered.add(shape)
    assert covered == shapes, shapes - covered


def test_the_table_names_every_page_route(world: dict[str, Any]) -> None:
    """Every route of the pages' own routers (the run viewer's page set has its own tests) has a row."""
    import re

    from evaluator.app.web import (
        audit_page,
        auth,
        company_pages,
        exports,
        fund_list,
        fund_page,
        pages,
        uploads,
    )

    routers = (audit_page, auth, company_pages, exports, fund_list, fund_page, pages, uploads)
    declared = {(m, r.path) for mod in routers for r in mod.router.routes for m in r.methods - {"HEAD"}}
    named = {(m, path.split("?")[0]) for m, path, _e in world["table"]}
    missing = []
    for method, path in declared:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"
        if not any(m == method and re.match(pattern, n) for m, n in named):
            missing.append(f"{method} {path}")
    assert not missing, missing


def test_an_analyst_uploads_but_cannot_read_the_audit_log_and_a_client_account_sees_its_scope(
        world: dict[str, Any]) -> None:
    analyst, client = world["clients"]["analyst"], world["clients"]["client"]
    assert 'href="/audit"' not in analyst.get("/").text and 'href="/uploads"' in analyst.get("/").text
    assert 'href="/audit"' in world["clients"]["admin"].get("/").text
    funds = client.get("/funds").text
    assert CLIENT_A_COMPANY in funds and CLIENT_B_COMPANY not in funds
