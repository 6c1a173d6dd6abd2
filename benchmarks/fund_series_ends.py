"""False positives of the end-of-series NAV checks on a universe of genuine funds, and their recall.

Run: ``.venv/bin/python benchmarks/fund_series_ends.py [--funds 600] [--step 5] [--seed 7]``.

A universe of ``--funds`` funds over six years, in five 유형 with their benchmarks, none with a typo:
ordinary funds of varied volatility, volatile single-theme funds (daily moves of 3–5 %), fat-tailed
funds (Student-t, 3 degrees of freedom), 2× leveraged and −2× inverse funds, funds that crash alone and
stay down, market crashes shared by a whole 유형 (−25 %, the next day +15 %), and young funds launched at
varied dates. The check (:func:`find_end_typos`, the engine's own) is run as every evaluation would run it,
on the data up to an as-of date, for an as-of date every ``--step`` market dates over the last four
years: every fund-date it refuses is a false positive (no typo was planted). Then a ×10 or ÷10 typo is
planted on the last date (or first date) of one fund per as-of date and the share caught is the recall.
Last line: ``fund_series_ends funds=<n> fund_dates=<n> false_positive_fund_dates=<n> ...``.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from evaluator.domains.fund.engine.series_ends import find_end_typos

TYPES = {"국내주식형": 0.18, "해외주식형": 0.22, "채권형": 0.03, "혼합형": 0.10, "원자재": 0.25}
KINDS = ("plain", "volatile", "fat_tail", "leveraged", "inverse", "crash_alone", "young")


def build(funds: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(levels dates × funds, 유형 per fund, benchmark levels dates × 유형, benchmark column per fund, kinds)."""
    rng = np.random.default_rng(seed)
    n = 252 * 6
    names = list(TYPES)
    bench_r = np.stack([rng.normal(2e-4, v / np.sqrt(252), n) for v in TYPES.values()], axis=1)
    for t in range(len(names)):  # market crashes shared by the whole 유형, some on as-of dates
        for day in rng.choice(np.arange(300, n), 4, replace=False):
            bench_r[day, t] += -0.25 if TYPES[names[t]] > 0.05 else -0.04
            if day + 1 < n:
                bench_r[day + 1, t] += 0.15 if TYPES[names[t]] > 0.05 else 0.02
    levels = np.empty((n, funds))
    groups = np.empty(funds, dtype=object)
    of_fund = np.empty(funds, dtype=int)
    kinds = []
    for k in range(funds):
        t = k % len(names)
        kind = KINDS[(k // len(names)) % len(KINDS)] if k % 3 == 0 else "plain"
        idio = TYPES[names[t]] * rng.uniform(0.1, 0.6) / np.sqrt(252)
        beta = rng.uniform(0.7, 1.3)
        noise = rng.normal(0, 1, n)
        if kind == "volatile":
            idio = rng.uniform(0.03, 0.05)
        elif kind == "fat_tail":
            noise = rng.standard_t(3, n) / np.sqrt(3)
            idio = max(idio, 0.015)
        elif kind == "leveraged":
            beta = 2.0
        elif kind == "inverse":
            beta = -2.0
        r = beta * bench_r[:, t] + idio * noise
        if kind == "crash_alone":
            r[rng.integers(300, n)] = rng.uniform(-0.5, -0.3)
        r = np.maximum(r, -0.9)
        lv = rng.uniform(800, 12000) * np.cumprod(1 + r)
        if kind == "young":
            lv[: rng.integers(300, n - 30)] = np.nan
        levels[:, k] = lv
        groups[k] = names[t]
        of_fund[k] = t
        kinds.append(kind)
    return levels, groups, 1000 * np.cumprod(1 + bench_r, axis=0), of_fund, kinds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--funds", type=int, default=600)
    parser.add_argument("--step", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    levels, groups, bench, of_fund, kinds = build(args.funds, args.seed)
    n = levels.shape[0]
    rng = np.random.default_rng(args.seed + 1)
    fund_dates, false_pos, by_kind = 0, 0, dict.fromkeys(KINDS, 0)
    fp_funds: set[int] = set()
    planted, caught = 0, 0
    for e in range(n - 252 * 4, n, args.step):
        part = levels[: e + 1]
        live = np.isfinite(part[-1])
        fund_dates += int(live.sum())
        found = find_end_typos(part, groups, bench[: e + 1], of_fund)
        for i in found.funds():
            false_pos += 1
            by_kind[kinds[i]] += 1
            fp_funds.add(i)
        # recall: one planted typo per as-of date, on the last date or on a fund's first date
        i = int(rng.choice(np.flatnonzero(live)))
        typo = part.copy()
        factor = 10.0 if rng.random() < 0.5 else 0.1
        first = int(np.argmax(np.isfinite(typo[:, i])))
        row = first if rng.random() < 0.3 and e - first > 80 else e
        typo[row, i] *= factor
        planted += 1
        caught += i in find_end_typos(typo, groups, bench[: e + 1], of_fund).funds()
    print("false positives by kind: " + ", ".join(f"{k} {v}" for k, v in by_kind.items()))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(
        f"fund_series_ends funds={args.funds} fund_dates={fund_dates} false_positive_fund_dates={false_pos} "
        f"false_positive_funds={len(fp_funds)} planted={planted} caught={caught}"
    )


if __name__ == "__main__":
    main()
