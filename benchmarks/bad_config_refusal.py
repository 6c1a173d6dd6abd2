"""How fast a bad TRL value is refused: ``evaluator train --loss-type dapoo`` (and two more) end to end.

Run: ``.venv/bin/python benchmarks/bad_config_refusal.py [--repeats 5]``. Each command runs in a fresh process,
as a user's would. The first call on a machine (or after a TRL upgrade) reads TRL's config classes once
(importing TRL, ~5 s) and caches their schema; every later refusal reads the cache. Prints each command's
median wall time over ``--repeats`` runs after that first call; the last line is the figure (the slowest median).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

BAD = (
    ("--loss-type", "dapoo"),
    ("--scale-rewards", "sometimes"),
    ("--optim", "adamw_bogus"),
    ("--trl", "foo=1"),
    ("--trl", "num_iterations=x"),
)


def once(flags: tuple[str, ...], folder: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "evaluator.app.cli", "train", "--model", "tiny", *flags,
                           "--output-dir", os.path.join(folder, "run")], capture_output=True, text=True, timeout=300)  # fmt: skip
    seconds = time.perf_counter() - t0
    if proc.returncode != 2 or os.path.exists(os.path.join(folder, "run")):
        raise SystemExit(f"{flags}: expected exit 2 and no folder, got {proc.returncode}: {proc.stderr[-500:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average at start {os.getloadavg()[0]:.2f}; {len(os.sched_getaffinity(0))} usable cores")
    with tempfile.TemporaryDirectory() as folder:
        first = once(BAD[0], folder)
        print(f"first call (reads TRL's schema if not cached yet): {first:.2f} s")
        medians = []
        for flags in BAD:
            times = [once(flags, folder) for _ in range(args.repeats)]
            medians.append(statistics.median(times))
            print(f"{' '.join(flags):32} median {medians[-1]:.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    print(f"bad TRL value refused (exit 2, no folder) in {max(medians):.2f} s (slowest median of {len(BAD)} cases; "
          f"load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
