"""Run-health verdicts: metric histories of every kind, the console, the viewer, the experiment results, the demos."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from test_run_pages import runs_web_app, signed_in

from evaluator.app.experiments.report import render_markdown
from evaluator.app.experiments.results import build_results, results_schema
from evaluator.app.experiments.runner import plan
from evaluator.app.experiments.spec import parse_spec
from evaluator.app.web.run_pages.router import HEALTH_LABELS
from evaluator.core.schemas import schema_problems
from evaluator.training.health import VERDICTS, run_health


def _rows(n: int, **series: Any) -> list[dict[str, Any]]:
    """``n`` logged steps; each keyword is a constant or a function of the step index."""
    return [{"step": i + 1, "loss": 0.1, **{k.replace("__", "/"): v(i) if callable(v) else v for k, v in series.items()}}
            for i in range(n)]


LEARNING = _rows(12, reward=lambda i: 0.3 + 0.02 * i, frac_reward_zero_std=0.25, grad_norm=0.8,
                 completions__clipped_ratio=0.1, rewards__soft_format__mean=0.6)


@pytest.mark.parametrize(
    ("rows", "held_out", "verdict", "flags"),
    [
        (LEARNING, None, "learning", []),
        (_rows(6, reward=0.0, frac_reward_zero_std=1.0, grad_norm=0.0), None, "no_signal", ["no_signal"]),
        (_rows(6, reward=0.1, frac_reward_zero_std=0.95, grad_norm=0.3), None, "no_signal", ["no_signal"]),
        (_rows(6, reward=0.2, frac_reward_zero_std=0.3, grad_norm=0.0), None, "no_signal", ["no_signal"]),
        # the fund arm that fell into garbage: format 71.9 % → 0, reward 0 from step 2
        (_rows(8, reward=lambda i: 0.6 if i < 2 else 0.0, rewards__json_format__mean=lambda i: 0.719 if i < 2 else 0.0,
               frac_reward_zero_std=lambda i: 0.2 if i < 2 else 1.0, grad_norm=lambda i: 0.5 if i < 2 else 0.0),
         None, "collapsed", ["collapsed"]),
        (_rows(8, reward=lambda i: 2.0 if i < 2 else 0.01, frac_reward_zero_std=0.2, grad_norm=1.0), None,
         "collapsed", ["collapsed"]),
        (_rows(8, reward=0.0, frac_reward_zero_std=1.0, grad_norm=0.0, completions__clipped_ratio=1.0), None,
         "clipped", ["clipped", "no_signal"]),
        (_rows(8, reward=0.4, frac_reward_zero_std=0.2, grad_norm=1.0, completions__clipped_ratio=lambda i: 0.1 if i < 4 else 0.8),
         None, "clipped", ["clipped"]),
        (LEARNING, {"collapse_events": [{"step": 8, "drop": 0.3}]}, "collapsed", ["collapsed"]),
        # NaN rows (a reward that abstained) and too few steps for a trend: judged on what is there
        (_rows(2, reward=math.nan, frac_reward_zero_std=0.4, grad_norm=0.7), None, "learning", []),
        ([], None, "learning", []),
    ],
)
def test_verdicts_on_metric_histories(rows, held_out, verdict, flags) -> None:  # type: ignore[no-untyped-def]
    health = run_health(rows, held_out)
    assert health["verdict"] == verdict and health["flags"] == flags, health
    assert health["verdict"] in VERDICTS and health["reason"]
    json.dumps(health, allow_nan=False)  # the numbers are plain JSON


def test_the_numbers_behind_a_verdict_are_the_logged_figures() -> None:
    rows = _rows(8, reward=lambda i: i / 10, frac_reward_zero_std=lambda i: 0.5 if i % 2 else 1.0, grad_norm=lambda i: 0.0 if i < 2 else 1.0)
    rows.insert(0, {"step": 0, "eval/accuracy": 0.2})  # a held-out row without loss/reward is not a step
    numbers = run_health(rows)["numbers"]
    assert numbers["steps"] == 8 and numbers["frac_reward_zero_std_mean"] == 0.75
    assert numbers["zero_grad_norm_share"] == 0.25
    assert numbers["reward_first"] == pytest.approx(0.05) and numbers["reward_last"] == pytest.approx(0.65)


def test_every_verdict_has_a_korean_label() -> None:
    assert set(HEALTH_LABELS) == set(VERDICTS)


def _job_record(job: Any, health: dict[str, Any], accuracy: list[float], fmt: list[float]) -> dict[str, Any]:
    run = Path(job.run_dir)
    (run / "eval").mkdir(parents=True, exist_ok=True)
    declared = {"accuracy": {"higher_is_better": True, "binary": True, "headline": True},
                "format_rate": {"higher_is_better": True, "binary": True, "headline": False}}
    items = [{"id": str(i), "key": f"q{i}", "metrics": {"accuracy": a, "format_rate": f}}
             for i, (a, f) in enumerate(zip(accuracy, fmt, strict=True))]
    (run / "eval" / "report.json").write_text(json.dumps({"metrics": declared, "items": items}), encoding="utf-8")
    return {"hash": job.digest(), "arm": job.arm, "seed": job.seed, "kind": job.kind, "status": "ok",
            "run_dir": str(run), "metrics": {}, "cost": {"seconds": 1.0, "steps": 2}, "health": health}


def test_experiments_mark_arms_that_did_not_learn_and_compare_every_declared_metric(tmp_path: Path) -> None:
    spec_doc = {"name": "t", "base": {"domain": "gsm8k", "model": "tiny", "data": "synthetic", "max_steps": 2,
                                      "max_completion_length": 12, "per_device_train_batch_size": 4,
                                      "num_generations": 4},
                "eval": {"split": "test", "limit": 8}, "seeds": [0, 1], "baseline": "a", "arms": {"a": {}, "b": {"learning_rate": 1.0}}}
    spec = parse_spec(spec_doc)
    learning = run_health(LEARNING)
    collapsed = run_health(_rows(8, reward=lambda i: 0.6 if i < 2 else 0.0,
                                 rewards__json_format__mean=lambda i: 0.7 if i < 2 else 0.0))
    records = {}
    for job in plan(spec, tmp_path):
        if job.arm == "a":
            records[job.key] = _job_record(job, learning, [1, 0, 0, 0, 1, 0, 0, 0], [1] * 8)
        else:  # accuracy barely moves, the format rate falls apart: only the second metric shows it
            records[job.key] = _job_record(job, collapsed, [1, 0, 0, 0, 0, 0, 0, 0], [0] * 8)
    results = build_results(spec, records, "spec")
    assert schema_problems(results, results_schema()) == []
    arm_a, arm_b = results["arms"]
    assert arm_a["not_learning"] == [] and arm_b["not_learning"] == [0, 1]
    assert arm_b["seeds"][0]["health"]["verdict"] == "collapsed"
    fmt = next(c for c in results["comparisons"] if c["metric"] == "format_rate")
    assert fmt["diff"] == pytest.approx(-1.0) and fmt["ci_high"] < 0
    md = render_markdown(results)
    assert "b ⚠ not learning (seeds [0, 1])" in md and "| b | format_rate | 0 | 1 | -1 " in md
    assert "collapsed: the format signal fell from 0.70 to 0.00" in md


def test_the_viewer_shows_a_run_that_did_not_learn(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    for name, rows in (("flat", _rows(3, reward=0.0, frac_reward_zero_std=1.0, grad_norm=0.0)), ("good", LEARNING)):
        run = root / name
        run.mkdir(parents=True)
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        (run / "run_config.yaml").write_text("domain: gsm8k\nmodel: tiny\n", encoding="utf-8")
        (run / "run_summary.json").write_text(json.dumps({"global_step": len(rows), "health": run_health(rows)}),
                                              encoding="utf-8")
    app, keys = runs_web_app(root, tmp_path / "e.db")
    admin = signed_in(app, keys["admin"])
    listing = admin.get("/runs").text
    assert listing.count(HEALTH_LABELS["no_signal"]) == 1 and HEALTH_LABELS["learning"] not in listing
    page = admin.get("/runs/view/runs/flat").text
    assert 'id="run-health"' in page and HEALTH_LABELS["no_signal"] in page and "zero advantage" in page
    assert HEALTH_LABELS["learning"] in admin.get("/runs/view/runs/good").text


def test_the_demos_name_a_completion_cap_below_what_answers_need_first() -> None:
    from evaluator.app.demo import FULL, verdict
    from evaluator.app.fund_demo import FUND_QUICK, fund_verdict

    comparison = {"metrics": {"grade_exact": {"delta": 0.0, "ci95": [-0.1, 0.1]}}}
    before = {"metrics": {"schema_valid": {"value": 0.0}}, "n_items": 6}
    grpo = {"global_step": 1, "frac_reward_zero_std_mean": 1.0, "length_budget": {"answer_p95": 173}}
    line = fund_verdict(comparison, before, grpo, FUND_QUICK)
    assert "cap of 24 new tokens is below the 173 tokens" in line and "warm start" not in line
    roomy = {**grpo, "length_budget": {"answer_p95": 20}}
    assert "warm start writes a schema-valid evaluation only 0%" in fund_verdict(comparison, before, roomy, FUND_QUICK)
    line = verdict(0.4, 0.0, (-0.05, 0.05), 10, FULL, cut_short=True, answer_tokens=FULL.max_new_tokens + 1)
    assert f"cap of {FULL.max_new_tokens} new tokens" in line and "time cap" not in line
    assert "time cap" in verdict(0.4, 0.0, (-0.05, 0.05), 10, FULL, cut_short=True, answer_tokens=1)
