"""`evaluator serve --workers 2` as a real server on 127.0.0.1: state lives in the database, not a worker.

A key revoked from the CLI is refused by every worker from the next request on, and the server's log
holds key ids and paths but never a key.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import run_cli
from service_fixtures import AS_OF_LATE, report_folders  # noqa: F401


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_workers_share_keys_and_revocation(report_folders: dict[str, Path], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'srv.db'}"
    assert run_cli("db", "import", str(report_folders[AS_OF_LATE]), "--db", url).exit_code == 0
    key = run_cli("keys", "create", "--db", url, "--client", "c", "--admin").output.strip().splitlines()[-1]
    port = _free_port()
    log = tmp_path / "server.log"
    env = {**os.environ, "EVALUATOR_DB": url}
    cmd = [sys.executable, "-m", "evaluator.app.cli", "serve", "--port", str(port), "--workers", "2"]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail("server did not start:\n" + log.read_text(errors="replace")[-2000:])
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
            # fresh connections land on either worker; every one must accept, then refuse
            for _ in range(40):
                with httpx.Client(base_url=base, headers=headers, timeout=10) as fresh:
                    r = fresh.get("/api/v1/summary")
                    assert r.status_code == 200 and r.json()["funds"] == 40
            assert client.get("/api/v1/funds").json()["total"] > 0
            # no proxy is trusted by default: forged forwarding headers from 127.0.0.1 change nothing
            forged = client.get("/api/v1/funds", headers={"X-Forwarded-Proto": "https",
                                                           "X-Forwarded-For": "203.0.113.9"})
            assert forged.status_code == 200 and "strict-transport-security" not in forged.headers
            assert forged.headers["cache-control"] == "no-store"
            assert run_cli("keys", "revoke", key.split("_")[1], "--db", url).exit_code == 0
            for _ in range(40):
                with httpx.Client(base_url=base, headers=headers, timeout=10) as fresh:
                    assert fresh.get("/api/v1/funds").status_code == 401
            assert client.get("/api/v1/funds").status_code == 401
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    text = log.read_text(errors="replace")
    assert "Traceback" not in text
    assert f"key={key.split('_')[1]} method=GET path=/api/v1/summary status=200" in text
    assert "status=401" in text and key not in text and key.split("_", 2)[2] not in text
