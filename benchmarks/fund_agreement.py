"""Agreement speed: engine and model grades against three analysts, overall and per 유형, with 2,000 resamples.

Run: ``.venv/bin/python benchmarks/fund_agreement.py [--funds 2000] [--analysts 3] [--resamples 2000]``.
Times one ``build_agreement`` call on an in-memory batch (no report files, so no per-fund details are read):
every comparison (engine, model, each analyst, every two analysts; overall and per 유형) with its fund
bootstrap. The last line is the figure.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from evaluator.domains.fund.agreement.io import ExpertGrade, Experts
from evaluator.domains.fund.agreement.report import build_agreement
from evaluator.domains.fund.agreement.reports import Batch, EngineFund

TYPES = ("국내주식형", "해외주식형", "채권형", "해외채권형", "혼합형", "재간접형")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--funds", type=int, default=2000)
    parser.add_argument("--analysts", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=args.funds)
    funds = {}
    for i, g in enumerate(truth):
        code = f"KR{i:010d}"
        engine = int(np.clip(g + rng.integers(-1, 2), 1, 5))
        model = int(np.clip(g + rng.integers(-2, 3), 1, 5))
        funds[code] = EngineFund(code, None, TYPES[i % len(TYPES)], "ok", engine, 50.0, 50.0, None, model)
    batch = Batch(Path("bench"), "2025-06-30", {"name": "bench", "version": "1"}, funds, "bench-model")
    grades = [
        ExpertGrade(code, int(np.clip(g + rng.integers(-1, 2), 1, 5)), f"analyst{a}", None, 2)
        for (code, g) in zip(funds, truth, strict=True)
        for a in range(args.analysts)
    ]
    experts = Experts(
        grades, {"path": "bench", "format": "csv", "header_row": 1, "rows_used": len(grades)}, True
    )
    start = time.perf_counter()
    doc = build_agreement(
        experts, batch, [f"{g}등급" for g in range(1, 6)], by_type=True, resamples=args.resamples
    )
    seconds = time.perf_counter() - start
    print(doc["summary_ko"])
    print(
        f"fund_agreement funds={args.funds} analysts={args.analysts} types={len(TYPES)} "
        f"resamples={args.resamples} seconds={seconds:.2f}"
    )


if __name__ == "__main__":
    main()
