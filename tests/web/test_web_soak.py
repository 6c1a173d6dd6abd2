"""A small soak: pages and API keep answering, with 0 errors, while an upload job evaluates and writes a
batch in the same server (the 15,000-fund version is ``benchmarks/web_load.py``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import run_cli
from service_fixtures import Loaded, auth, db_url, loaded, pg_server, report_folders  # noqa: F401
from web_fixtures import live_server, login_token, web_app

PAGES = ("/", "/funds", "/funds?q=%EC%A3%BC%EC%8B%9D", "/api/v1/funds", "/api/v1/summary", "/api/v1/runs")


def _reader(base: str, key: str, stop: threading.Event, codes: list[int]) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        form = client.get("/login")
        client.post("/login", data={"key": key, "csrf": login_token(form.text), "next": "/"})
        i = 0
        while not stop.is_set():
            path = PAGES[i % len(PAGES)]
            headers = auth(key) if path.startswith("/api/") else {}
            codes.append(client.get(path, headers=headers).status_code)
            i += 1


@pytest.mark.slow
def test_pages_and_api_answer_while_an_upload_job_writes(loaded: Loaded, tmp_path: Path) -> None:
    assert run_cli("fund", "generate-sample", "--out", str(tmp_path / "nav.csv"), "--funds", "200",
                   "--years", "5").exit_code == 0
    codes: list[int] = []
    stop = threading.Event()
    with live_server(web_app(loaded)) as base:
        readers = [threading.Thread(target=_reader, args=(base, loaded.keys[w], stop, codes)) for w in ("a", "b", "admin")]
        for t in readers:
            t.start()
        files = {"data": ("nav.csv", (tmp_path / "nav.csv").read_bytes()),
                 "benchmark": ("b.csv", (tmp_path / "nav.benchmark.csv").read_bytes())}
        admin = auth(loaded.keys["admin"])
        job_id = httpx.post(f"{base}/api/v1/evaluations", headers=admin, files=files, timeout=60).json()["job_id"]
        during = len(codes)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            state = httpx.get(f"{base}/api/v1/jobs/{job_id}", headers=admin, timeout=60).json()
            if state["state"] in ("done", "failed"):
                break
            time.sleep(0.2)
        answered_during_job = len(codes) - during  # 200 funds: a job long enough to overlap, however fast it gets
        stop.set()
        for t in readers:
            t.join(timeout=60)
    assert state["state"] == "done", state
    assert answered_during_job >= 10, answered_during_job  # the readers really ran while the job did
    assert codes and all(c == 200 for c in codes), sorted(set(codes))
