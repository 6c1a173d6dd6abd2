"""One real comparison on CPU with the project's tiny models: rules vs a local judge vs RLOO vs SFT-only.

Builds ``tiny-demo-2l`` (the demo's student) and the test-suite ``tiny`` model (the judge: 2,048 positions,
room for the judge prompt; it is an untrained model, so its scores are noise — what the arm measures is a
local judge's cost, not its quality), writes the spec below with their paths, and runs
``evaluator experiment run SPEC --out OUT --jobs 2``. Every arm starts from one shared SFT warm start;
SFT-only continues SFT for the baseline's training time of the same seed. The last line is the headline
comparison. Usage: ``python benchmarks/experiments.py [OUT]`` (default ``runs/bench-experiments``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import yaml

SPEC = {
    "name": "reward-approaches-cpu",
    "base": {
        "domain": "gsm8k", "data": "synthetic:steps=1,max=6", "lora": False, "max_steps": 30,
        "learning_rate": 5e-5, "num_generations": 8, "per_device_train_batch_size": 16,
        "max_completion_length": 48, "save_steps": 100000,
        "rewards": ["correctness", "strict_format", "soft_format", "xmlcount"],
    },
    "warm_start": {"sft": {"max_steps": 300, "learning_rate": 2e-3, "lr_scheduler_type": "constant",
                           "max_seq_length": 256}},
    "eval": {"split": "test", "limit": 200, "batch_size": 50},
    "seeds": [0, 1, 2],
    "baseline": "rules",
    "arms": {
        "rules": {},
        "local-judge": {"judge": {"kind": "local", "weight": 0.3, "prefill": True, "max_new_tokens": 8,
                                  "batch_size": 32}},
        "rloo": {"algorithm": "rloo"},
        "sft-only": {"algorithm": "sft"},
    },
}
GRPO_SHORT = {"max_steps": 12, "num_generations": 4, "per_device_train_batch_size": 8}
"""Every RL arm's budget: 12 steps of 2 prompts × 4 completions. Set per arm rather than in ``base`` so the
warm start (whose hash covers the base fields it inherits) stays the one measured with the base above. On an
idle 2-core machine the whole run should take ~10 minutes (the warm start ~2.5 of them); on the shared machine
of the recorded run (load average 14–24) it took 53 minutes, 31 of them the warm start."""


def main() -> None:
    from typer.testing import CliRunner

    from evaluator.app.cli import app
    from evaluator.models.loading import ensure_tiny

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/bench-experiments")
    student, judge = ensure_tiny("tiny-demo-2l"), ensure_tiny("tiny")
    spec = dict(SPEC)
    spec["base"] = {**SPEC["base"], "model": str(student)}
    arms = {**SPEC["arms"], "local-judge": {"judge": {**SPEC["arms"]["local-judge"]["judge"], "model": str(judge)}}}
    spec["arms"] = {name: ({**GRPO_SHORT, **over} if over.get("algorithm") != "sft" else over)
                    for name, over in arms.items()}
    out.mkdir(parents=True, exist_ok=True)
    spec_path = out.parent / f"{out.name}.yaml"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, ["experiment", "run", str(spec_path), "--out", str(out), "--jobs", "2"])
    print(result.output)
    print(f"experiment wall time: {time.perf_counter() - t0:.0f} s")
    print((out / "results.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
