"""What the experiment runner adds beyond the runs themselves (goal: at most 5 % of the experiment's time).

Runs a tiny experiment (the test-suite ``tiny`` model, 2 arms × 2 seeds, a few GRPO steps, a 16-item
evaluation; ``--jobs 1`` so nothing overlaps) through the same library calls as ``evaluator experiment run``
and splits its wall time into
- the runs: each job process from start to exit (interpreter start and imports, training, evaluation,
  writing its record) — what running ``evaluator train`` and ``evaluator eval`` by hand would cost at least
  (by hand there are two processes, so two import phases, per arm and seed);
- the runner: everything else — reading the spec, planning and hashing, reuse checks, starting processes and
  noticing they ended (it polls every 0.2 s), the statistics, ``results.json`` and ``results.md``.
The last line is the runner's share of the wall time. A second call of the same experiment (every job
reused) is timed too: that is pure runner work.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

SPEC = {
    "name": "overhead",
    "base": {"domain": "gsm8k", "model": "tiny", "data": "synthetic:steps=1", "max_steps": 4,
             "max_completion_length": 16, "per_device_train_batch_size": 4, "num_generations": 4, "save_steps": 1000},
    "eval": {"split": "test", "limit": 16},
    "seeds": [0, 1],
    "baseline": "rules",
    "arms": {"rules": {}, "rloo": {"algorithm": "rloo"}},
}


def main() -> None:
    from evaluator.app.experiments.runner import finish, run_experiment
    from evaluator.app.experiments.spec import load_spec
    from evaluator.models.loading import ensure_tiny

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    ensure_tiny("tiny")
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="exp-overhead-"))
    spec_path = root / "spec.yaml"
    root.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    out = root / "exp"
    t0 = time.perf_counter()
    spec = load_spec(spec_path)
    records = run_experiment(spec, out, jobs=1, log=lambda _m: None)
    finish(spec, out, records, spec_path.read_text(encoding="utf-8"))
    wall = time.perf_counter() - t0
    runs = sum(r.get("process_seconds", 0.0) for r in records.values())
    inside = sum(r.get("wall_seconds", 0.0) for r in records.values())
    t1 = time.perf_counter()
    spec = load_spec(spec_path)
    again = run_experiment(spec, out, jobs=1, log=lambda _m: None)
    finish(spec, out, again, spec_path.read_text(encoding="utf-8"))
    reuse_wall = time.perf_counter() - t1
    failed = [k for k, r in records.items() if r.get("status") != "ok"]
    print(f"jobs: {len(records)} ({len(failed)} failed), wall {wall:.2f} s, job processes {runs:.2f} s "
          f"(of which interpreter start + imports {runs - inside:.2f} s), runner {wall - runs:.2f} s")
    print(f"second call, every job reused: {reuse_wall:.2f} s ({sum(bool(r.get('reused')) for r in again.values())} reused)")
    print(f"experiment_overhead runner_share={(wall - runs) / wall:.4f} (goal <= 0.05)")


if __name__ == "__main__":
    main()
