"""A job whose worker dies does not stay "running": a real `evaluator serve` is killed mid-job, and once its
heartbeat is older than the bound (written into the past through the database, standing for two minutes of
silence) the API, the job page and a starting server all report it failed; nothing of it is stored.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import run_cli
from service_fixtures import AS_OF_LATE, Loaded, auth, db_url, loaded, pg_server, report_folders  # noqa: F401
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from web_fixtures import _free_port, sign_in, web_client

from evaluator.app.storage import jobs
from evaluator.app.storage.batches import store_folder
from evaluator.app.storage.tables import Job, Run

ABANDONED_KO = "작업자가 중단되어 작업이 실패했습니다"


def _runs(loaded: Loaded) -> int:
    with Session(loaded.engine) as s:
        return int(s.scalar(select(func.count()).select_from(Run)))


def _row(loaded: Loaded, job_id: int) -> Job:
    with Session(loaded.engine) as s:
        job = s.get(Job, job_id)
        assert job is not None
        return job


def _age(loaded: Loaded, job_id: int, by: dt.timedelta) -> None:
    past = dt.datetime.now(dt.timezone.utc) - by
    with Session(loaded.engine) as s, s.begin():
        s.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=past, updated_at=past))


def _age_of(when: dt.datetime | None) -> dt.timedelta:
    assert when is not None
    return dt.datetime.now(dt.timezone.utc) - (when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc))


def _serve(url: str, port: int, log: Path) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "evaluator.app.cli",
        "serve",
        "--db",
        url,
        "--port",
        str(port),
        "--rate-limit",
        "0",
    ]
    with log.open("wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _running_job(base: str, key: str, nav: Path, server: subprocess.Popen) -> int:
    """Upload ``nav``; return the job id as soon as the worker reports it running."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    with nav.open("rb") as fh:
        started = httpx.post(
            f"{base}/api/v1/evaluations", headers=auth(key), files={"data": ("nav.csv", fh)}, timeout=60
        )
    assert started.status_code == 202, started.text
    job_id = int(started.json()["job_id"])
    while time.monotonic() < deadline:
        if (
            httpx.get(f"{base}/api/v1/jobs/{job_id}", headers=auth(key), timeout=10).json()["state"]
            == "running"
        ):
            return job_id
        time.sleep(0.05)
    raise AssertionError("the job never ran")


@pytest.fixture(scope="module")
def big_nav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("jobs")
    assert (
        run_cli(
            "fund", "generate-sample", "--out", str(folder / "nav.csv"), "--funds", "100", "--years", "6"
        ).exit_code
        == 0
    )
    return folder / "nav.csv"


def test_a_killed_worker_is_reported_failed(loaded: Loaded, big_nav: Path, tmp_path: Path) -> None:
    before = _runs(loaded)
    port = _free_port()
    server = _serve(loaded.url, port, tmp_path / "server.log")
    try:
        job_id = _running_job(f"http://127.0.0.1:{port}", loaded.keys["admin"], big_nav, server)
    finally:
        os.killpg(server.pid, signal.SIGKILL)  # the worker dies mid-job: no handler, no cleanup
        server.wait(timeout=30)
    stuck = _row(loaded, job_id)
    assert stuck.state == "running" and stuck.heartbeat_at is not None  # what used to stay forever
    client = web_client(loaded)  # a new server on the same database
    admin = auth(loaded.keys["admin"])
    fresh = client.get(f"/api/v1/jobs/{job_id}", headers=admin).json()
    assert fresh["state"] == "running"  # a heartbeat seconds old: maybe another worker is on it
    _age(loaded, job_id, jobs.STALE_AFTER + dt.timedelta(seconds=5))
    doc = client.get(f"/api/v1/jobs/{job_id}", headers=admin).json()
    assert (
        doc["state"] == "failed" and ABANDONED_KO in doc["message"] and "nothing was stored" in doc["message"]
    )
    sign_in(client, loaded.keys["admin"])
    page = html.unescape(client.get(f"/jobs/{job_id}").text)
    assert 'data-state="failed"' in page and ABANDONED_KO in page and '<meta http-equiv="refresh"' not in page
    assert _runs(loaded) == before


def test_a_starting_server_fails_abandoned_jobs_and_spares_live_ones(loaded: Loaded) -> None:
    from evaluator.app.api.server import create_app
    from evaluator.app.api.settings import Settings

    dead = jobs.create_job(loaded.engine, loaded.key_ids["admin"], "evaluate", {"files": {}})
    live = jobs.create_job(loaded.engine, loaded.key_ids["admin"], "evaluate", {"files": {}})
    for job_id in (dead, live):
        assert jobs.set_state(
            loaded.engine, job_id, state="running", stage="지표와 등급 계산 중", progress=0.3
        )
    _age(loaded, dead, jobs.STALE_AFTER + dt.timedelta(seconds=1))
    _age(loaded, live, jobs.STALE_AFTER - dt.timedelta(seconds=30))
    create_app(engine=loaded.engine, settings=Settings(rate_per_minute=0))  # start-up, no request made
    assert _row(loaded, dead).state == "failed" and ABANDONED_KO in (_row(loaded, dead).message or "")
    assert _row(loaded, live).state == "running"
    # the dead one's late worker can no longer move it
    assert not jobs.set_state(loaded.engine, dead, state="done", stage="완료", progress=1.0)
    assert _row(loaded, dead).state == "failed"


def test_the_heartbeat_beats_and_an_abandoned_job_stores_nothing(
    loaded: Loaded, report_folders, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import shutil

    before = _runs(loaded)
    job_id = jobs.create_job(loaded.engine, loaded.key_ids["admin"], "evaluate", {"files": {}})
    jobs.set_state(loaded.engine, job_id, state="running", stage="보고서 쓰는 중", progress=0.5)
    _age(loaded, job_id, dt.timedelta(seconds=60))
    with jobs.Heartbeat(loaded.engine, job_id, every=0.05) as beat:
        deadline = time.monotonic() + 10
        while _age_of(_row(loaded, job_id).heartbeat_at) > dt.timedelta(seconds=5):
            assert time.monotonic() < deadline, "no heartbeat was written"
            time.sleep(0.05)
        for _ in range(50):  # as if the beats had stopped (a stalled worker); a beat landing in between the
            _age(loaded, job_id, jobs.STALE_AFTER * 2)  # aging and the read is the live worker: age again
            with Session(loaded.engine) as s:
                if jobs.get_job(s, job_id)["state"] == "failed":  # type: ignore[index]
                    break
        with Session(loaded.engine) as s:
            assert jobs.get_job(s, job_id)["state"] == "failed"  # type: ignore[index]
        while not beat.abandoned:
            assert time.monotonic() < deadline, "the worker was not told"
            time.sleep(0.05)
        with pytest.raises(jobs.JobAbandoned):
            beat.check()
    folder = tmp_path / "late"
    shutil.copytree(report_folders[AS_OF_LATE], folder)
    for p in folder.glob("*.json"):  # a batch not stored yet: the same reports at a later date
        p.write_text(
            json.dumps({**json.loads(p.read_text(encoding="utf-8")), "as_of": "2025-12-31"}), encoding="utf-8"
        )
    with pytest.raises(jobs.JobAbandoned):  # its store transaction refuses it: the batch rolls back
        store_folder(
            loaded.engine,
            folder,
            source="upload",
            finish=lambda session, run_id: jobs.mark_done(session, job_id, run_id, None),
        )
    assert _runs(loaded) == before
    # a live job stores, and is done in the same transaction
    other = jobs.create_job(loaded.engine, loaded.key_ids["admin"], "evaluate", {"files": {}})
    jobs.set_state(loaded.engine, other, state="running", stage="데이터베이스에 저장 중", progress=0.92)
    stored = store_folder(
        loaded.engine,
        folder,
        source="upload",
        finish=lambda session, run_id: jobs.mark_done(session, other, run_id, None),
    )
    assert stored.created and _runs(loaded) == before + 1
    assert _row(loaded, other).state == "done" and _row(loaded, other).run_id == stored.run_id
