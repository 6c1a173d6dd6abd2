"""Every engine metric against an independent per-fund numpy computation of the documented formulas,
and against empyrical-reloaded where its conventions are the same."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.methodology.rubric import METRICS, PERIODS

RTOL = 1e-9
TYPES = ("국내주식형", "채권형")


def _universe(
    seed: int = 3, funds: int = 10, years: float = 6.3
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-03-14", periods=int(252 * years))
    bench = pd.DataFrame(
        {
            t: 1000 * np.cumprod(1 + rng.normal(3e-4, s, len(dates)))
            for t, s in zip(TYPES, (0.012, 0.002), strict=True)
        },
        index=dates,
    )
    navs = {}
    kinds = []
    for i in range(funds):
        kind = TYPES[i % 2]
        b = bench[kind].pct_change().fillna(0).to_numpy()
        r = 1e-4 + rng.uniform(0.7, 1.3) * b + rng.normal(0, 0.004, len(dates))
        nav = 1000 * np.cumprod(1 + r)
        start = [0, 0, 300, 700, 0, 1100, 0, 0, 400, 0][i % 10]  # some funds are younger
        nav[:start] = np.nan
        navs[f"F{i:02d}"] = nav
        kinds.append(kind)
    meta = pd.DataFrame({"type": kinds, "set_amount": 1e11}, index=list(navs))
    return pd.DataFrame(navs, index=dates), meta, bench


def reference(
    nav: pd.Series, bench: pd.Series | None, rf: pd.Series, as_of: pd.Timestamp, years: int
) -> dict | None:
    """The formulas as written, one fund at a time, straight from the fund's own dated series."""
    nav = nav.dropna()
    nav = nav[nav.index <= as_of]
    start = as_of - pd.DateOffset(years=years)
    if nav.index[0] > start:
        return None
    base = nav[nav.index <= start].iloc[-1]
    window = nav[nav.index > start]
    prev = np.concatenate([[base], window.to_numpy()[:-1]])
    r = window.to_numpy() / prev - 1
    n = len(r)
    rf_annual = rf.reindex(window.index).to_numpy()
    rfd = (1 + rf_annual) ** (1 / 252) - 1
    x = r - rfd
    out = {
        "annualized_return": np.prod(1 + r) ** (252 / n) - 1,
        "annualized_volatility": np.std(r, ddof=1) * math.sqrt(252),
        "sharpe": np.mean(x) / np.std(x, ddof=1) * math.sqrt(252),
        "sortino": np.mean(x) * 252 / (math.sqrt(np.mean(np.minimum(x, 0) ** 2)) * math.sqrt(252)),
    }
    wealth = np.concatenate([[1.0], np.cumprod(1 + r)])
    out["max_drawdown"] = float(np.min(wealth / np.maximum.accumulate(wealth) - 1))
    out["calmar"] = out["annualized_return"] / abs(out["max_drawdown"])
    if bench is not None:
        bl = bench[bench.index <= as_of]
        b_base = bl[bl.index <= start].iloc[-1]
        bw = bl[bl.index > start].reindex(window.index).to_numpy()
        b = bw / np.concatenate([[b_base], bw[:-1]]) - 1
        y = b - rfd
        beta = np.cov(x, y, ddof=1)[0, 1] / np.var(y, ddof=1)
        out["beta"] = beta
        out["jensen_alpha"] = (np.mean(x) - beta * np.mean(y)) * 252
        out["tracking_error"] = np.std(r - b, ddof=1) * math.sqrt(252)
        out["information_ratio"] = np.mean(r - b) * 252 / out["tracking_error"]
    month_last = window.groupby([window.index.year, window.index.month]).tail(1)
    points = np.concatenate([[base], month_last.to_numpy()])
    monthly = points[1:] / points[:-1] - 1
    rf_m = (1 + rf.reindex(month_last.index).to_numpy()) ** (1 / 12) - 1
    er = (1 + monthly) / (1 + rf_m) - 1
    out["mrar"] = np.mean((1 + er) ** -2) ** -6 - 1
    return out


def _compare(got: dict | None, want: dict | None, metrics: list[str]) -> None:
    if want is None:
        assert got is None
        return
    assert got is not None
    for m in metrics:
        assert got[m] == pytest.approx(want[m], rel=RTOL, abs=1e-13), m


@pytest.mark.parametrize("as_of", [None, "2024-11-17"])  # the last date, and a Sunday mid-month
@pytest.mark.parametrize("rf_kind", ["constant", "series"])
def test_every_metric_matches_the_formulas(as_of: str | None, rf_kind: str) -> None:
    navs, meta, bench = _universe()
    if rf_kind == "constant":
        risk_free: float | pd.Series = 0.031
        rf = pd.Series(0.031, index=navs.index)
    else:
        risk_free = pd.Series(np.linspace(0.035, 0.02, len(navs.index)), index=navs.index)
        rf = risk_free
    day = dt.date.fromisoformat(as_of) if as_of else None
    ev = evaluate_universe(navs, meta, benchmark=bench, risk_free=risk_free, as_of=day)
    when = pd.Timestamp(as_of) if as_of else navs.index[-1]
    checked = 0
    for fund in ev.funds:
        for period, years in PERIODS.items():
            want = reference(navs[fund.fund_code], bench[fund.type], rf, when, years)
            _compare(fund.metrics[period], want, list(METRICS))
            checked += want is not None
    assert checked >= 25  # 1y/3y/5y for most funds; 10y is longer than every history
    assert all(f.metrics["10y"] is None for f in ev.funds)


def test_single_benchmark_and_no_benchmark() -> None:
    navs, meta, bench = _universe(seed=5)
    rf = pd.Series(0.0, index=navs.index)
    one = bench["국내주식형"].rename("KOSPI")
    ev = evaluate_universe(navs, meta, benchmark=one, risk_free=0.0)
    for fund in ev.funds:
        _compare(
            fund.metrics["3y"], reference(navs[fund.fund_code], one, rf, navs.index[-1], 3), list(METRICS)
        )
    bare = evaluate_universe(navs, meta, benchmark=None, risk_free=0.0)
    f = bare.funds[0]
    assert {
        k: f.metrics["3y"][k] for k in ("beta", "jensen_alpha", "tracking_error", "information_ratio")
    } == dict.fromkeys(("beta", "jensen_alpha", "tracking_error", "information_ratio"))
    assert f.metrics["3y"]["sharpe"] == pytest.approx(ev.funds[0].metrics["3y"]["sharpe"], rel=RTOL)


def test_against_empyrical_where_conventions_match() -> None:
    empyrical = pytest.importorskip("empyrical")
    navs, meta, bench = _universe(seed=11)
    rf_annual = 0.025
    rfd = (1 + rf_annual) ** (1 / 252) - 1
    ev = evaluate_universe(navs, meta, benchmark=bench, risk_free=rf_annual)
    as_of = navs.index[-1]
    start = as_of - pd.DateOffset(years=3)
    compared = 0
    for fund in ev.funds:
        if fund.metrics["3y"] is None:  # younger than the window
            continue
        compared += 1
        nav = navs[fund.fund_code]
        r = (nav / nav.shift(1) - 1)[nav.index > start].to_numpy()
        bl = bench[fund.type]
        b = (bl / bl.shift(1) - 1)[bl.index > start].to_numpy()
        m = fund.metrics["3y"]
        assert m["annualized_return"] == pytest.approx(empyrical.annual_return(r), rel=RTOL)
        assert m["annualized_volatility"] == pytest.approx(empyrical.annual_volatility(r), rel=RTOL)
        assert m["sharpe"] == pytest.approx(empyrical.sharpe_ratio(r, risk_free=rfd), rel=RTOL)
        assert m["sortino"] == pytest.approx(empyrical.sortino_ratio(r, required_return=rfd), rel=RTOL)
        assert m["max_drawdown"] == pytest.approx(empyrical.max_drawdown(r), rel=RTOL)
        assert m["calmar"] == pytest.approx(empyrical.calmar_ratio(r), rel=RTOL)
        assert m["beta"] == pytest.approx(empyrical.beta(r, b, risk_free=rfd), rel=RTOL)
        daily_alpha = empyrical.alpha(r, b, risk_free=rfd, annualization=1)
        assert m["jensen_alpha"] == pytest.approx(daily_alpha * 252, rel=RTOL)
        assert m["information_ratio"] == pytest.approx(
            empyrical.excess_sharpe(r, b) * math.sqrt(252), rel=RTOL
        )
    assert compared >= 7


def test_flat_fund_gives_null_ratios_not_infinity() -> None:
    navs, meta, bench = _universe(seed=2)
    navs["F00"] = 1000.0  # never moves: no volatility, no downside, no drawdown
    ev = evaluate_universe(navs, meta, benchmark=bench, risk_free=0.0)
    m = ev.fund("F00").metrics["3y"]
    assert m["annualized_return"] == 0.0
    assert m["annualized_volatility"] == 0.0
    assert m["max_drawdown"] == 0.0
    assert m["sharpe"] is None and m["sortino"] is None and m["calmar"] is None
    assert m["beta"] == pytest.approx(0.0, abs=1e-12)


def test_window_is_null_when_history_is_one_day_short() -> None:
    navs, meta, bench = _universe(seed=4)
    as_of = navs.index[-1]
    start = as_of - pd.DateOffset(years=3)
    first_ok = navs.index[navs.index <= start][-1]
    navs.loc[navs.index < first_ok, "F00"] = np.nan  # starts exactly at the window's starting NAV
    navs.loc[navs.index <= first_ok, "F01"] = np.nan  # starts one day later
    ev = evaluate_universe(navs, meta, benchmark=bench)
    assert ev.fund("F00").metrics["3y"] is not None
    assert ev.fund("F01").metrics["3y"] is None
    assert ev.fund("F01").metrics["1y"] is not None
