"""`experiment report` after an interrupted rerun: a job folder that still holds another spec's result is stale.

The folders are laid out exactly as the runner leaves them when killed right after "started b/seed-0" of a
changed arm: seed 0's folder was emptied for the new run (no ``job.json``), seed 1's still holds the old
spec's finished record. Nothing is trained: the runner's own ``plan`` gives the hashes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from conftest import run_cli

from evaluator.app.experiments.jobs import JOB_FILE
from evaluator.app.experiments.results import results_schema
from evaluator.app.experiments.runner import collect, plan
from evaluator.app.experiments.spec import parse_spec
from evaluator.core.schemas import schema_problems

BASE = {"domain": "gsm8k", "model": "tiny", "data": "synthetic:steps=1", "max_steps": 2,
        "max_completion_length": 12, "per_device_train_batch_size": 4, "num_generations": 4}
DECLARED = {"accuracy": {"higher_is_better": True, "binary": True, "headline": True}}


def _spec(arms: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "base": dict(BASE), "eval": {"split": "test", "limit": 8}, "seeds": [0, 1],
            "baseline": "a", "arms": arms}


def _finish_job(job: Any, accuracy: list[float]) -> None:
    """A finished job as the child leaves it: ``eval/report.json`` and a ``job.json`` with the plan's hash."""
    run = Path(job.run_dir)
    (run / "eval").mkdir(parents=True, exist_ok=True)
    items = [{"id": str(i), "key": f"q{i}", "metrics": {"accuracy": v}} for i, v in enumerate(accuracy)]
    (run / "eval" / "report.json").write_text(json.dumps({"metrics": DECLARED, "items": items}), encoding="utf-8")
    record = {"hash": job.digest(), "arm": job.arm, "seed": job.seed, "kind": job.kind, "status": "ok",
              "run_dir": str(run), "metrics": {"accuracy": sum(accuracy) / len(accuracy)},
              "cost": {"seconds": 1.0, "steps": 2}}
    (run / JOB_FILE).write_text(json.dumps(record), encoding="utf-8")


def _report(out: Path, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    (out / "spec.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    result = run_cli("experiment", "report", str(out))
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert schema_problems(results, results_schema()) == []
    return results, result.output


def test_an_interrupted_rerun_never_shows_the_old_specs_seeds_as_the_changed_arm(tmp_path: Path) -> None:
    out = tmp_path / "exp"
    old = _spec({"a": {}, "b": {}})
    old_jobs = plan(parse_spec(old), out)
    for job in old_jobs:
        _finish_job(job, [1, 0, 0, 0, 0, 0, 0, 0] if job.arm == "a" else [1, 1, 0, 0, 0, 0, 0, 0])
    before, _ = _report(out, old)
    arm_b = next(a for a in before["arms"] if a["name"] == "b")
    assert arm_b["n_seeds_ok"] == 2 and abs(arm_b["mean"]["accuracy"] - 0.25) < 1e-9  # the control: it counts

    new = _spec({"a": {}, "b": {"learning_rate": 1.0}})
    new_jobs = {j.key: j for j in plan(parse_spec(new), out)}
    assert new_jobs["b/seed-1"].digest() != next(j for j in old_jobs if j.key == "b/seed-1").digest()
    seed0 = Path(new_jobs["b/seed-0"].run_dir)  # the runner empties the folder, starts the child, is killed
    shutil.rmtree(seed0)
    seed0.mkdir(parents=True)
    (seed0 / "job.log").write_text("started\n", encoding="utf-8")

    after, console = _report(out, new)
    arm_b = next(a for a in after["arms"] if a["name"] == "b")
    assert arm_b["spec"] == {"learning_rate": 1.0}
    assert [s["status"] for s in arm_b["seeds"]] == ["missing", "stale"]
    assert arm_b["n_seeds_ok"] == 0 and arm_b["mean"] == {} and arm_b["seeds"][1]["metrics"] == {}
    assert not [c for c in after["comparisons"] if c["arm"] == "b"]
    failures = {f["job"]: f for f in after["failures"]}
    assert failures["b/seed-1"]["status"] == "stale" and "another spec" in failures["b/seed-1"]["error"]
    assert failures["b/seed-0"]["status"] == "missing"
    assert "stale b/seed-1" in console and "missing b/seed-0" in console
    md = (out / "results.md").read_text(encoding="utf-8")
    assert "| b | grpo | 0/2 | — |" in md and "**stale** b/seed-1" in md
    arm_a = next(a for a in after["arms"] if a["name"] == "a")  # the unchanged arm is still its own result
    assert arm_a["n_seeds_ok"] == 2 and abs(arm_a["mean"]["accuracy"] - 0.125) < 1e-9


def test_collect_keeps_only_records_whose_hash_is_the_plans(tmp_path: Path) -> None:
    out = tmp_path / "exp"
    spec = parse_spec(_spec({"a": {}}))
    jobs = plan(spec, out)
    for job in jobs:
        _finish_job(job, [1.0, 0.0])
    record = json.loads((Path(jobs[1].run_dir) / JOB_FILE).read_text(encoding="utf-8"))
    record["hash"] = "0" * 64  # any other hash: a result of something else
    (Path(jobs[1].run_dir) / JOB_FILE).write_text(json.dumps(record), encoding="utf-8")
    (Path(jobs[0].run_dir) / JOB_FILE).write_text("{not json", encoding="utf-8")
    got = collect(spec, out)
    assert {k: r["status"] for k, r in got.items()} == {"a/seed-0": "missing", "a/seed-1": "stale"}
