"""The API under the real fuzzing client, every check on: ``st run URL/openapi.json --checks all`` against
a live server on 127.0.0.1 (SQLite and PostgreSQL), as an admin key and as a client key.

Two documented exceptions, each operation running with every other check:
- for the multipart upload, ``negative_data_rejection`` cannot be met: a file part is bytes, so the "number"
  schemathesis sends as a file is a (bad) file, which the job then refuses with the loader's message;
- for the fund list, ``positive_data_acceptance`` cannot be met: ``grade`` is 1–10 in the schema (scales have
  3–10 grades), but which grades exist depends on the stored batches' scale, and a grade outside it is a 422
  naming the allowed values (a silent empty list would hide a wrong filter).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from service_fixtures import Loaded, db_url, loaded, pg_server, report_folders  # noqa: F401
from web_fixtures import live_server, web_app

ST = str(Path(sys.executable).parent / "st")
UPLOAD = "/api/v1/evaluations"
FUNDS = "/api/v1/funds"


def _st(base: str, key: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``st run`` in a folder of the test's own: its ``.schemathesis/`` cache of earlier crashes stays out of the
    checkout and out of the next run."""
    cmd = [ST, "run", f"{base}/openapi.json", "-H", f"Authorization: Bearer {key}", "--checks", "all",
           "--max-examples", "15", "--seed", "1", "--no-color", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=400, check=False, cwd=cwd)


@pytest.mark.parametrize("who", ["admin", "a"])
def test_every_check_passes_on_every_operation(loaded: Loaded, who: str, tmp_path: Path) -> None:
    app = web_app(loaded)
    ops = sum(len(methods) for methods in app.openapi()["paths"].values())
    with live_server(app) as base:
        rest = _st(base, loaded.keys[who], "--exclude-path", UPLOAD, "--exclude-path", FUNDS, cwd=tmp_path)
        upload = _st(
            base, loaded.keys[who], "--include-path", UPLOAD, "--exclude-checks", "negative_data_rejection", cwd=tmp_path
        )
        funds = _st(
            base, loaded.keys[who], "--include-path", FUNDS, "--exclude-checks", "positive_data_acceptance", cwd=tmp_path
        )
    for run in (rest, upload, funds):
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
        assert "passed" in run.stdout and "failed" not in run.stdout.split("SUMMARY")[-1]
    assert ops >= 10  # funds, fund, history, summary, runs, companies, company, evaluations, job, healthz
    assert f"Selected: {ops - 2}/{ops}" in rest.stdout
    assert f"Selected: 1/{ops}" in upload.stdout and f"Selected: 1/{ops}" in funds.stdout
