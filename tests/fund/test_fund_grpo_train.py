"""`evaluator train --domain fund` and `evaluator eval --domain fund` end to end with the offline tiny model.

The tiny model cannot write fund evaluations; these tests prove the pipeline (TRL logs every fund reward,
the harness reports the fund figures through the pack's grader), not learning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import run_cli

from evaluator.core.schemas import schema_problems
from evaluator.evaluation.report import report_schema

pytestmark = pytest.mark.slow

REWARDS = ("json_format", "grade_accuracy", "reasoning_quality", "consistency")


@pytest.fixture(scope="module")
def fund_run(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fund-grpo") / "run"
    result = run_cli(
        "train", "--domain", "fund", "--model", "tiny", "--data", "sample?funds=40",
        "--max-steps", "2", "--max-completion-length", "32", "--num-generations", "2",
        "--per-device-batch", "2", "--output-dir", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_two_grpo_steps_log_every_fund_reward(fund_run: Path) -> None:
    rows = [json.loads(line) for line in (fund_run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        for name in REWARDS:
            assert 0.0 <= row[f"rewards/{name}/mean"] <= 1.0
        assert "reward" in row and "completions/mean_length" in row
    cfg = yaml.safe_load((fund_run / "run_config.yaml").read_text())
    assert cfg["domain"] == "fund"
    assert cfg["resolved"]["rewards"] == {
        "json_format": 10.0,
        "grade_accuracy": 50.0,
        "reasoning_quality": 30.0,
        "consistency": 10.0,
    }
    assert (fund_run / "final" / "adapter_config.json").exists()
    logged = [json.loads(line) for line in (fund_run / "completions.jsonl").read_text().splitlines()]
    assert logged and set(logged[0]["rewards"]) == set(REWARDS)
    assert "등급 기준" in logged[0]["prompt"]


def test_eval_reports_the_fund_figures_through_the_harness(fund_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    result = run_cli(
        "eval", "--domain", "fund", "--model", "tiny", "--adapter", str(fund_run / "final"),
        "--data", "sample?funds=60", "--limit", "8", "--max-new-tokens", "8", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert schema_problems(report, report_schema()) == []
    assert report["domain"] == "fund" and report["n_items"] == 8
    metrics = report["domain_metrics"]
    for key in ("schema_valid_rate", "grade_exact", "within_one_band"):
        assert 0.0 <= metrics[key] <= 1.0
    assert metrics["grade_exact"] == report["accuracy"]["strict"]["value"]
    assert "mean_abs_grade_error" in metrics
    assert set(report["reward_means"]) == set(REWARDS)
    assert report["primary_reward"] == "grade_accuracy"
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(samples) == 8
    assert all(isinstance(s["details"]["schema_valid"], bool) for s in samples)
    assert {s["gold"] for s in samples} <= {"1", "2", "3", "4", "5"}
