"""`evaluator demo --quick`: the README's main command, end to end, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.slow


def test_demo_quick_runs_every_stage(tmp_path: Path, tiny_model_dir: Path) -> None:
    from evaluator.core.schemas import schema_problems
    from evaluator.evaluation.report import report_schema

    out = tmp_path / "demo"
    result = run_cli("demo", "--quick", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "demo summary" in result.output and "국내주식형" in result.output

    summary = json.loads((out / "demo_summary.json").read_text())
    assert summary["quick"] is True and summary["grpo_steps"] == 2 and summary["sft_steps"] == 10
    assert summary["verdict"] in result.output.replace("\n", " ") or summary["verdict"][:40] in result.output
    assert summary["verdict"].startswith(("GRPO gain shown", "no gain shown"))
    stages = summary["stage_seconds"]  # where the time went, so a slow run can be read stage by stage
    assert list(stages) == ["model", "fund", "sft", "eval_before", "grpo", "eval_after", "plots"]
    assert min(stages.values()) >= 0 and sum(stages.values()) <= summary["seconds"] + 0.5
    assert stages["sft"] > 0 and stages["grpo"] > 0
    assert "time by stage: model" in result.output and summary["seed"] == 0
    counts = summary["status_counts"]
    assert counts["ok"] > 0 and counts["error"] > 0  # the sample universe holds deliberately broken funds
    assert len(list((out / "fund").glob("*.json"))) == sum(counts.values()) + 1  # + summary.json
    for side in ("before", "after"):
        report = json.loads((out / "eval" / side / "report.json").read_text())
        assert schema_problems(report, report_schema()) == []
        assert report["n_items"] == 12
    assert (out / "sft" / "final" / "config.json").exists()  # full-weight warm start
    assert (out / "grpo" / "final" / "config.json").exists()
    pngs = summary["artifacts"]["plots"]
    assert len(pngs) >= 4 and all(Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)

    again = run_cli("demo", "--quick", "--out", str(out))
    assert again.exit_code == 2 and "--force" in again.output  # never silently overwrites a finished demo
