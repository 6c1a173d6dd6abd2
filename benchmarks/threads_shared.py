"""Thread settings on a shared CPU: tiny-model training steps with and without another job holding one core.

Run: ``.venv/bin/python benchmarks/threads_shared.py [--steps 30]``. Each setting runs in a fresh process (the
thread pool is fixed when torch starts): torch's default (one thread per usable core, idle threads spinning),
the same count with ``OMP_WAIT_POLICY=PASSIVE``, one thread, and the CLI's default (``configure_threads``:
free cores from affinity and load average, passive waiting). "busy" runs start a pure-Python busy loop per
``--busy`` core first, as another job on the machine would. The workload is the project's tiny model: forward
and backward of a 4 × 96-token batch, then a 16-token greedy generation (what a GRPO step does on CPU).
The last line is the figure: busy-machine seconds of torch's default over the CLI default.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time

CHILD = r"""
import json, os, sys, time
from evaluator.core.threads import configure_threads
if os.environ.get("BENCH_AUTO"):
    configure_threads(None)
import torch
from evaluator.models.loading import ensure_tiny
from transformers import AutoModelForCausalLM
path = ensure_tiny("tiny")
model = AutoModelForCausalLM.from_pretrained(path)
ids = torch.randint(5, 200, (4, 96))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
def step():
    model.train()
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward(); opt.step(); opt.zero_grad()
    model.eval()
    with torch.no_grad():
        model.generate(ids[:, :32], max_new_tokens=16, do_sample=False, pad_token_id=0)
step()
t0 = time.perf_counter()
for _ in range(int(sys.argv[1])):
    step()
print(json.dumps({"seconds": time.perf_counter() - t0, "threads": torch.get_num_threads()}))
"""


def _busy() -> None:
    while True:
        pass


def run(steps: int, env_over: dict[str, str], busy: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS")}
    env.update(env_over)
    hogs = [mp.Process(target=_busy, daemon=True) for _ in range(busy)]
    for h in hogs:
        h.start()
    try:
        time.sleep(0.5 if busy else 0)
        out = subprocess.run([sys.executable, "-c", CHILD, str(steps)], env=env, capture_output=True, text=True,
                             timeout=1800, check=True)  # fmt: skip
    finally:
        for h in hogs:
            h.kill()
            h.join()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--busy", type=int, default=1, help="Cores held by another job in the busy runs.")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"usable cores {cores}; load average at start {os.getloadavg()[0]:.2f}; {args.steps} steps per setting")
    settings = {
        "torch default": {},
        f"{cores} threads, PASSIVE": {"OMP_NUM_THREADS": str(cores), "OMP_WAIT_POLICY": "PASSIVE"},
        "1 thread": {"OMP_NUM_THREADS": "1"},
        "CLI default": {"BENCH_AUTO": "1"},
    }
    results = {}
    for busy in (0, args.busy):
        for name, env in settings.items():
            r = run(args.steps, env, busy)
            results[name, busy] = r["seconds"]
            print(f"{'busy' if busy else 'idle'} ({busy} core held) {name:22} {r['threads']} threads  "
                  f"{r['seconds']:.2f} s  load {os.getloadavg()[0]:.2f}")  # fmt: skip
    default, ours = results["torch default", args.busy], results["CLI default", args.busy]
    idle_default, idle_ours = results["torch default", 0], results["CLI default", 0]
    print(
        f"busy machine: torch default {default:.2f} s vs CLI default {ours:.2f} s ({default / ours:.1f}× faster); "
        f"idle: {idle_default:.2f} s vs {idle_ours:.2f} s"
    )


if __name__ == "__main__":
    main()
