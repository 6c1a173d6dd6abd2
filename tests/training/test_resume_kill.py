"""A real kill: SIGKILL a training subprocess between checkpoints, resume, and find one row per step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _steps(path: Path) -> list[int]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(int(json.loads(line)["step"]))
        except (ValueError, KeyError, TypeError):
            continue  # a line torn by the kill
    return out


def _last_checkpoint(out: Path) -> int:
    done = [
        int(p.name.split("-")[1]) for p in out.glob("checkpoint-*") if (p / "trainer_state.json").exists()
    ]
    return max(done, default=0)


def _train_args(out: Path, max_steps: int, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "evaluator.app.cli",
        "train",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic",
        "--max-completion-length",
        "16",
        "--max-steps",
        str(max_steps),
        "--save-steps",
        "3",
        "--output-dir",
        str(out),
        *extra,
    ]


def test_sigkill_then_resume_leaves_one_row_per_step(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with open(tmp_path / "first.log", "w") as log:
        proc = subprocess.Popen(_train_args(out, 500), stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 400
    try:
        while time.monotonic() < deadline:
            metrics = out / "metrics.jsonl"
            ckpt = _last_checkpoint(out)
            if ckpt >= 3 and metrics.exists() and max(_steps(metrics), default=0) >= ckpt + 1:
                break  # rows past the last checkpoint exist: the duplicate-row situation
            assert proc.poll() is None, (tmp_path / "first.log").read_text()[-2000:]
            time.sleep(0.05)
        else:
            pytest.fail("training never got past a checkpoint in time")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

    killed_rows = _steps(out / "metrics.jsonl")
    ckpt = _last_checkpoint(out)
    killed_at = max(killed_rows)
    assert killed_at > ckpt
    target = killed_at + 2
    resumed = subprocess.run(
        _train_args(out, target, "--resume"), capture_output=True, text=True, env=env, timeout=400
    )
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]

    assert _steps(out / "metrics.jsonl") == list(range(1, target + 1))  # one row per step, in order
    aside = _steps(out / "metrics.jsonl.before-resume")
    assert aside and min(aside) == ckpt + 1 and set(aside) <= set(range(ckpt + 1, killed_at + 1))
    completions = _steps(out / "completions.jsonl")
    assert completions == sorted(completions) and len(completions) == len(set(completions)) * 4
    assert set(_steps(out / "completions.jsonl.before-resume")) <= set(range(ckpt + 1, killed_at + 1))

    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["resume"]["checkpoint_step"] == ckpt
    assert summary["resume"]["rows_set_aside"]["metrics.jsonl"] == len(aside)
    best = json.loads((out / "best_adapter" / "best.json").read_text())
    by_step = {
        json.loads(line)["step"]: json.loads(line)
        for line in (out / "metrics.jsonl").read_text().splitlines()
    }
    assert best["value"] == by_step[best["step"]]["reward"]  # the best adapter agrees with the rows kept
    if (out / "best_adapter.before-resume").exists():  # it came from weights the resumed run never had
        dropped = json.loads((out / "best_adapter.before-resume" / "best.json").read_text())
        assert dropped["step"] > ckpt
        assert any("best_adapter.before-resume" in n for n in summary["resume"]["notes"])
