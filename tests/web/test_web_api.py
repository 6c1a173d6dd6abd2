"""What the fuzzing client found, fixed (a mistyped as-of date is a 422 naming it; 405 carries Allow),
the per-key rate limit held in the database across app instances, /docs served with no outside URL,
and uploads through the API: a failing job stores nothing, a good one stores a batch."""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path

import pytest
from conftest import run_cli
from service_fixtures import Loaded, auth, db_url, loaded, pg_server, report_folders  # noqa: F401
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from web_fixtures import web_client

from evaluator.app.storage.tables import Run


@pytest.mark.parametrize("value", ["0", "20250630", "2025-6-30", "1e3", "2025-02-30", "today"])
def test_a_mistyped_as_of_is_a_422_naming_it(loaded: Loaded, value: str) -> None:
    client = web_client(loaded)
    for path in ("/api/v1/funds", "/api/v1/summary"):
        r = client.get(path, headers=auth(loaded.keys["admin"]), params={"as_of": value})
        assert r.status_code == 422, (path, value, r.text)
        assert any(d["loc"][-1] == "as_of" for d in r.json()["detail"])
    ok = client.get("/api/v1/summary", headers=auth(loaded.keys["admin"]), params={"as_of": "2025-06-30"})
    assert ok.status_code == 200 and ok.json()["funds"] > 0


def test_405_names_the_allowed_methods(loaded: Loaded) -> None:
    client = web_client(loaded)
    for method, path, allowed in (("POST", "/api/v1/funds", "GET"), ("DELETE", "/api/v1/runs", "GET"),
                                  ("PUT", "/api/v1/evaluations", "POST"), ("DELETE", "/login", "GET, POST")):
        r = client.request(method, path, headers=auth(loaded.keys["admin"]))
        assert r.status_code == 405, (method, path)
        assert set(r.headers["allow"].replace(" ", "").split(",")) == set(allowed.replace(" ", "").split(","))


def test_the_rate_limit_is_shared_by_every_worker(loaded: Loaded) -> None:
    """Two app instances on one database stand for two workers: the count is the database's."""
    first, second = web_client(loaded, rate_per_minute=6), web_client(loaded, rate_per_minute=6)
    key = auth(loaded.keys["a"])
    codes = [(first if i % 2 else second).get("/api/v1/runs", headers=key).status_code for i in range(6)]
    if time.time() % 60 > 58:  # the window turned over mid-test: start again in the new one
        time.sleep(3)
        codes = [(first if i % 2 else second).get("/api/v1/runs", headers=key).status_code for i in range(6)]
    assert codes == [200] * 6
    limited = first.get("/api/v1/funds", headers=key)
    assert limited.status_code == 429 and 1 <= int(limited.headers["retry-after"]) <= 60
    assert limited.json()["error"] == "rate_limited"
    assert second.get("/api/v1/funds", headers=auth(loaded.keys["b"])).status_code == 200  # per key
    # pages count against the same key
    from web_fixtures import sign_in

    sign_in(second, loaded.keys["a"])
    page = second.get("/")
    assert page.status_code == 429 and "retry-after" in page.headers


def test_docs_and_assets_are_served_from_here(loaded: Loaded) -> None:
    client = web_client(loaded)
    docs = client.get("/docs")
    assert docs.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
    assert urls and all(u.startswith("/assets/") for u in urls), urls
    assert not re.search(r"https?://", docs.text)
    bundle = next(u for u in urls if u.endswith(".js") or ".js?" in u)
    r = client.get(bundle, headers={"accept-encoding": "gzip"})
    assert r.status_code == 200 and "max-age=31536000" in r.headers["cache-control"]
    assert r.headers["content-encoding"] == "gzip" and b"SwaggerUIBundle" in r.content  # httpx un-gzips
    assert b'version:"5.' in r.content or b'"5.' in r.content
    plotly = client.get("/assets/plotly.min.js", headers={"accept-encoding": "gzip"})
    assert plotly.headers["content-encoding"] == "gzip"
    raw = client.get("/assets/plotly.min.js", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in raw.headers and raw.content == plotly.content
    assert len(gzip.compress(raw.content)) < len(raw.content) / 2
    again = client.get("/assets/plotly.min.js", headers={"if-none-match": raw.headers["etag"]})
    assert again.status_code == 304
    assert client.get("/assets/../../etc/passwd").status_code == 404


def _runs(loaded: Loaded) -> int:
    with Session(loaded.engine) as s:
        return int(s.scalar(select(func.count()).select_from(Run)))


def _wait_job(client, key: str, job_id: int) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        doc = client.get(f"/api/v1/jobs/{job_id}", headers=auth(key)).json()
        if doc["state"] in ("done", "failed"):
            return doc
        time.sleep(0.3)
    raise AssertionError("job did not end")


def test_uploads_through_the_api(loaded: Loaded, tmp_path: Path) -> None:
    assert run_cli("fund", "generate-sample", "--out", str(tmp_path / "nav.csv"), "--funds", "20",
                   "--years", "4").exit_code == 0
    client, admin = web_client(loaded, upload_max_mb=4), loaded.keys["admin"]
    before = _runs(loaded)
    # a client key may not start one, nor see one
    files = {"data": ("nav.csv", (tmp_path / "nav.csv").read_bytes())}
    assert client.post("/api/v1/evaluations", headers=auth(loaded.keys["a"]), files=files).status_code == 403
    # a broken file: the job fails with the loader's message, and nothing is stored
    bad = client.post("/api/v1/evaluations", headers=auth(admin), files={"data": ("prices.csv", b"x,y\n1,2\n")})
    assert bad.status_code == 202
    job = _wait_job(client, admin, bad.json()["job_id"])
    assert job["state"] == "failed" and "prices.csv" in job["message"] and "/tmp" not in job["message"]
    assert _runs(loaded) == before
    assert client.get(f"/api/v1/jobs/{bad.json()['job_id']}", headers=auth(loaded.keys["a"])).status_code == 404
    # too large: refused before a job exists (the per-file limit, and the declared body size)
    big = {"data": ("nav.csv", b"0" * (5 << 20))}
    assert client.post("/api/v1/evaluations", headers=auth(admin), files=big).status_code == 413
    huge = client.post("/api/v1/evaluations", headers=auth(admin), files={"data": ("n.csv", b"0" * (14 << 20))})
    assert huge.status_code == 413 and huge.json()["error"] == "too_large"
    assert client.post("/api/v1/evaluations", headers=auth(admin), files=files,
                       data={"as_of": "2025-13-01"}).status_code == 422
    # a good upload stores one batch, as of the date given
    files["benchmark"] = ("bench.csv", (tmp_path / "nav.benchmark.csv").read_bytes())
    ok = client.post("/api/v1/evaluations", headers=auth(admin), files=files, data={"as_of": "2025-05-30"})
    job = _wait_job(client, admin, ok.json()["job_id"])
    assert job["state"] == "done" and job["run_id"] is not None, job
    runs = client.get("/api/v1/runs", headers=auth(admin)).json()["items"]
    stored = next(r for r in runs if r["run_id"] == job["run_id"])
    assert stored["as_of"] == "2025-05-30" and stored["source"] == "upload" and stored["funds"] == 20
    assert _runs(loaded) == before + 1


def test_pages_and_api_do_not_wait_for_a_sqlite_writer(loaded: Loaded) -> None:
    """While a batch holds SQLite's write lock, the rate counter lets requests through instead of waiting."""
    if not loaded.url.startswith("sqlite"):
        pytest.skip("PostgreSQL writes the counter row beside a batch without waiting")
    import sqlite3

    client = web_client(loaded, rate_per_minute=1000)
    writer = sqlite3.connect(loaded.url.removeprefix("sqlite:///"), timeout=1)
    writer.execute("BEGIN IMMEDIATE")  # what storing a batch holds
    try:
        start = time.monotonic()
        r = client.get("/api/v1/funds", headers=auth(loaded.keys["a"]))
        assert r.status_code == 200 and time.monotonic() - start < 5
    finally:
        writer.rollback()
        writer.close()
    assert client.get("/api/v1/funds", headers=auth(loaded.keys["a"])).status_code == 200
