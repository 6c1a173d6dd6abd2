"""What NAV-outlier detection costs the fund engine on the 15,000-fund universe of ``fund_engine.py``.

Run: ``.venv/bin/python benchmarks/fund_outliers.py [--baseline CHECKOUT] [--rounds 3] [--repeat 3]``.

Two measurements on the same realistic universe (``fund_engine.py``'s: 결산 adjustments, reset-detector
funds, share classes), so one bad minute on a shared machine does not decide the answer:

1. **In process**: the detector's own steps (``find_outliers`` + ``visible`` + ``flag_outliers`` on the
   engine's prepared levels) timed beside whole engine calls in the same process, as a share of one call.
2. **A/B** (with ``--baseline``, a checkout of the code before the detector, e.g. made with
   ``git archive <commit> | tar -x -C /tmp/base``): whole ``evaluate_universe`` calls of the baseline and
   of this checkout, each in a fresh process, alternating base / new for ``--rounds`` rounds of
   ``--repeat`` calls; the figure is the median of all calls of each side.

The load average is printed before and after. Last line:
``fund_outliers funds=<n> detector_share=<%> [base=<s> new=<s> slower=<%>]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

CHILD = """
import importlib.util, sys, time
import evaluator.domains
assert evaluator.domains.__path__[0].startswith({ns!r}), evaluator.domains.__path__
spec = importlib.util.spec_from_file_location("bench", {script!r})
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
levels, meta, b = bench.build_universe({funds})
navs, adj = bench.settle(levels)
meta["family_code"] = bench.share_classes(meta.index)
small = navs.columns[:50]
bench.evaluate_universe(navs[small], meta.loc[small], benchmark=b, risk_free=0.03, adjustments=adj)
for _ in range({repeat}):
    t0 = time.perf_counter()
    bench.evaluate_universe(navs, meta, benchmark=b, risk_free=0.03, adjustments=adj)
    print(f"call {{time.perf_counter() - t0:.4f}}", flush=True)
"""


def _packages(checkout: Path) -> list[str]:
    return sorted(p.name for p in checkout.iterdir() if (p / "__init__.py").is_file())


def calls_of(checkout: Path, funds: int, repeat: int) -> list[float]:
    """Whole engine calls of ``checkout``'s code in a fresh process (``fund_engine.py``'s universe)."""
    with tempfile.TemporaryDirectory() as ns:
        pkg = Path(ns) / "evaluator"
        pkg.mkdir()
        for name in _packages(checkout):
            (pkg / name).symlink_to(checkout / name)
        code = CHILD.format(ns=str(pkg), script=str(HERE / "fund_engine.py"), funds=funds, repeat=repeat)
        env = {"PYTHONPATH": ns, "PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
        )
    return [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("call ")]


def in_process(funds: int, repeat: int) -> tuple[float, float]:
    """(median engine call, median detector time) in this process."""
    sys.path.insert(0, str(HERE))
    import fund_engine as bench

    from evaluator.domains.fund.engine.checks import FundFlags
    from evaluator.domains.fund.engine.inputs import (
        benchmark_matrix,
        benchmark_order,
        clean_meta_text,
        meta_column,
    )
    from evaluator.domains.fund.engine.outliers import find_outliers, flag_outliers, prices_of, visible
    from evaluator.domains.fund.engine.prepare import prepare

    levels, meta, b = bench.build_universe(funds)
    navs, adj = bench.settle(levels)
    meta["family_code"] = bench.share_classes(meta.index)
    small = navs.columns[:50]
    bench.evaluate_universe(navs[small], meta.loc[small], benchmark=b, risk_free=0.03, adjustments=adj)
    codes = benchmark_order([str(c) for c in navs.columns], meta, b)
    types = clean_meta_text(meta_column(meta, codes, "type"))
    groups = np.array([t if t is not None else "" for t in types], dtype=object)
    engine, detector = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        bench.evaluate_universe(navs, meta, benchmark=b, risk_free=0.03, adjustments=adj)
        engine.append(time.perf_counter() - t0)
        flags = FundFlags()
        prepared = prepare(navs, codes, None, flags, adjustments=adj, groups=groups)
        bench_levels, of_fund, _ = benchmark_matrix(b, prepared.dates, types, flags)
        t0 = time.perf_counter()
        found = find_outliers(prepared.levels, groups, bench_levels, of_fund)
        found = visible(found, prepared.dates, len(prepared.dates) - 1, prepared.dates[-1])
        flag_outliers(
            prepared.levels, prices_of(navs, codes, prepared.dates, found), prepared.dates, found, flags
        )
        detector.append(time.perf_counter() - t0)
    return statistics.median(engine), statistics.median(detector)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--funds", type=int, default=15000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before the detector")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    engine_s, detector_s = in_process(args.funds, args.repeat)
    share = 100 * detector_s / engine_s
    print(f"in process: engine call {engine_s:.2f} s, detector {detector_s * 1e3:.1f} ms ({share:.1f} %)")
    tail = ""
    if args.baseline is not None:
        base: list[float] = []
        new: list[float] = []
        here = HERE.parent
        for k in range(args.rounds):
            base += calls_of(args.baseline.resolve(), args.funds, args.repeat)
            new += calls_of(here, args.funds, args.repeat)
            print(
                f"round {k + 1}: base {', '.join(f'{c:.2f}' for c in base[-args.repeat :])} s; "
                f"new {', '.join(f'{c:.2f}' for c in new[-args.repeat :])} s"
            )
        mb, mn = statistics.median(base), statistics.median(new)
        tail = f" base={mb:.2f} new={mn:.2f} slower={100 * (mn / mb - 1):+.1f}%"
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"fund_outliers funds={args.funds} detector_share={share:.1f}%{tail}")


if __name__ == "__main__":
    main()
