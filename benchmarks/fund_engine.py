"""Fund engine speed: 15,000 funds × 5 years of daily NAV, metrics + grades, against a per-fund empyrical loop.

Run: ``.venv/bin/python benchmarks/fund_engine.py [--funds 15000] [--subset 300] [--plain]``. The engine time is
one full ``evaluate_universe`` call (metrics for 1y/3y/5y/10y windows, peer percentiles, scores, grades and the
per-fund result objects). By default the universe is shaped like real data: two thirds of the funds settle
(결산) once a year and carry a 분배금 column (their 기준가격 resets, the engine rebuilds total returns), the
other third has no distribution column (the reset detector looks at them), and the funds come as share-class
portfolios of 1–4 classes (grouped in the rating scale). ``--plain`` times the clean universe without
either, as before. The comparison is a plain loop over funds calling empyrical-reloaded (plus numpy
for the metrics empyrical lacks: tracking error, MRAR) on a subset, scaled to the whole universe; both are
measured in this one run, and the script checks that the two agree.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.engine.total_return import Adjustments

TYPES = ("국내주식형", "해외주식형", "채권형", "해외채권형", "혼합형")
VOLS = (0.18, 0.15, 0.03, 0.05, 0.09)


def build_universe(funds: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Five years (plus a week, so the 5y window is complete) of business-day NAVs tied to per-type benchmarks."""
    rng = np.random.default_rng(seed)
    end = pd.Timestamp("2025-06-30")
    dates = pd.bdate_range(end - pd.DateOffset(years=5, days=7), end)
    days = len(dates)
    bench_ret = np.stack([rng.normal(2.5e-4, v / math.sqrt(252), days) for v in VOLS], axis=1)
    kinds = rng.integers(0, len(TYPES), funds)
    beta = rng.uniform(0.8, 1.2, funds).astype(np.float64)
    noise = rng.standard_normal((days, funds))
    noise *= rng.uniform(0.002, 0.005, funds)
    ret = noise
    ret += bench_ret[:, kinds] * beta
    ret += 1.0
    nav = np.cumprod(ret, axis=0)
    nav *= 1000.0
    navs = pd.DataFrame(nav, index=dates, columns=[f"KR5{i:09d}" for i in range(funds)], copy=False)
    meta = pd.DataFrame({"type": np.asarray(TYPES)[kinds], "set_amount": 1e11}, index=navs.columns)
    bench = pd.DataFrame(1000.0 * np.cumprod(1 + bench_ret, axis=0), index=dates, columns=list(TYPES))
    return navs, meta, bench


def settle(levels: pd.DataFrame, share: float = 2 / 3, seed: int = 1) -> tuple[pd.DataFrame, Adjustments]:
    """Yearly 결산 for ``share`` of the funds (five 결산 dates, one per group): the gain above 1,000 is paid,
    ``NAV_t = NAV_{t−1}·L_t/L_{t−1} − D_t``; returns the paid NAVs and their 분배금 table."""
    rng = np.random.default_rng(seed)
    lv = levels.to_numpy()
    nav = lv.copy()
    funds = lv.shape[1]
    settling = np.flatnonzero(rng.random(funds) < share)
    group = rng.integers(0, 5, settling.size)
    dist = np.zeros((lv.shape[0], settling.size))
    for g in range(5):
        cols = settling[group == g]
        for e in range(60 + 40 * g, lv.shape[0], 252):
            paid = nav[e - 1, cols]
            d = np.maximum(paid - 1000.0, 0.0)
            nav_e = paid * lv[e, cols] / lv[e - 1, cols] - d
            nav[e:, cols] = lv[e:, cols] * (nav_e / lv[e, cols])
            dist[e, group == g] = d
    # no copies (as in build_universe): both universes reach the engine with the same memory layout
    table = pd.DataFrame(dist, index=levels.index, columns=levels.columns[settling], copy=False)
    paid = pd.DataFrame(nav, index=levels.index, columns=levels.columns, copy=False)
    return paid, Adjustments(distribution=table)


def share_classes(codes: pd.Index, seed: int = 2) -> np.ndarray:
    """Portfolio code per fund: consecutive funds grouped into portfolios of 1–4 classes."""
    rng = np.random.default_rng(seed)
    family = np.empty(len(codes), dtype=object)
    i = 0
    while i < len(codes):
        k = int(rng.integers(1, 5))
        family[i : i + k] = codes[i]
        i += k
    return family


def empyrical_loop(
    navs: pd.DataFrame, meta: pd.DataFrame, bench: pd.DataFrame, rf: float
) -> dict[str, dict[str, float]]:
    """The per-fund way: one fund at a time, one window at a time, with empyrical-reloaded."""
    import empyrical as ep

    rfd = (1 + rf) ** (1 / 252) - 1
    rf_m = (1 + rf) ** (1 / 12) - 1
    as_of = navs.index[-1]
    out: dict[str, dict[str, float]] = {}
    for code in navs.columns:
        nav = navs[code]
        levels = bench[meta.loc[code, "type"]]
        for years in (1, 3, 5):
            start = as_of - pd.DateOffset(years=years)
            r = (nav / nav.shift(1) - 1)[nav.index > start].to_numpy()
            b = (levels / levels.shift(1) - 1)[levels.index > start].to_numpy()
            te = float(np.std(r - b, ddof=1) * math.sqrt(252))
            base = nav[nav.index <= start].iloc[-1]
            window = nav[nav.index > start]
            points = np.concatenate(
                [[base], window.groupby([window.index.year, window.index.month]).tail(1).to_numpy()]
            )
            er = (points[1:] / points[:-1]) / (1 + rf_m) - 1
            out[f"{code}/{years}y"] = {
                "annualized_return": ep.annual_return(r),
                "annualized_volatility": ep.annual_volatility(r),
                "sharpe": ep.sharpe_ratio(r, risk_free=rfd),
                "sortino": ep.sortino_ratio(r, required_return=rfd),
                "max_drawdown": ep.max_drawdown(r),
                "calmar": ep.calmar_ratio(r),
                "beta": ep.beta(r, b, risk_free=rfd),
                "jensen_alpha": ep.alpha(r, b, risk_free=rfd, annualization=1) * 252,
                "tracking_error": te,
                "information_ratio": ep.excess_sharpe(r, b) * math.sqrt(252),
                "mrar": float(np.mean((1 + er) ** -2) ** -6 - 1),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--funds", type=int, default=15000)
    parser.add_argument("--subset", type=int, default=300, help="funds in the per-fund empyrical loop")
    parser.add_argument("--plain", action="store_true", help="no 결산 adjustment, no share classes")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="full-size engine calls; the figure is their median (the first call in a fresh process also "
        "pays the kernel's page faults for the metrics' buffers, so it is printed on its own too)",
    )
    args = parser.parse_args()
    rf = 0.03

    levels, meta, bench = build_universe(args.funds)
    navs, adjustments = levels, None
    if not args.plain:
        navs, adjustments = settle(levels)
        meta["family_code"] = share_classes(meta.index)
    small = navs.columns[:50]
    evaluate_universe(
        navs[small], meta.loc[small], benchmark=bench, risk_free=rf, adjustments=adjustments
    )  # imports and first calls

    calls = []
    for _ in range(max(1, args.repeat)):
        t0 = time.perf_counter()
        evaluation = evaluate_universe(navs, meta, benchmark=bench, risk_free=rf, adjustments=adjustments)
        calls.append(time.perf_counter() - t0)
    engine_s = float(np.median(calls))
    graded = sum(f.grade is not None for f in evaluation.funds)
    basis = pd.Series([f.return_basis for f in evaluation.funds]).value_counts().to_dict()
    flagged = sum(bool(f.reason_codes) for f in evaluation.funds)

    subset = navs.columns[: args.subset]
    t0 = time.perf_counter()
    loop = empyrical_loop(levels[subset], meta.loc[subset], bench, rf)  # on the true total-return levels
    loop_s = time.perf_counter() - t0
    per_fund_loop = loop_s / len(subset)
    speedup = per_fund_loop * args.funds / engine_s

    worst = 0.0
    for key, want in loop.items():
        code, period = key.split("/")
        got = evaluation.fund(code).metrics[period]
        for metric, value in want.items():
            worst = max(worst, abs(got[metric] - value) / max(abs(value), 1e-12))
    setup = (
        "plain"
        if args.plain
        else f"결산 adjustment {basis}, reset detector flagged {flagged}, share classes grouped"
    )
    print(f"setup: {setup}")
    print(
        f"engine: {args.funds} funds x {len(navs)} days, metrics + grades in {engine_s:.2f} s ({graded} graded)"
    )
    print(
        f"empyrical loop: {len(subset)} funds in {loop_s:.2f} s = {per_fund_loop * 1e3:.1f} ms/fund, "
        f"{per_fund_loop * args.funds:.0f} s for all {args.funds}"
    )
    print(f"largest relative difference engine vs loop: {worst:.1e}")
    print(
        f"engine calls: {', '.join(f'{c:.2f}' for c in calls)} s (first, then warm); median {engine_s:.2f} s"
    )
    print(f"fund_engine funds={args.funds} seconds={engine_s:.2f} speedup={speedup:.0f}")


if __name__ == "__main__":
    main()
