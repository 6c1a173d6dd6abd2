"""운용사 ratings in the database and the API: stored per batch, current per company, and tenant isolation
(a key scoped to companies sees only those; a key scoped to funds only sees none; an admin sees all).

Runs against SQLite and a real PostgreSQL server; expected values come from companies.json on disk.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from conftest import run_cli
from service_fixtures import (  # noqa: F401
    AS_OF_EARLY,
    AS_OF_LATE,
    CLIENT_A_COMPANY,
    CLIENT_B_COMPANY,
    Loaded,
    auth,
    client_for,
    db_url,
    loaded,
    pg_server,
    report_folders,
    reports_in,
)
from sqlalchemy import select
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import create_key
from evaluator.app.storage.tables import CompanyRating, FundResult


def _rate(loaded: Loaded, folder: Path, out: Path) -> dict:
    result = run_cli("fund", "companies", str(folder), "--out", str(out), "--db", loaded.url)
    assert result.exit_code == 0, result.output
    return json.loads((out / "companies.json").read_text(encoding="utf-8"))


def test_company_endpoints_are_isolated_per_tenant(
    loaded: Loaded, report_folders: dict[str, Path], tmp_path: Path
) -> None:
    early = _rate(loaded, report_folders[AS_OF_EARLY], tmp_path / "early")
    late = _rate(loaded, report_folders[AS_OF_LATE], tmp_path / "late")
    again = run_cli(
        "fund",
        "companies",
        str(report_folders[AS_OF_LATE]),
        "--out",
        str(tmp_path / "again"),
        "--db",
        loaded.url,
    )
    assert again.exit_code == 0  # the same batch re-rated replaces its ratings, never duplicates them
    _, funds_only = create_key(loaded.engine, client="funds-only", companies=[], funds=[loaded.b_extra_fund],
                               admin=False, expires_on=None)  # fmt: skip
    keys = {**loaded.keys, "funds": funds_only}
    client = client_for(loaded)
    everyone = {c["company"]: c for c in late["companies"]}
    scope = {"admin": set(everyone), "a": {CLIENT_A_COMPANY}, "b": {CLIENT_B_COMPANY}, "funds": set()}
    for who, sees in scope.items():
        body = client.get("/api/v1/companies", headers=auth(keys[who]))
        assert body.status_code == 200
        items = body.json()["items"]
        assert {i["company"] for i in items} == sees and all(i["as_of"] == AS_OF_LATE for i in items)
        for i in items:
            want = everyone[i["company"]]
            assert (i["grade"], i["score"], i["funds_rated"], i["aum_krw"]) == (
                want["grade"], want["score"], want["funds_rated"], want["aum_krw"]
            )  # fmt: skip
        for name in everyone:
            r = client.get(f"/api/v1/companies/{name}", headers=auth(keys[who]))
            if name in sees:
                assert r.status_code == 200 and r.json() == {"as_of": AS_OF_LATE, **everyone[name]}
            else:
                assert r.status_code == 404 and r.json()["error"] == "not_found"
    # an older date on request; an unknown company and no key
    old = client.get("/api/v1/companies", headers=auth(keys["admin"]), params={"as_of": AS_OF_EARLY}).json()[
        "items"
    ]
    assert {i["company"]: i["score"] for i in old} == {c["company"]: c["score"] for c in early["companies"]}
    assert client.get("/api/v1/companies/없는운용", headers=auth(keys["admin"])).status_code == 404
    assert client.get("/api/v1/companies").status_code == 401
    with Session(loaded.engine) as s:
        rows = s.execute(select(CompanyRating.company, CompanyRating.is_current, CompanyRating.as_of)).all()
        amounts = dict(s.execute(select(FundResult.fund_code, FundResult.set_amount_krw)
                                 .where(FundResult.as_of == dt.date.fromisoformat(AS_OF_LATE))).all())  # fmt: skip
    assert len(rows) == len(early["companies"]) + len(late["companies"])
    assert {c for c, cur, _ in rows if cur} == set(everyone) and all(
        d.isoformat() == AS_OF_LATE for _, cur, d in rows if cur
    )
    assert amounts == {r["fund_code"]: r["set_amount_krw"] for r in reports_in(report_folders[AS_OF_LATE])}
