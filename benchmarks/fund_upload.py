"""The upload job end to end, as a client runs it: ``POST /api/v1/evaluations`` with the NAV, META and
benchmark files to a running ``evaluator serve``, then ``GET /api/v1/jobs/{id}`` until it is done.

Run: ``.venv/bin/python benchmarks/fund_upload.py [--funds 15000] [--layout wide|long] [--keep DIR]``.
Setup (not timed): the same universe and files as ``fund_e2e.py`` (reused from ``--keep DIR``), a fresh
SQLite database beside them, an admin key, the server (one worker) started and answering.
Timed: the upload (the request until the job id comes back), then each stage as the job page shows it
(the job's ``stage`` polled every 0.05 s: reading, grading, writing reports, storing), and the whole job
from the first byte sent to ``done``. Peak = the server process's maximum resident set size (VmHWM).
Last line: ``fund_upload funds=… dates=… layout=… upload_s=… read_s=… grade_s=… write_s=… store_s=… total_s=… peak_mib=…``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

STAGES = {"입력 파일 읽는 중": "read", "지표와 등급 계산 중": "grade", "보고서 쓰는 중": "write",
          "데이터베이스에 저장 중": "store"}


def peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_upload(base: str, key: str, files: dict[str, Path]) -> tuple[dict[str, float], float, float]:
    """Upload, poll until done; (seconds per stage, upload seconds, total seconds)."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"}
    t0 = time.perf_counter()
    with httpx.Client(base_url=base, timeout=600, headers=headers) as http:
        handles = {role: path.open("rb") for role, path in files.items()}
        try:
            sent = http.post("/api/v1/evaluations", files={r: (p.name, handles[r]) for r, p in files.items()})
        finally:
            for fh in handles.values():
                fh.close()
        if sent.status_code != 202:
            raise SystemExit(f"upload refused ({sent.status_code}): {sent.text[:2000]}")
        upload = time.perf_counter() - t0
        url = sent.json()["url"]
        stages: dict[str, float] = {}
        current, since = None, time.perf_counter()
        while True:
            doc = http.get(url).json()
            now = time.perf_counter()
            if doc["stage"] != current:
                if current in STAGES:
                    stages[STAGES[current]] = now - since
                current, since = doc["stage"], now
            if doc["state"] in ("done", "failed"):
                break
            time.sleep(0.05)
        if doc["state"] != "done":
            raise SystemExit(f"job failed: {doc.get('message')}")
    return stages, upload, time.perf_counter() - t0


def main() -> None:
    from fund_e2e import write_files
    from service_load import cli, free_port, stop_server, wait_for_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--funds", type=int, default=15_000)
    parser.add_argument("--layout", choices=("wide", "long"), default="wide")
    parser.add_argument("--keep", type=Path, default=None, help="Keep (and reuse) the generated files here.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="fund_upload_", dir=Path(__file__).resolve().parents[2]))
    root.mkdir(parents=True, exist_ok=True)
    files = {"data": root / f"nav_{args.layout}.csv", "meta": root / "meta.csv", "benchmark": root / "benchmark.csv"}
    if not all(p.is_file() for p in files.values()):
        files = write_files(root, args.funds, args.layout)
    db = root / "upload.db"
    db.unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    cli("db", "upgrade", "--db", url)
    key = cli("keys", "create", "--db", url, "--client", "ops", "--admin").strip().splitlines()[-1]
    port = free_port()
    log = open(root / "upload_server.log", "wb")  # noqa: SIM115 - closed after the server stops
    env = {**os.environ, "EVALUATOR_DB": url, "EVALUATOR_UPLOAD_MAX_MB": "2000",
           "TMPDIR": str(root)}  # the job's private folder on the same disk as fund_e2e's output
    server = subprocess.Popen(
        [sys.executable, "-m", "evaluator.app.cli", "serve", "--port", str(port), "--workers", "1",
         "--rate-limit", "1000000"], stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(base, server, root / "upload_server.log")
        stages, upload, total = run_upload(base, key, files)
        peak = peak_mib(server.pid)
    finally:
        stop_server(server, log)
    dates = sum(1 for _ in files["benchmark"].open(encoding="utf-8")) - 1
    print(f"stages: {stages} upload {upload:.2f} s, load average {os.getloadavg()[0]:.2f}")
    print(
        f"fund_upload funds={args.funds} dates={dates} layout={args.layout} upload_s={upload:.2f} "
        + " ".join(f"{k}_s={stages.get(k, 0):.2f}" for k in ("read", "grade", "write", "store"))
        + f" total_s={total:.2f} peak_mib={peak:.0f}"
    )


if __name__ == "__main__":
    main()
