"""Benchmark: a grade history of 15,000 funds × 60 month-ends, against a loop of single-date calls.

The universe has 8.5 years of business-day NAVs (so every one of the 60 month-ends has full 3- and 5-year
windows), per-유형 benchmarks, yearly 결산 with a 분배금 column for two thirds of the funds and share-class
portfolios (the shapes of ``benchmarks/fund_engine.py``). ``run_history`` grades all month-ends (the
cross-date path: shared preparation, one pass of window sums, the grader on stacked dates; plus the
single-date engine at the last date for the ``latest/`` reports, on the metrics already measured); in the
same run a loop of single-date ``evaluate_loaded`` calls (what re-running ``fund evaluate --as-of`` per
date costs, minus the file reading) is timed on ``--loop-dates`` dates and
extrapolated to all of them. The cores may be shared and their load changes during a run, so the two are
interleaved (a single-date call, a history run, a call, …); the history is the fastest of ``--repeats``
runs (the same work each time), the loop is the mean of its calls × the number of dates (the calls are
spread evenly over the dates, and a later date costs more: more rows before it).
Peak memory is the process's maximum resident set size. The load average is printed, since the machine's
cores may be shared.

Last line: ``fund_history funds=<n> dates=<d> seconds=<s> loop_seconds=<s> speedup=<x> peak_mib=<m>``.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fund_engine import TYPES, VOLS, settle, share_classes

from evaluator.domains.fund.data.loaders import Universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.history.run import as_of_dates, parse_month, run_history
from evaluator.domains.fund.rubric import default_rubric


def build(funds: int, years: float, end: str, seed: int = 0) -> Universe:
    rng = np.random.default_rng(seed)
    stop = pd.Timestamp(end)
    dates = pd.bdate_range(stop - pd.DateOffset(months=round(years * 12), days=7), stop)
    days = len(dates)
    bench_ret = np.stack([rng.normal(2.5e-4, v / math.sqrt(252), days) for v in VOLS], axis=1)
    kinds = rng.integers(0, len(TYPES), funds)
    beta = rng.uniform(0.8, 1.2, funds)
    ret = rng.standard_normal((days, funds))
    ret *= rng.uniform(0.002, 0.005, funds)
    ret += bench_ret[:, kinds] * beta
    ret += 1.0
    nav = np.cumprod(ret, axis=0)
    del ret
    nav *= 1000.0
    levels = pd.DataFrame(nav, index=dates, columns=[f"KR5{i:09d}" for i in range(funds)], copy=False)
    meta = pd.DataFrame({"type": np.asarray(TYPES)[kinds], "set_amount": 1e11}, index=levels.columns)
    meta["family_code"] = share_classes(meta.index)
    navs, adjustments = settle(levels)
    bench = pd.DataFrame(1000.0 * np.cumprod(1 + bench_ret, axis=0), index=dates, columns=list(TYPES))
    return Universe(navs=navs, meta=meta, issues={}, benchmark=bench, risk_free=0.03, adjustments=adjustments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--funds", type=int, default=15000)
    parser.add_argument("--months", type=int, default=60, help="month-ends in the history")
    parser.add_argument("--loop-dates", type=int, default=3, help="single-date calls timed for the loop")
    parser.add_argument("--repeats", type=int, default=3, help="history runs; the fastest is reported")
    args = parser.parse_args()
    end = "2025-06-30"
    universe = build(args.funds, 8.5, end)
    last = parse_month(end, "--to")
    dates = as_of_dates(universe, last - (args.months - 1), last)
    rubric = default_rubric()
    print(f"load average before: {os.getloadavg()}", flush=True)

    picks = [dates[round(k * (len(dates) - 1) / max(args.loop_dates - 1, 1))] for k in range(args.loop_dates)]
    # The cores are shared and the load comes and goes, so the two are interleaved (a loop date, a history
    # run, a loop date, …). The history runs repeat the same work: the fastest is taken. The loop's dates
    # cost more the later they are (more rows before the as-of date), so they are spread evenly over the
    # history and their mean × the number of dates is the loop's time.
    runs: list[float] = []
    calls: list[float] = []
    for k in range(max(args.repeats, len(picks))):
        if k < len(picks):
            t0 = time.perf_counter()
            evaluate_loaded(universe, rubric, as_of=picks[k])
            calls.append(time.perf_counter() - t0)
        if k < args.repeats:
            t0 = time.perf_counter()
            history = run_history(universe, rubric, dates)
            runs.append(time.perf_counter() - t0)
            rated = int((history.table["status"] == "ok").sum())
            print(
                f"history: {len(history.table):,} rows, {rated:,} rated, {runs[-1]:.1f} s, "
                f"{history.fallback_dates} date(s) graded by the single-date engine",
                flush=True,
            )
            del history
    print(f"single-date calls: {', '.join(f'{c:.1f}' for c in calls)} s", flush=True)
    seconds = min(runs)
    loop_seconds = sum(calls) / len(calls) * len(dates)
    middle = float(np.median(runs))  # a process's first run pays the page faults of fresh allocations
    print(
        f"history runs: {', '.join(f'{r:.1f}' for r in runs)} s; by the median run ({middle:.1f} s) "
        f"the speedup is {loop_seconds / middle:.2f}",
        flush=True,
    )
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"load average after: {os.getloadavg()}; cpus: {os.cpu_count()}", flush=True)
    print(
        f"fund_history funds={args.funds} dates={len(dates)} seconds={seconds:.1f} "
        f"loop_seconds={loop_seconds:.1f} speedup={loop_seconds / seconds:.2f} peak_mib={peak_mib:.0f}"
    )


if __name__ == "__main__":
    main()
