"""운용사 ratings speed: 15,000 funds of ~300 companies, rated from a report folder on disk.

Run: ``.venv/bin/python benchmarks/company_ratings.py [--funds 15000] [--companies 300]``. The universe is
the fund-engine benchmark's (5 years of daily NAV, five 유형), with companies of very different sizes
(a Zipf-like spread, so some have one or two funds and fall below the minimum), share-class portfolios
of 1–4 classes, 설정원본 from 10억 to 1조원, and a qualitative file for two thirds of the companies. The
engine grades it and writes the reports first (not timed); the timed part is what ``evaluator fund
companies`` does: read the folder, rate, and write companies.json, one Korean report per company and
the plot. Best of three runs; the last line is the figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fund_engine import build_universe

from evaluator.domains.fund.companies.funds import read_funds
from evaluator.domains.fund.companies.plot import draw_companies
from evaluator.domains.fund.companies.service import rate_folder, write_companies
from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.reports.batch import write_reports
from evaluator.domains.fund.rubric import default_rubric


def reports(folder: Path, funds: int, companies: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    navs, meta, bench = build_universe(funds)
    names = [f"운용사{i:03d}자산운용" for i in range(companies)]
    weights = 1.0 / np.arange(1, companies + 1) ** 0.9
    codes = list(navs.columns)
    family, owner = [], []
    i = 0
    while i < funds:  # portfolios of 1–4 classes, each portfolio with one company
        k = int(rng.integers(1, 5))
        c = names[int(rng.choice(companies, p=weights / weights.sum()))]
        family += [codes[i]] * min(k, funds - i)
        owner += [c] * min(k, funds - i)
        i += k
    meta["company"] = owner
    meta["family_code"] = family
    meta["fund_name"] = [f"{o} 펀드 {j}" for j, o in enumerate(owner)]
    meta["set_amount"] = np.exp(rng.uniform(np.log(1e9), np.log(1e12), funds)).round(-6)
    evaluation = evaluate_universe(navs, meta, default_rubric(), benchmark=bench, risk_free=0.03)
    write_reports(evaluation, folder)
    return sorted(set(owner))


def qualitative_file(path: Path, companies: list[str], seed: int = 4) -> Path:
    rng = np.random.default_rng(seed)
    pillars = [p["name"] for p in default_rubric()["company_rating"]["pillars"]]
    lines = [",".join(["운용사", "평가일", "애널리스트", *pillars])]
    for c in companies[: len(companies) * 2 // 3]:
        lines.append(",".join([c, "2025-05-31", "김분석", *(str(int(v)) for v in rng.integers(1, 6, len(pillars)))]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--funds", type=int, default=15000)
    ap.add_argument("--companies", type=int, default=300)
    ap.add_argument("--keep", type=Path, help="Keep the graded reports in this folder (reused when present).")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        start = time.perf_counter()
        if (base / "reports" / "summary.json").is_file():
            names = sorted({str(c) for c in read_funds(base / "reports").frame["company"].dropna()})
            print(f"reports reused from {base / 'reports'}")
        else:
            names = reports(base / "reports", args.funds, args.companies)
            print(f"graded and wrote {args.funds} reports in {time.perf_counter() - start:.1f} s (not timed)")
        qual = qualitative_file(base / "qual.csv", names)
        rubric = default_rubric()
        best, parts, cpu = float("inf"), (0.0, 0.0), 0.0
        for run in range(3):
            c0 = time.process_time()
            t0 = time.perf_counter()
            doc = rate_folder(base / "reports", rubric, qualitative=qual)
            t1 = time.perf_counter()
            write_companies(doc, base / f"out{run}", force=True, plot=False)
            t2 = time.perf_counter()
            if t2 - t0 < best:
                best, parts, cpu = t2 - t0, (t1 - t0, t2 - t1), time.process_time() - c0
        t3 = time.perf_counter()
        draw_companies(doc, base / "out0" / "companies.png")
        drawn = time.perf_counter() - t3
        c = doc["counts"]
        print(f"companies {c['companies']} (rated {c['rated']}, not rated {c['not_rated']}), read+rate {parts[0]:.2f} s, "
              f"write companies.json + {c['companies']} reports {parts[1]:.2f} s; plot (apart) {drawn:.2f} s")  # fmt: skip
        print(f"company_ratings funds={args.funds} companies={c['companies']} seconds={best:.2f} cpu_seconds={cpu:.2f}")


if __name__ == "__main__":
    main()
