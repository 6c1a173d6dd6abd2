"""A real kill during `eval --force`: the old report folder stays whole, and mixed folders are refused or flagged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from evaluator.app.run_folders.catalog import Catalog
from evaluator.core.outputs import STAGING_SUFFIX, recover_replaced, replacing_dir, swap_in
from evaluator.evaluation.report import PARTIAL_NAME

pytestmark = pytest.mark.slow

ARGS = ["--domain", "gsm8k", "--model", "tiny", "--data", "synthetic", "--max-new-tokens", "4"]


def _eval(out: Path, limit: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "evaluator.app.cli", "eval", *ARGS, "--limit", str(limit), "--out", str(out),
            *extra]


def _kill_when(cmd: list[str], env: dict[str, str], log_path: Path, ready: Callable[[], bool]) -> None:
    """Start ``cmd`` and SIGKILL it as soon as ``ready()`` holds (failing if it ends or never gets there)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 300
    try:
        while not ready():
            assert proc.poll() is None, log_path.read_text()[-2000:]
            assert time.monotonic() < deadline, "the command never reached the point to kill it at"
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_sigkill_during_eval_force_leaves_the_old_folder_whole(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    first = subprocess.run(_eval(out, 6), capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    (out / "notes.txt").write_text("mine", encoding="utf-8")  # a user's file: --force keeps it
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    assert json.loads(old["report.json"])["n_items"] == 6

    staging = out.with_name(out.name + STAGING_SUFFIX)
    big = [*_eval(out, 400, "--force"), "--batch-size", "2", "--max-new-tokens", "64"]
    partial = staging / PARTIAL_NAME  # generations of the new run are being written
    _kill_when(big, env, tmp_path / "second.log", lambda: partial.is_file() and partial.stat().st_size > 0)

    assert {p.name: p.read_bytes() for p in out.iterdir()} == old  # byte for byte the old folder
    assert (staging / PARTIAL_NAME).is_file()  # the unfinished run's generations stay readable beside it
    compared = run_cli("compare", str(out), str(out))
    assert compared.exit_code == 0, compared.output

    third = subprocess.run(_eval(out, 3, "--force"), capture_output=True, text=True, env=env, timeout=300)
    assert third.returncode == 0, third.stdout[-2000:] + third.stderr[-2000:]
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["n_items"] == 3
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine" and not staging.exists()
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "report.json", "samples.jsonl"]


def test_a_folder_whose_parts_disagree_is_refused_by_compare_and_flagged_by_the_viewer(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    good, mixed = tmp_path / "runs" / "good", tmp_path / "runs" / "mixed"
    for folder, limit in ((good, 4), (mixed, 4)):
        result = run_cli("eval", *ARGS, "--limit", str(limit), "--out", str(folder))
        assert result.exit_code == 0, result.output
    # an older release wrote into the folder in place and was killed: a later run's generations beside the report
    (mixed / PARTIAL_NAME).write_text('{"index": 0, "texts": ["x"]}\n', encoding="utf-8")
    refused = run_cli("compare", str(good), str(mixed))
    assert refused.exit_code != 0 and PARTIAL_NAME in " ".join(refused.output.split())
    (mixed / PARTIAL_NAME).unlink()
    lines = (mixed / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    other = json.loads(lines[0])
    other["id"] = "another-run-item"
    (mixed / "samples.jsonl").write_text("\n".join([json.dumps(other), *lines[1:]]) + "\n", encoding="utf-8")
    refused = run_cli("compare", str(good), str(mixed))
    assert refused.exit_code != 0 and "different runs" in " ".join(refused.output.split())
    assert run_cli("compare", str(good), str(good)).exit_code == 0  # the control

    (mixed / PARTIAL_NAME).write_text("{}\n", encoding="utf-8")
    entries = {e.path.name: e for e in Catalog([tmp_path / "runs"]).scan()}
    assert any(PARTIAL_NAME in p for p in entries["mixed"].problems)
    assert not any(PARTIAL_NAME in p for p in entries["good"].problems)


def test_a_swap_cut_between_its_two_renames_is_repaired_on_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "report.json").write_text("old", encoding="utf-8")
    aside = tmp_path / ".out.replaced"
    os.replace(target, aside)  # where a kill after the first rename leaves it
    recover_replaced(target)
    assert (target / "report.json").read_text(encoding="utf-8") == "old" and not aside.exists()

    with pytest.raises(FileExistsError), replacing_dir(target):
        pass
    with pytest.raises(RuntimeError), replacing_dir(target, force=True) as staging:
        (staging / "report.json").write_text("half", encoding="utf-8")
        raise RuntimeError("the write failed")
    assert (target / "report.json").read_text(encoding="utf-8") == "old"
    with replacing_dir(target, force=True) as staging:
        (staging / "report.json").write_text("new", encoding="utf-8")
    assert (target / "report.json").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    fresh = tmp_path / "fresh.incomplete"
    fresh.mkdir()
    swap_in(fresh, tmp_path / "fresh")
    assert (tmp_path / "fresh").is_dir() and not fresh.exists()


def test_sigkill_during_fund_evaluate_force_leaves_the_old_batch_whole(tmp_path: Path) -> None:
    """The monthly job replaced with --force and killed while writing reports: the old batch, byte for byte."""
    out = tmp_path / "batch"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    base = [sys.executable, "-m", "evaluator.app.cli", "fund", "evaluate", "--sample", "--out", str(out)]
    first = subprocess.run([*base, "--sample-funds", "40"], capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    assert len(old) > 40

    staging = out.with_name(out.name + STAGING_SUFFIX)
    _kill_when([*base, "--sample-funds", "3000", "--force"], env, tmp_path / "second.log",
               lambda: staging.is_dir() and sum(1 for _ in staging.iterdir()) > 50)  # reports being written
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old
    listed = run_cli("fund", "companies", str(out), "--out", str(tmp_path / "companies"))
    assert listed.exit_code == 0, listed.output  # the old batch still reads as a whole batch


def test_the_current_folder_is_never_swapped_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mine.txt").write_text("x", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for out in (".", str(tmp_path), str(tmp_path.parent)):
        with pytest.raises(FileExistsError, match="current folder"), replacing_dir(out, force=True):
            pass
    with replacing_dir("sub", force=True) as staging:  # a folder below it is fine
        (staging / "report.json").write_text("{}", encoding="utf-8")
    assert (tmp_path / "sub" / "report.json").is_file() and (tmp_path / "mine.txt").is_file()
