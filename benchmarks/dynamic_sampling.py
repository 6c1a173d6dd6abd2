"""Dynamic sampling against its baseline on CPU: steps and seconds to the baseline's final held-out accuracy.

Two GRPO arms from one shared SFT warm start of ``tiny-demo-2l`` (the demo's student) on easy synthetic GSM8K:
``rules`` and ``dynamic`` (the same, with prompts whose last group had no reward spread rested for 2 steps),
three seeds, held-out accuracy every 4 steps on 100 test problems. ``results.json`` records per seed the
first step and second at which each arm reached the baseline's final accuracy (``to_baseline_accuracy``).
The last line is the figure. Usage: ``python benchmarks/dynamic_sampling.py [OUT]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import yaml

SPEC = {
    "name": "dynamic-sampling-cpu",
    "base": {
        "domain": "gsm8k", "data": "synthetic:steps=1,max=6", "lora": False, "max_steps": 24,
        "learning_rate": 5e-5, "num_generations": 4, "per_device_train_batch_size": 8,
        "max_completion_length": 48, "save_steps": 100000, "eval_every": 4, "eval_limit": 100,
        "rewards": ["correctness", "strict_format", "soft_format", "xmlcount"],
    },
    "warm_start": {"sft": {"max_steps": 300, "learning_rate": 2e-3, "lr_scheduler_type": "constant",
                           "max_seq_length": 256, "eval_every": None}},
    "eval": {"split": "test", "limit": 100, "batch_size": 50},
    "seeds": [0, 1, 2],
    "baseline": "rules",
    "arms": {"rules": {}, "dynamic": {"dynamic_sampling": 2}},
}  # fmt: skip


def main() -> None:
    from typer.testing import CliRunner

    from evaluator.app.cli import app
    from evaluator.models.loading import ensure_tiny

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/bench-dynamic-sampling")
    spec = {**SPEC, "base": {**SPEC["base"], "model": str(ensure_tiny("tiny-demo-2l"))}}
    out.mkdir(parents=True, exist_ok=True)
    spec_path = out.parent / f"{out.name}.yaml"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, ["experiment", "run", str(spec_path), "--out", str(out), "--jobs", "1"])
    print(result.output)
    print(f"experiment wall time: {time.perf_counter() - t0:.0f} s")
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    rows = {}
    for arm in doc["arms"]:
        hits = [s.get("to_baseline_accuracy") or {} for s in arm["seeds"]]
        steps = [h["step"] for h in hits if h.get("step") is not None]
        secs = [h["seconds"] for h in hits if h.get("seconds") is not None]
        rows[arm["name"]] = (len(steps), statistics.median(steps) if steps else None,
                             statistics.median(secs) if secs else None, arm["mean"].get("accuracy"))
        print(f"{arm['name']}: reached the baseline's final accuracy in {len(steps)}/{len(hits)} seeds; "
              f"median step {rows[arm['name']][1]}, median seconds {rows[arm['name']][2]}; "
              f"final accuracy {rows[arm['name']][3]}")
    d, b = rows["dynamic"], rows["rules"]
    print(f"dynamic_sampling seeds_reached={d[0]}/3 median_step={d[1]} baseline_median_step={b[1]} "
          f"median_seconds={d[2]} baseline_median_seconds={b[2]} accuracy={d[3]} baseline_accuracy={b[3]}")


if __name__ == "__main__":
    main()
