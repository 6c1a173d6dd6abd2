"""Time an older checkout's fund engine the way ``fund_engine.py --repeat`` times today's.

The ≤ 10 % goal compares today's engine with the one before 결산 adjustment and share classes. The old
``fund_engine.py`` times one call, which in a fresh process also pays the kernel's page faults for the
metrics' buffers, so this runs the old script's own universe and engine for several calls and prints the
same figures. Usage (``6002121`` is the last commit before that work)::

    git worktree add --detach /tmp/old-engine 6002121
    python benchmarks/fund_engine_baseline.py /tmp/old-engine --repeat 3

Last line: ``fund_engine_baseline funds=<n> seconds=<median>``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGES = ("app", "domains", "evaluation", "methodology", "training")

RUN = """
import statistics, sys, time, importlib.util
import evaluator.domains
assert evaluator.domains.__path__[0].startswith({ns!r}), evaluator.domains.__path__
spec = importlib.util.spec_from_file_location("old_bench", {script!r})
old = importlib.util.module_from_spec(spec); spec.loader.exec_module(old)
navs, meta, bench = old.build_universe({funds})
small = navs.iloc[:, :50]
old.evaluate_universe(small, meta.loc[small.columns], benchmark=bench, risk_free=0.03)
calls = []
for _ in range({repeat}):
    t0 = time.perf_counter()
    old.evaluate_universe(navs, meta, benchmark=bench, risk_free=0.03)
    calls.append(time.perf_counter() - t0)
print("engine calls: " + ", ".join(f"{{c:.2f}}" for c in calls) + " s (first, then warm)")
print(f"fund_engine_baseline funds={funds} seconds={{statistics.median(calls):.2f}}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("checkout", type=Path, help="a checkout of the baseline commit")
    parser.add_argument("--funds", type=int, default=15000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    script = checkout / "benchmarks" / "fund_engine.py"
    if not script.is_file():
        sys.exit(f"{checkout} has no benchmarks/fund_engine.py: is it a checkout of the project?")
    with tempfile.TemporaryDirectory() as ns:
        pkg = Path(ns) / "evaluator"
        pkg.mkdir()
        for name in PACKAGES:
            (pkg / name).symlink_to(checkout / name)
        code = RUN.format(ns=str(pkg), script=str(script), funds=args.funds, repeat=max(1, args.repeat))
        env = {"PYTHONPATH": ns, "PATH": "/usr/bin:/bin"}
        sys.exit(subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode)


if __name__ == "__main__":
    main()
