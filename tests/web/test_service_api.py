"""The HTTP API: tenant isolation for two clients and an admin, key states, validation, errors, logs.

Every test runs against SQLite and a real PostgreSQL server. Expected numbers are computed here from the
report files on disk, independently of the storage and query code.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
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
from sqlalchemy import update
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import revoke_key
from evaluator.app.storage.tables import ApiKey


def _visible(docs: list[dict[str, Any]], who: str, loaded: Loaded) -> list[dict[str, Any]]:
    if who == "admin":
        return docs
    if who == "a":
        return [d for d in docs if d["company"] == CLIENT_A_COMPANY]
    return [d for d in docs if d["company"] == CLIENT_B_COMPANY or d["fund_code"] == loaded.b_extra_fund]


def _all_pages(client, key: str, **params: Any) -> tuple[int, list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    items, page = [], 1
    while True:
        body = client.get("/api/v1/funds", headers=auth(key), params={**params, "page": page, "page_size": 7}).json()
        items += body["items"]
        if page * 7 >= body["total"]:
            return body["total"], items
        page += 1


def test_lists_counts_detail_history_and_summary_per_tenant(loaded: Loaded, report_folders: dict[str, Path]) -> None:
    late = reports_in(report_folders[AS_OF_LATE])
    early = reports_in(report_folders[AS_OF_EARLY])
    client = client_for(loaded)
    for who in ("a", "b", "admin"):
        key = loaded.keys[who]
        mine = _visible(late, who, loaded)
        rated = {d["fund_code"] for d in mine if d["status"] == "ok"}
        total, items = _all_pages(client, key)
        assert total == len(rated) == len(items) and {i["fund_code"] for i in items} == rated
        assert all(i["as_of"] == AS_OF_LATE for i in items)
        # summary: the grade distribution over exactly these funds
        summary = client.get("/api/v1/summary", headers=auth(key)).json()
        assert summary["funds"] == len(mine)
        expected = Counter((d["type"], str(d["grade"]) if d["status"] == "ok" else d["status"]) for d in mine)
        got = Counter()
        for fund_type, row in summary["grade_distribution"].items():
            for k in ("1", "2", "3", "4", "5", "not_rated", "error"):
                if row[k]:
                    got[(fund_type, k)] = row[k]
        assert got == expected
        # runs: both batches, counting only visible funds; input hashes for the admin only
        runs = client.get("/api/v1/runs", headers=auth(key)).json()["items"]
        assert [r["as_of"] for r in runs] == [AS_OF_LATE, AS_OF_EARLY]
        assert runs[0]["funds"] == len(mine) and runs[1]["funds"] == len(_visible(early, who, loaded))
        assert ("input_hashes" in runs[0]) == (who == "admin")
    # detail and history: own funds 200, another client's funds 404 exactly like unknown codes
    a_code = next(d["fund_code"] for d in late if d["company"] == CLIENT_A_COMPANY)
    b_code = next(d["fund_code"] for d in late if d["company"] == CLIENT_B_COMPANY)
    for path in ("/api/v1/funds/{}", "/api/v1/funds/{}/history"):
        assert client.get(path.format(a_code), headers=auth(loaded.keys["a"])).status_code == 200
        denied = client.get(path.format(b_code), headers=auth(loaded.keys["a"]))
        unknown = client.get(path.format("KR0000000000"), headers=auth(loaded.keys["a"]))
        assert denied.status_code == unknown.status_code == 404 and denied.json() == unknown.json()
        assert client.get(path.format(a_code), headers=auth(loaded.keys["b"])).status_code == 404
        assert client.get(path.format(b_code), headers=auth(loaded.keys["admin"])).status_code == 200
    assert client.get(f"/api/v1/funds/{loaded.b_extra_fund}", headers=auth(loaded.keys["b"])).status_code == 200
    # a filter naming another client's company finds nothing, and leaks no count
    body = client.get("/api/v1/funds", headers=auth(loaded.keys["a"]), params={"company": CLIENT_B_COMPANY}).json()
    assert body["total"] == 0 and body["items"] == []


def test_detail_is_the_full_latest_report_and_history_lists_both_batches(
    loaded: Loaded, report_folders: dict[str, Path]
) -> None:
    client = client_for(loaded)
    late = {d["fund_code"]: d for d in reports_in(report_folders[AS_OF_LATE])}
    early = {d["fund_code"]: d for d in reports_in(report_folders[AS_OF_EARLY])}
    code = next(c for c, d in late.items() if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    assert client.get(f"/api/v1/funds/{code}", headers=auth(loaded.keys["a"])).json() == late[code]
    hist = client.get(f"/api/v1/funds/{code}/history", headers=auth(loaded.keys["a"])).json()
    assert [(h["as_of"], h["grade"], h["score"]) for h in hist["items"]] == [
        (AS_OF_EARLY, early[code]["grade"], early[code]["score"]),
        (AS_OF_LATE, late[code]["grade"], late[code]["score"]),
    ]


def test_filters_match_a_hand_filter_of_the_reports(loaded: Loaded, report_folders: dict[str, Path]) -> None:
    client, key = client_for(loaded), loaded.keys["admin"]
    early = [d for d in reports_in(report_folders[AS_OF_EARLY]) if d["status"] == "ok"]
    late = [d for d in reports_in(report_folders[AS_OF_LATE]) if d["status"] == "ok"]
    some_type = Counter(d["type"] for d in late).most_common(1)[0][0]
    word = late[0]["fund_name"].split()[1]
    cases = [
        ({"type": some_type}, [d for d in late if d["type"] == some_type]),
        ({"grade": 1}, [d for d in late if d["grade"] == 1]),
        ({"company": CLIENT_A_COMPANY}, [d for d in late if d["company"] == CLIENT_A_COMPANY]),
        ({"q": word}, [d for d in late if word.lower() in d["fund_name"].lower()]),
        ({"q": late[3]["fund_code"][-6:].lower()}, [d for d in late if late[3]["fund_code"][-6:] in d["fund_code"]]),
        ({"as_of": AS_OF_EARLY}, early),
        ({"as_of": AS_OF_EARLY, "grade": 5}, [d for d in early if d["grade"] == 5]),
        ({"as_of": "2020-01-01"}, []),
        ({"q": "%"}, []),  # LIKE wildcards are literal characters
        ({"q": "_"}, []),
        ({"q": "' OR 1=1 --"}, []),
        ({"type": "x'; DROP TABLE runs; --"}, []),
    ]
    for params, expected in cases:
        total, items = _all_pages(client, key, **params)
        assert total == len(expected), params
        assert sorted(i["fund_code"] for i in items) == sorted(d["fund_code"] for d in expected), params
    # best grade first, then score
    _, items = _all_pages(client, key)
    assert [(i["grade"], -i["score"]) for i in items] == sorted((i["grade"], -i["score"]) for i in items)
    summary = client.get("/api/v1/summary", headers=auth(key), params={"as_of": AS_OF_EARLY}).json()
    assert summary["funds"] == len(reports_in(report_folders[AS_OF_EARLY]))


def test_page_size_is_capped_and_says_so(loaded: Loaded) -> None:
    client = client_for(loaded)
    body = client.get("/api/v1/funds", headers=auth(loaded.keys["admin"]), params={"page_size": 5000}).json()
    assert body["page_size"] == body["page_size_max"] == 100 and body["page_size_capped"] is True
    body = client.get("/api/v1/funds", headers=auth(loaded.keys["admin"]), params={"page_size": 3}).json()
    assert body["page_size"] == 3 and body["page_size_capped"] is False and len(body["items"]) == 3
    body = client.get("/api/v1/funds", headers=auth(loaded.keys["admin"]), params={"page": 99999}).json()
    assert body["items"] == [] and body["total"] > 0


def _update_key(loaded: Loaded, who: str, **values: Any) -> None:
    with Session(loaded.engine) as s, s.begin():
        s.execute(update(ApiKey).where(ApiKey.id == loaded.key_ids[who]).values(**values))


def test_missing_wrong_revoked_and_expired_keys_are_401(loaded: Loaded) -> None:
    client = client_for(loaded)
    key = loaded.keys["a"]
    wrong_secret = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    bad = [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer "},
        {"Authorization": f"Basic {key}"},
        {"Authorization": "Bearer ev_000000000000_" + "A" * 43},
        {"Authorization": f"Bearer {wrong_secret}"},
        {"Authorization": f"Bearer {key}x"},
        {"Authorization": "Bearer ' OR 1=1 --"},
    ]
    for path in ("/api/v1/runs", "/api/v1/funds", "/api/v1/summary", "/api/v1/funds/X", "/api/v1/funds/X/history"):
        for headers in bad:
            r = client.get(path, headers=headers)
            assert r.status_code == 401, (path, headers)
            assert r.json() == {"error": "unauthorized", "detail": "missing or invalid API key"}
            assert r.headers["www-authenticate"] == "Bearer"
    assert client.get("/api/v1/funds", headers=auth(key), params={"grade": 11}).status_code == 422  # the largest scale has 10
    assert client.get("/api/v1/funds", params={"grade": 9}).status_code == 401  # no key: 401 before validation
    # expired: the day after the last valid day; still valid on that day
    today = dt.datetime.now(dt.timezone.utc).date()
    _update_key(loaded, "a", expires_on=today)
    assert client.get("/api/v1/funds", headers=auth(key)).status_code == 200
    _update_key(loaded, "a", expires_on=today - dt.timedelta(days=1))
    assert client.get("/api/v1/funds", headers=auth(key)).status_code == 401
    # revoked: takes effect on the next request (nothing cached beyond the KDF result)
    assert client.get("/api/v1/funds", headers=auth(loaded.keys["b"])).status_code == 200
    assert revoke_key(loaded.engine, loaded.key_ids["b"]) is True
    assert client.get("/api/v1/funds", headers=auth(loaded.keys["b"])).status_code == 401
    assert revoke_key(loaded.engine, loaded.key_ids["b"]) is False
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.parametrize(
    "code",
    ["..%2F..%2Fetc%2Fpasswd", "%2e%2e", "' OR '1'='1", "1;DROP TABLE runs", "%00", "a%0Ab", "x" * 300, "%EA%B0%80"],
)
def test_path_like_or_sql_like_codes_are_404(loaded: Loaded, code: str) -> None:
    client = client_for(loaded)
    for suffix in ("", "/history"):
        r = client.get(f"/api/v1/funds/{code}{suffix}", headers=auth(loaded.keys["admin"]))
        assert r.status_code == 404 and r.json()["error"] == "not_found", (code, r.text)


def test_every_error_is_json_without_a_traceback(loaded: Loaded) -> None:
    client = client_for(loaded)
    key = auth(loaded.keys["a"])
    cases = [
        (client.get("/api/v1/funds"), 401, "unauthorized"),
        (client.get("/api/v1/funds/NOPE", headers=key), 404, "not_found"),
        (client.get("/api/v1/nothing", headers=key), 404, "not_found"),
        (client.get("/api/v1/funds", headers=key, params={"page": 0}), 422, "invalid_request"),
        (client.get("/api/v1/funds", headers=key, params={"as_of": "yesterday"}), 422, "invalid_request"),
        (client.get("/api/v1/funds", headers=key, params={"q": "a\x00b"}), 422, "invalid_request"),
        (client.get("/api/v1/funds", headers=key, params={"q": "x" * 101}), 422, "invalid_request"),
        (client.get("/api/v1/summary", headers=key, params={"as_of": "2025-02-30"}), 422, "invalid_request"),
        (client.delete("/api/v1/funds", headers=key), 405, "method_not_allowed"),
    ]
    for response, status, error in cases:
        assert response.status_code == status and response.json()["error"] == error, response.text
        assert "Traceback" not in response.text and loaded.keys["a"] not in response.text


def test_requests_are_logged_with_key_id_never_the_key(
    loaded: Loaded, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    client = client_for(loaded)
    with caplog.at_level(logging.INFO, logger="evaluator.api"):
        client.get("/api/v1/funds", headers=auth(loaded.keys["a"]))
        client.get("/api/v1/funds", headers=auth(loaded.keys["a"] + "x"))
        client.get(f"/api/v1/funds/{loaded.keys['b']}", headers=auth(loaded.keys["admin"]))
    lines = [r.getMessage() for r in caplog.records if r.name == "evaluator.api"]
    assert len(lines) == 3
    assert lines[0].startswith(f"key={loaded.key_ids['a']} method=GET path=/api/v1/funds status=200 latency_ms=")
    assert lines[1].startswith("key=- method=GET path=/api/v1/funds status=401")
    assert "status=404" in lines[2] and "ev_[redacted]" in lines[2]
    text = "\n".join(lines)
    for key in loaded.keys.values():
        assert key not in text and key.split("_", 2)[2] not in text


def test_raw_keys_are_never_in_the_database_file(tmp_path: Path) -> None:
    from conftest import run_cli

    url = f"sqlite:///{tmp_path / 'k.db'}"
    created = run_cli("keys", "create", "--db", url, "--client", "고객사", "--company", CLIENT_A_COMPANY,
                      "--expires", "2099-12-31", "--allow-unknown")
    assert created.exit_code == 0, created.output
    key = created.output.strip().splitlines()[-1]
    assert key.startswith("ev_") and len(key.split("_", 2)[2]) == 43
    listing = run_cli("keys", "list", "--db", url)
    key_id, secret = key.split("_")[1], key.split("_", 2)[2]
    assert key_id in listing.output and secret not in listing.output and "active" in listing.output
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("k.db"))  # db, -wal, -shm
    assert secret.encode() not in blob and key.encode() not in blob and key_id.encode() in blob
    assert run_cli("keys", "revoke", key_id, "--db", url).exit_code == 0
    assert "revoked" in run_cli("keys", "list", "--db", url).output
    missing = run_cli("keys", "revoke", "ffffffffffff", "--db", url)
    assert missing.exit_code == 2 and "no key with id" in missing.output
    past = run_cli("keys", "create", "--db", url, "--client", "x", "--company", "y", "--expires", "2001-01-01")
    assert past.exit_code == 2 and "in the past" in past.output
    scopeless = run_cli("keys", "create", "--db", url, "--client", "x")
    assert scopeless.exit_code == 2 and "--company or --fund" in scopeless.output


def test_keys_for_unknown_companies_or_funds_are_refused(loaded: Loaded) -> None:
    from conftest import run_cli

    typo = run_cli("keys", "create", "--db", loaded.url, "--client", "x", "--company", "없는운용",
                   "--company", CLIENT_A_COMPANY, "--fund", "KR0000000000")
    assert typo.exit_code == 2 and "--company 없는운용" in typo.output and "--fund KR0000000000" in typo.output
    assert CLIENT_A_COMPANY not in typo.output.split("knows")[1].split("(")[0]
    before = len(run_cli("keys", "list", "--db", loaded.url).output)
    known = run_cli("keys", "create", "--db", loaded.url, "--client", "x", "--company", CLIENT_A_COMPANY,
                    "--fund", loaded.b_extra_fund)
    assert known.exit_code == 0, known.output
    anyway = run_cli("keys", "create", "--db", loaded.url, "--client", "x", "--company", "없는운용", "--allow-unknown")
    assert anyway.exit_code == 0, anyway.output
    assert len(run_cli("keys", "list", "--db", loaded.url).output) > before


def test_a_database_failure_is_a_503_without_details(loaded: Loaded) -> None:
    from sqlalchemy import text

    client = client_for(loaded)
    code = loaded.b_extra_fund
    assert client.get(f"/api/v1/funds/{code}", headers=auth(loaded.keys["admin"])).status_code == 200
    with loaded.engine.begin() as conn:
        conn.execute(text("DROP TABLE fund_documents"))  # the database breaks under a running server
    r = client.get(f"/api/v1/funds/{code}", headers=auth(loaded.keys["admin"]))
    assert r.status_code == 503 and r.json() == {
        "error": "unavailable", "detail": "the database is busy or unreachable; try again"
    }
    assert "fund_documents" not in r.text and "Traceback" not in r.text
