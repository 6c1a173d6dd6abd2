"""GRPO runs with an LLM judge as one of the rewards: an HTTP API judge and an on-prem local judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from chat_server import running_chat_server
from conftest import run_cli

pytestmark = pytest.mark.slow

SECRET = "sk-test-never-log-this-0123456789"


def _train_with(tmp_path: Path, judge: dict) -> Path:
    out = tmp_path / "run"
    cfg = tmp_path / "run.yaml"
    cfg.write_text(yaml.safe_dump({"judge": judge, "max_completion_length": 16}))
    result = run_cli(
        "train", "--config", str(cfg), "--domain", "gsm8k", "--model", "tiny", "--data", "synthetic",
        "--max-steps", "2", "--output-dir", str(out),
    )
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    return out


def _metrics(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_train_with_api_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", SECRET)
    with running_chat_server(require_key=SECRET) as server:
        server.behave("ok", score=4)
        server.then("500", "429")  # the first calls fail and are retried; training goes on
        out = _train_with(tmp_path, {
            "kind": "api", "base_url": server.base_url, "model": "judge-model", "api_key_env": "JUDGE_API_KEY",
            "weight": 0.5, "concurrency": 2, "timeout_s": 5, "backoff_base_s": 0.01,
        })
        assert server.request_count >= 3
        assert all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in server.requests)
    rows = _metrics(out)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert row["rewards/judge/mean"] == pytest.approx(0.8)  # 4 on the 0–5 scale
        assert "judge/failures" in row
    log = (out / "judge_evaluations.jsonl").read_text()
    assert log.count("\n") >= 8 and SECRET not in log
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".yaml", ".md", ".txt"):
            assert SECRET not in path.read_text(encoding="utf-8", errors="ignore"), path
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["rewards"]["judge"] == 0.5 and summary["judge"]["calls"] >= 8


def test_train_with_local_judge(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = _train_with(tmp_path, {"kind": "local", "model": "tiny", "weight": 0.3, "prefill": True,
                                 "max_new_tokens": 8, "batch_size": 8})
    rows = _metrics(out)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        mean = row["rewards/judge/mean"]
        assert mean is not None and 0.0 <= mean <= 1.0
    lines = [json.loads(line) for line in (out / "judge_evaluations.jsonl").read_text().splitlines()]
    assert len(lines) >= 8 and all("prompt" in line and "latency_s" in line for line in lines)
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["judge"]["memory_bytes"] > 0
