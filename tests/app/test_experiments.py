"""`evaluator experiment`: the spec's checks, and tiny experiments end to end on CPU (real TRL, real processes)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from chat_server import running_chat_server
from conftest import run_cli

from evaluator.app.experiments.results import results_schema
from evaluator.app.experiments.spec import SpecError, parse_spec
from evaluator.core.schemas import schema_problems

BASE = {"domain": "gsm8k", "model": "tiny", "data": "synthetic:steps=1", "max_steps": 2,
        "max_completion_length": 12, "per_device_train_batch_size": 4, "num_generations": 4, "save_steps": 1000,
        "eval_every": 2, "eval_limit": 4}  # in-training held-out evaluation: the runner hands training the harness


def spec_doc(**over: Any) -> dict[str, Any]:
    doc = {"name": "t", "base": dict(BASE), "eval": {"split": "test", "limit": 16}, "seeds": [0, 1],
           "baseline": "rules", "arms": {"rules": {}, "rloo": {"algorithm": "rloo"}}}
    doc.update(over)
    return doc


def test_every_bad_field_is_named_in_one_message() -> None:
    doc = spec_doc(
        base={**BASE, "learning_rate": "fast", "colour": "red", "output_dir": "x"},
        eval={"split": "test", "limit": 0, "items": 3},
        seeds=[0, 0, -1],
        baseline="nope",
        arms={"rules": {"beta": "x"}, "bad/name": {}, "r": {"algorithm": "ppo"}},
        grid={"num_generations": 4},
        extra=1,
    )
    with pytest.raises(SpecError) as err:
        parse_spec(doc, source="s.yaml")
    text = str(err.value)
    for needle in ("extra: unknown field", "base.learning_rate: expected a number", "base.colour: unknown config field",
                   "base.output_dir: set by the runner", "eval.limit", "eval.items: unknown field", "seeds:",
                   "baseline: must name one of the arms", "arms.rules.beta: expected a number", "arms.bad/name",
                   "arms.r.algorithm: one of grpo, rloo, sft", "grid.num_generations: expected a non-empty list"):
        assert needle in text, needle
    assert text.startswith("s.yaml: ")


def test_cross_field_problems_name_their_arm_and_grid_expands() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(spec_doc(arms={"rules": {}, "odd": {"num_generations": 3}}))
    assert "arms.odd: per_device_train_batch_size" in str(err.value)
    spec = parse_spec(spec_doc(grid={"num_generations": [2, 4], "learning_rate": ["1e-5", 5e-5]}))
    names = [a.name for a in spec.arms]
    assert names[:2] == ["rules", "rloo"] and len(names) == 6
    assert "num_generations=2-learning_rate=1e-5" in names
    assert spec.arm("num_generations=4-learning_rate=5e-05").overrides == {"num_generations": 4, "learning_rate": 5e-5}
    with pytest.raises(SpecError, match="SFT baseline needs its own budget"):
        parse_spec(spec_doc(baseline="s", arms={"s": {"algorithm": "sft"}, "rules": {}}))


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _results(out: Path) -> dict[str, Any]:
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert schema_problems(doc, results_schema()) == []
    return doc


@pytest.mark.slow
def test_tiny_grid_end_to_end_then_reuse_then_one_changed_arm(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "exp"
    spec = _write(tmp_path, spec_doc())
    result = run_cli("experiment", "run", str(spec), "--out", str(out), "--jobs", "2")
    assert result.exit_code == 0, result.output
    doc = _results(out)
    md = (out / "results.md").read_text(encoding="utf-8")
    assert len(re.findall(r"\| rloo( ⚠ not learning \(seeds \[[0-9, ]+\]\))? \| rloo \| 2/2 \|", md)) == 1
    for arm in doc["arms"]:  # every seed carries its run's verdict, and the arm lists the seeds that did not learn
        verdicts = {s["seed"]: s["health"]["verdict"] for s in arm["seeds"]}
        assert arm["not_learning"] == [k for k, v in verdicts.items() if v != "learning"]
    # seed 1 of rloo: its row in the seeds table and in the time-to-baseline table (runs evaluated in training)
    assert md.count("| rloo | 1 |") == 2 and "First held-out point at the baseline's final" in md
    assert [a["name"] for a in doc["arms"]] == ["rules", "rloo"] and doc["eval"]["n_items"] == 16
    for arm in doc["arms"]:
        for seed in arm["seeds"]:
            run = Path(seed["run_dir"])
            assert seed["status"] == "ok" and not seed["reused"]
            for name in ("final", "metrics.jsonl", "completions.jsonl", "run_config.yaml", "run_summary.json",
                         "eval/report.json", "eval/samples.jsonl", "job.json"):
                assert (run / name).exists(), run / name
            for line in (run / "completions.jsonl").read_text(encoding="utf-8").splitlines():
                json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in completions.jsonl"))
            assert seed["cost"]["steps"] == 2 and seed["cost"]["peak_memory_mib"] > 0
            rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
            assert [r["step"] for r in rows if "eval/accuracy" in r] == [0, 2]
    rloo_cfg = yaml.safe_load((Path(doc["arms"][1]["seeds"][0]["run_dir"]) / "run_config.yaml").read_text())
    assert rloo_cfg["resolved"]["algorithm"]["trainer"] == "RLOOTrainer"
    assert rloo_cfg["resolved"]["algorithm"]["beta"] == 0.0
    [comp] = [c for c in doc["comparisons"] if c["metric"] == "accuracy"]
    assert comp["arm"] == "rloo" and comp["seeds"] == [0, 1] and comp["n_items"] == 16
    assert comp["ci_low"] <= comp["diff"] <= comp["ci_high"] and 0 <= comp["p"] <= comp["p_adjusted"] <= 1
    assert any("PPOTrainer" in n for n in doc["notes"]) and doc["statistics"]["correction"] == "holm"

    again = run_cli("experiment", "run", str(spec), "--out", str(out))
    assert again.exit_code == 0 and again.output.count("reused") == 4 and "started" not in again.output
    assert all(s["reused"] for a in _results(out)["arms"] for s in a["seeds"])

    changed = _write(tmp_path, spec_doc(arms={"rules": {}, "rloo": {"algorithm": "rloo", "learning_rate": 1e-4}}))
    third = run_cli("experiment", "run", str(changed), "--out", str(out), "--jobs", "2")
    assert third.exit_code == 0, third.output
    assert third.output.count("reused rules") == 2 and third.output.count("started rloo") == 2

    report = run_cli("experiment", "report", str(out))
    assert report.exit_code == 0 and "rloo − rules" in report.output
    plots = run_cli("experiment", "plot", str(out))
    assert plots.exit_code == 0, plots.output
    assert {p.name for p in (out / "plots").glob("*.png")} >= {"metric_accuracy.png", "reward_curves.png"}


@pytest.mark.slow
def test_api_judge_arm_survives_a_faulty_server_and_counts_its_cost(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXPERIMENT_JUDGE_KEY", "sk-experiment-test")
    with running_chat_server(require_key="sk-experiment-test") as server:
        server.then(*["500"] * 8)  # the first step's four judgements fail twice each (one retry allowed)
        server.then("slow", "slow", delay_s=3.0)  # then two time out once, then good answers
        judge = {"kind": "api", "base_url": server.base_url, "model": "judge-model", "weight": 0.3,
                 "api_key_env": "EXPERIMENT_JUDGE_KEY", "timeout_s": 1.0, "max_retries": 1, "backoff_base_s": 0.01}
        doc = spec_doc(seeds=[0], baseline="api-judge",
                       arms={"api-judge": {"judge": judge}, "broken": {"data": str(tmp_path / "missing.jsonl")}})
        out = tmp_path / "exp"
        result = run_cli("experiment", "run", str(_write(tmp_path, doc)), "--out", str(out))
        seen = list(server.requests)
    assert result.exit_code == 1  # the broken arm failed; the experiment still finished and wrote its results
    res = _results(out)
    api, broken = res["arms"]
    assert broken["seeds"][0]["status"] == "failed" and "missing.jsonl" in broken["seeds"][0]["error"]
    assert [f["job"] for f in res["failures"]] == ["broken/seed-0"]
    cost = api["seeds"][0]["cost"]
    assert api["seeds"][0]["status"] == "ok" and cost["steps"] == 2
    assert cost["judge_bytes_sent"] == sum(int(r.headers["content-length"]) for r in seen) > 0
    assert cost["judge_calls"] >= 1 and cost["failures"] >= 1
    assert "sk-experiment-test" not in (out / "results.json").read_text(encoding="utf-8")
    assert "sk-experiment-test" not in json.dumps([json.loads(x) for x in (
        Path(api["seeds"][0]["run_dir"]) / "judge_evaluations.jsonl").read_text().splitlines()])
    assert os.environ["EXPERIMENT_JUDGE_KEY"]  # read from the environment only


def test_job_hash_ignores_placement_and_defaults_but_not_values(tmp_path: Path) -> None:
    from evaluator.app.experiments.jobs import Job
    from evaluator.training.config import TrainConfig

    def job(**over: Any) -> Job:
        cfg = TrainConfig(**{"output_dir": str(tmp_path / "a"), **over}).to_dict()
        return Job("a", 0, "grpo", cfg, {"split": "test", "limit": 16}, str(tmp_path / "a"))

    same = job(output_dir=str(tmp_path / "elsewhere"), force=True, run_name="x").digest()
    assert job().digest() == same
    legacy = job()
    legacy.config = {k: v for k, v in legacy.config.items() if k != "dynamic_sampling"}  # a field added later
    assert legacy.digest() == same
    assert job(learning_rate=1e-4).digest() != same and job(algorithm="rloo").digest() != same
    changed_eval = job()
    changed_eval.eval = {"split": "test", "limit": 17}
    assert changed_eval.digest() != same
