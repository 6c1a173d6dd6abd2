"""The GPU validation driver (benchmarks/gpu_validate.py) on CPU: its results files, deadline stop and OOM path.

A GPU machine is lent for minutes, so the driver must return what it measured even when cut short. These
tests run its ``--cpu-smoke`` mode (shrunken shapes, in one process) and its child-process handling.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gpu_results
import gpu_validate as gv  # the benchmark script under test


@pytest.fixture
def packs():
    yield
    from evaluator.domains.registry import unregister

    for name in (gv.gm.BENCH_DOMAIN, gv.OOM_DOMAIN):
        unregister(name)


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_cpu_smoke_writes_rows_stops_at_deadline_and_shows_oom_checklist(
    tmp_path: Path, tiny_model_dir: Path, packs: None
) -> None:
    out = tmp_path / "out"
    argv = ["--cpu-smoke", "--out-dir", str(out), "--checks", "env", "judge", "oom", "grpo:qwen3-8b",
            "--deadline-s", "3600", "--min-seconds", "grpo:qwen3-8b=100000", "--max-train-seconds", "0.001",
            "--steps", "3"]
    assert gv.main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(gpu_results.OUT_FILES)
    env, judge, oom, big = _rows(out)
    assert env["check"] == "env" and env["status"] == "ok" and env["versions"]["trl"]
    assert json.loads((out / "environment.json").read_text())["versions"] == env["versions"]
    # the trainer was given almost no time: it stops cleanly after its first step and still saves the adapter
    assert judge["status"] == "ok" and judge["steps"] == 1 and judge["stopped_for_time"] is True
    assert judge["finite_loss_and_grad"] and judge["lora_moved"] and judge["judge_reward_finite"]
    assert judge["judge"]["memory_bytes"] > 0 and judge["resolved"]["quantize"] == "4bit"
    assert judge["estimate_torch_bytes"] > 0 and "measured_max_allocated_bytes" not in judge  # CPU: nothing measured
    assert oom["status"] == "ok" and oom["exit_code"] == 2 and oom["simulated"]
    assert oom["advice_shown"] and not oom["traceback"]
    assert big["status"] == "skipped" and big["reason"].startswith("deadline:")
    summary = (out / "summary.txt").read_text().strip().splitlines()
    assert summary[-1] == ("gpu_validate summary: 2/3 checks ok; planner within 15% of measured for 0/0 runs; "
                           "OOM checklist shown; 1 skipped at the deadline")
    assert any(line.startswith("| judge | 8 |") for line in summary)
    with tarfile.open(out / "logs.tar.gz") as tar:
        names = tar.getnames()
    assert "logs/oom.txt" in names and "logs/judge/metrics.jsonl" in names
    assert "skipped" in (out / "driver.log").read_text()
    before = (out / "results.jsonl").read_text()
    with pytest.raises(SystemExit, match="--force"):  # results of an earlier run are never overwritten silently
        gv.main(argv)
    assert (out / "results.jsonl").read_text() == before


def test_child_past_deadline_is_stopped_with_its_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    t0 = time.monotonic()
    row = gv.run_child([sys.executable, "-c", code], 3, tmp_path / "c.log", tmp_path / "none.json")
    assert row["status"] == "killed" and "deadline" in row["reason"]
    assert time.monotonic() - t0 < 30
    pid = int(marker.read_text())
    time.sleep(0.5)
    alive = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    assert alive == "" or alive.startswith("Z"), alive  # the grandchild (e.g. a CLI the check started) went with it


def test_child_result_crash_and_min_seconds(tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    ok = gv.run_child([sys.executable, "-c", f"open({str(result)!r}, 'w').write('{{\"status\": \"ok\", \"x\": 1}}')"],
                      30, tmp_path / "ok.log", result)
    assert ok == {"status": "ok", "x": 1}
    crashed = gv.run_child([sys.executable, "-c", "print('loading'); raise SystemExit(3)"], 30,
                           tmp_path / "bad.log", tmp_path / "missing.json")
    assert crashed["status"] == "crashed" and "exit 3" in crashed["reason"] and crashed["log_tail"] == ["loading"]
    assert gv.min_seconds("grpo:qwen3-8b@256", {}) == gv.MIN_SECONDS["grpo:qwen3-8b"]
    assert gv.min_seconds("grpo:qwen3-8b@256", {"grpo:qwen3-8b": 5.0}) == 5.0
    assert gv.min_seconds("grpo:some-other-model", {}) == 60.0


def test_training_stops_after_the_step_that_leaves_too_little_time() -> None:
    from transformers import TrainerControl, TrainerState

    def one_step(deadline_in: float) -> tuple[bool, bool]:
        stop = gv.stop_at_deadline(time.time() + gv.RESERVE_S + deadline_in)
        state, control = TrainerState(global_step=1, max_steps=5), TrainerControl()
        stop.on_step_begin(None, state, control)
        time.sleep(0.3)
        stop.on_step_end(None, state, control)
        return stop.stopped, control.should_training_stop

    assert one_step(0.5) == (True, True)  # 0.3 s step, 0.2 s left before the reserve: a second step would pass it
    assert one_step(600) == (False, False)


@pytest.mark.slow
def test_isolated_checks_run_as_on_cuda_one_child_process_each(tmp_path: Path, tiny_model_dir: Path) -> None:
    """``--isolate`` takes the CUDA path (a child process per check, rows read back from the children) on CPU."""
    out = tmp_path / "out"
    assert gv.main(["--cpu-smoke", "--isolate", "--out-dir", str(out), "--checks", "env", "oom",
                    "--deadline-s", "3600"]) == 0
    env, oom = _rows(out)
    assert env["status"] == "ok" and env["imports"]["evaluator.training.grpo"] == "ok"
    assert oom["status"] == "ok" and oom["exit_code"] == 2 and oom["advice_shown"] and not oom["traceback"]
    with tarfile.open(out / "logs.tar.gz") as tar:
        assert {"logs/env.log", "logs/oom.log", "logs/oom.txt"} <= set(tar.getnames())
    assert "one child process per check" in (out / "driver.log").read_text()
