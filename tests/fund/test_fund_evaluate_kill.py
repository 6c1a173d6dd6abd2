"""A real SIGKILL of `fund evaluate --force --db` while its workers write the reports, and again while it stores
the batch: the folder holds the old batch or the new one (never a mix), the database the old runs or the new
one whole, and no worker process outlives the command."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.core.outputs import STAGING_SUFFIX

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the session")

FUNDS = 2500
OLD_AS_OF, NEW_AS_OF = "2024-12-31", "2025-06-30"
TYPES = ("국내주식형", "채권형", "혼합형")


def _universe(folder: Path) -> list[str]:
    """A wide NAV table (business days, one column per fund), META and the per-유형 benchmark as CSV files."""
    rng = np.random.default_rng(3)
    dates = pd.bdate_range("2021-06-01", NEW_AS_OF)
    kinds = rng.integers(0, len(TYPES), FUNDS)
    bench_ret = rng.normal(2e-4, 0.01, (len(dates), len(TYPES)))
    navs = 1000.0 * np.cumprod(1 + bench_ret[:, kinds] + rng.normal(0, 0.003, (len(dates), FUNDS)), axis=0)
    codes = [f"KR7{i:09d}" for i in range(FUNDS)]
    pd.DataFrame(navs, index=dates, columns=codes).to_csv(
        folder / "nav.csv", index_label="기준일자", float_format="%.2f", date_format="%Y-%m-%d")
    pd.DataFrame({"유형": np.asarray(TYPES)[kinds], "운용사": [f"운용{i % 9}" for i in range(FUNDS)],
                  "펀드명": [f"펀드 {i}호" for i in range(FUNDS)], "설정액": 1e11}, index=codes).to_csv(
        folder / "meta.csv", index_label="펀드코드")
    pd.DataFrame(1000.0 * np.cumprod(1 + bench_ret, axis=0), index=dates, columns=list(TYPES)).to_csv(
        folder / "benchmark.csv", index_label="기준일자", float_format="%.4f", date_format="%Y-%m-%d")
    return [str(folder / "nav.csv"), "--meta", str(folder / "meta.csv"), "--benchmark", str(folder / "benchmark.csv")]


def _command(inputs: list[str], out: Path, db: str, as_of: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "evaluator.app.cli", "fund", "evaluate", *inputs, "--as-of", as_of,
            "--out", str(out), "--db", db, *extra]


def _folder_state(out: Path) -> str:
    """The as-of of the one whole batch in ``out``: every report listed is there with the summary's as-of."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    listed = {line["file"] for line in summary["funds"] if line["file"]}
    on_disk = {p.name for p in out.iterdir() if p.suffix == ".json" and p.name != "summary.json"}
    assert listed == on_disk and len(listed) == FUNDS
    for name in sorted(listed)[:: FUNDS // 25]:
        assert json.loads((out / name).read_text(encoding="utf-8"))["as_of"] == summary["as_of"]
    series = (out / "nav_series.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(series) == sum(1 for line in summary["funds"] if line["status"] == "ok")
    return str(summary["as_of"])


def _db_state(path: Path) -> list[str]:
    """The as-of of each stored run, every one of them whole (all its funds' rows, documents and series)."""
    with sqlite3.connect(path) as conn:
        runs = conn.execute("SELECT id, as_of, funds_total FROM runs ORDER BY id").fetchall()
        for run_id, _, total in runs:
            for table in ("fund_results", "fund_documents"):
                assert conn.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", (run_id,)).fetchone()[0] == total
            assert conn.execute("SELECT count(*) FROM fund_series WHERE run_id = ?", (run_id,)).fetchone()[0] > 0
    return [str(as_of) for _, as_of, _ in runs]


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (the command and any worker it forked)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            pids.append(int(stat.parent.name))
    return pids


def _kill_when(cmd: list[str], ready: Callable[[], bool], tmp: Path) -> None:
    """Start ``cmd`` in its own session, SIGKILL the command alone once ``ready()``, and check that its workers
    die with it."""
    log = (tmp / "log.txt").open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "COLUMNS": "200"})
    try:
        deadline = time.monotonic() + 300
        while not ready() and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)  # the command only: its workers must not outlive it
        proc.wait(timeout=60)
        deadline = time.monotonic() + 15
        while _session(proc.pid):
            assert time.monotonic() < deadline, f"workers outlived the command: {_session(proc.pid)}"
            time.sleep(0.05)
    finally:
        if _session(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_a_kill_while_writing_or_storing_leaves_the_old_batch_or_the_new_one(tmp_path: Path) -> None:
    inputs = _universe(tmp_path)
    out, db_path = tmp_path / "out", tmp_path / "e.db"
    db = f"sqlite:///{db_path}"
    done = subprocess.run(_command(inputs, out, db, OLD_AS_OF), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _folder_state(out) == OLD_AS_OF and _db_state(db_path) == [OLD_AS_OF]
    new = _command(inputs, out, db, NEW_AS_OF, "--force")
    staging = out.with_name(out.name + STAGING_SUFFIX)

    def writing() -> bool:  # half the reports are in the staging folder: the workers are busy
        try:
            return sum(1 for _ in os.scandir(staging)) >= FUNDS // 2
        except OSError:
            return False

    _kill_when(new, writing, tmp_path)
    assert _folder_state(out) == OLD_AS_OF  # the swap comes after every file: an unfinished batch is not in
    assert _db_state(db_path) == [OLD_AS_OF]

    def storing() -> bool:  # the batch is in the folder and the command has begun storing it
        return "summary.json and summary.csv in" in (tmp_path / "log.txt").read_text(encoding="utf-8")

    _kill_when(new, storing, tmp_path)
    assert _folder_state(out) == NEW_AS_OF
    assert _db_state(db_path) in ([OLD_AS_OF], [OLD_AS_OF, NEW_AS_OF])  # nothing of the run, or all of it

    done = subprocess.run(new, capture_output=True, text=True)  # the next run finishes what was cut short
    assert done.returncode == 0, done.stdout + done.stderr
    assert _folder_state(out) == NEW_AS_OF and _db_state(db_path) == [OLD_AS_OF, NEW_AS_OF]
