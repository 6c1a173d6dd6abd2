"""NAV typos at a series' ends are never graded by default: a ×10 / ÷10 first price, a ×10 / ÷10 last
price (or last two), whatever the fund's price level; genuine last-day moves its 유형 shares stay graded;
the other funds' grades do not move; repair and keep say what they did; the grade history agrees; the
summary and the console name every refused fund."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.data.loaders import Universe
from evaluator.domains.fund.engine.engine import ERROR, OK, evaluate_universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.engine.series_ends import NAV_OUTLIER_UNCONFIRMED
from evaluator.domains.fund.history.run import history_row, run_history
from evaluator.domains.fund.rubric import default_rubric

runner = CliRunner()


def _universe(seed: int = 11, funds: int = 30, level: float = 1000.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two 유형 over four years; funds of varied volatility around ``level``."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    market = rng.normal(3e-4, 0.01, len(dates))
    vol = rng.uniform(0.002, 0.02, funds)
    r = market[:, None] * rng.uniform(0.5, 1.5, funds) + rng.normal(0, 1, (len(dates), funds)) * vol
    codes = [f"K{i:03d}" for i in range(funds)]
    navs = pd.DataFrame(level * np.cumprod(1 + r, axis=0), index=dates, columns=codes)
    types = ["국내주식형" if i % 2 else "해외주식형" for i in range(funds)]
    return navs, pd.DataFrame({"type": types, "set_amount": 1e11}, index=pd.Index(codes, name="fund_code"))


CASES = {
    "last_x10": (-1, 1, 10.0),
    "last_d10": (-1, 1, 0.1),
    "last2_x10": (-2, 2, 10.0),
    "first_x10": (0, 1, 10.0),
    "first_d10": (0, 1, 0.1),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("level", [1000.0, 10_000.0, 98.5])
def test_an_end_typo_is_refused_by_default_named_and_moves_no_other_grade(case: str, level: float) -> None:
    navs, meta = _universe(level=level)
    start, days, factor = CASES[case]
    clean = evaluate_universe(navs.drop(columns=["K005"]), meta.drop(index=["K005"]))
    typo = navs.copy()
    col = typo.columns.get_loc("K005")
    for d in range(days):
        typo.iloc[start + d, col] *= factor
    ev = evaluate_universe(typo, meta)
    f = ev.fund("K005")
    assert f.status == ERROR and f.grade is None and not f.provisional
    assert f.reason_codes == (NAV_OUTLIER_UNCONFIRMED,)  # not a 결산 reset, not graded
    assert navs.index[start].strftime("%Y-%m-%d") in f.errors[0] and "%" in f.errors[0]
    assert not any("결산" in e for e in f.errors)
    for g in clean.funds:  # the refused fund enters no peer's percentile
        h = ev.fund(g.fund_code)
        assert (h.status, h.grade, h.score, h.peer_percentile) == (
            g.status,
            g.grade,
            g.score,
            g.peer_percentile,
        )
    assert ev.inputs["outliers"]["refused"] == ["K005"]


def test_repair_drops_the_unconfirmed_price_and_keep_grades_it_with_a_warning() -> None:
    navs, meta = _universe()
    typo, missing = navs.copy(), navs.copy()
    typo.iloc[-1, 5] *= 10
    missing.iloc[-1, 5] = navs.iloc[-2, 5]  # the last good price carried onto the date
    repaired = evaluate_universe(typo, meta, outliers="repair")
    f, g = repaired.fund("K005"), evaluate_universe(missing, meta).fund("K005")
    assert f.status == OK and f.metrics == g.metrics and f.grade == g.grade
    assert any("--outliers repair" in w for w in f.warnings)
    assert repaired.inputs["outliers"]["repaired"] == ["K005"]
    kept = evaluate_universe(typo, meta, outliers="keep")
    k = kept.fund("K005")
    assert k.status == OK and any("--outliers keep" in w for w in k.warnings)
    assert k.metrics["1y"]["annualized_return"] > 5  # graded on the bad price, as asked
    first = navs.copy()
    first.iloc[0, 7] *= 10
    fixed = evaluate_universe(first, meta, outliers="repair").fund("K007")
    assert fixed.status == OK and fixed.metrics["3y"]["annualized_return"] == pytest.approx(
        evaluate_universe(navs, meta).fund("K007").metrics["3y"]["annualized_return"], rel=1e-9
    )


def test_a_genuine_last_day_move_shared_by_the_type_or_benchmark_is_graded() -> None:
    navs, meta = _universe(seed=12)
    dom = [c for c in navs.columns if meta.loc[c, "type"] == "국내주식형"]
    crashed = navs.copy()
    crashed.iloc[-1, [crashed.columns.get_loc(c) for c in dom]] *= 0.72  # the whole 유형 falls 28 %
    ev = evaluate_universe(crashed, meta)
    assert all(ev.fund(c).status == OK for c in dom)
    assert not any(ev.fund(c).reason_codes for c in dom)
    # one fund alone against the benchmark: the benchmark falls with it, so it is a market move
    bench = pd.DataFrame(
        {"국내주식형": navs[dom].mean(axis=1), "해외주식형": navs.drop(columns=dom).mean(axis=1)}
    )
    alone = navs.copy()
    alone.iloc[-1, alone.columns.get_loc(dom[0])] *= 0.7
    bench.iloc[-1, 0] *= 0.7
    assert evaluate_universe(alone, meta, benchmark=bench).fund(dom[0]).status == OK


def test_the_history_agrees_with_the_single_date_engine_on_end_typos() -> None:
    navs, meta = _universe(seed=13, funds=16)
    navs.iloc[-1, 3] *= 10
    navs.iloc[0, 6] /= 10
    universe = Universe(navs=navs, meta=meta, issues={})
    rubric = default_rubric()
    dates = [navs.index[-1], navs.index[-200], navs.index[300]]
    hist = run_history(universe, rubric, sorted(dates))
    for when in dates:
        single = evaluate_loaded(universe, rubric, as_of=when.date())
        day = hist.table[hist.table["as_of"] == when.strftime("%Y-%m-%d")].set_index("fund_code")
        for fund in single.funds:
            expected = history_row(fund, str(rubric["version"]))
            for col in ("status", "grade", "score"):
                value = day.loc[fund.fund_code][col]
                value = None if value is None or (not isinstance(value, str) and pd.isna(value)) else value
                assert value == (pytest.approx(expected[col]) if isinstance(value, float) else expected[col])
    last = hist.table[hist.table["as_of"] == navs.index[-1].strftime("%Y-%m-%d")].set_index("fund_code")
    assert last.loc["K003", "status"] == ERROR and last.loc["K006", "status"] == ERROR
    earlier = hist.table[hist.table["as_of"] == navs.index[-200].strftime("%Y-%m-%d")].set_index("fund_code")
    assert earlier.loc["K003", "status"] == OK and earlier.loc["K006", "status"] == ERROR


def test_summary_and_console_name_every_refused_fund(tmp_path: Path) -> None:
    navs, _meta = _universe(seed=14, funds=12)
    navs.iloc[-1, 2] *= 10
    long = navs.stack().rename("기준가격").reset_index()
    long.columns = ["기준일자", "펀드코드", "기준가격"]
    long["유형"] = "국내주식형"
    long["설정원본"] = 1e11
    long.to_csv(tmp_path / "navs.csv", index=False)
    result = runner.invoke(app, ["fund", "evaluate", str(tmp_path / "navs.csv"), "-o", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert "data checks: refused 1 (K002)" in result.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    assert summary["data_checks"]["refused"] == [
        {"fund_code": "K002", "status": ERROR, "reason_codes": [NAV_OUTLIER_UNCONFIRMED]}
    ]
    result = runner.invoke(
        app,
        ["fund", "evaluate", str(tmp_path / "navs.csv"), "-o", str(tmp_path / "b"), "--outliers", "repair"],
    )
    assert result.exit_code == 0 and "repaired 1 (K002)" in result.output
    summary = json.loads((tmp_path / "b" / "summary.json").read_text(encoding="utf-8"))
    assert summary["data_checks"] == {"refused": [], "repaired": ["K002"], "kept": []}


@pytest.mark.parametrize("gear", [2.0, -2.0])
def test_a_geared_fund_moving_twice_its_market_on_the_last_day_is_graded(gear: float) -> None:
    rng = np.random.default_rng(15)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    m = rng.normal(3e-4, 0.01, len(dates))
    m[-1] = -0.25  # the market falls 25 % on the as-of date: a 2× fund −50 %, a −2× fund +50 %
    funds = {f"P{i:02d}": m * rng.uniform(0.8, 1.2) + rng.normal(0, 0.004, len(dates)) for i in range(8)}
    funds["GEAR"] = gear * m + rng.normal(0, 0.002, len(dates))
    navs = pd.DataFrame({c: 1000 * np.cumprod(1 + r) for c, r in funds.items()}, index=dates)
    meta = pd.DataFrame(
        {"type": "국내주식형", "set_amount": 1e11}, index=pd.Index(navs.columns, name="fund_code")
    )
    bench = pd.Series(1000 * np.cumprod(1 + m), index=dates)
    for b in (bench, None):  # against its benchmark, and against its 유형 median alone
        f = evaluate_universe(navs, meta, benchmark=b).fund("GEAR")
        assert f.status == OK and not f.reason_codes, f.errors
    typo = navs.copy()
    typo.iloc[-1, typo.columns.get_loc("GEAR")] *= 10  # a typo on that same day is still refused
    assert evaluate_universe(typo, meta, benchmark=bench).fund("GEAR").status == ERROR


def test_fund_history_names_the_refused_fund_of_its_last_date(tmp_path: Path) -> None:
    navs, _meta = _universe(seed=16, funds=12)
    navs.iloc[-1, 4] *= 10
    long = navs.stack().rename("기준가격").reset_index()
    long.columns = ["기준일자", "펀드코드", "기준가격"]
    long["유형"] = "국내주식형"
    long["설정원본"] = 1e11
    long.to_csv(tmp_path / "navs.csv", index=False)
    args = ["fund", "history", str(tmp_path / "navs.csv"), "--from", "2025-04", "--to", "2025-06"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "h")])
    assert result.exit_code == 0, result.output
    assert "data checks: refused 1 (K004)" in result.output
    latest = json.loads((tmp_path / "h" / "latest" / "summary.json").read_text(encoding="utf-8"))
    assert [r["fund_code"] for r in latest["data_checks"]["refused"]] == ["K004"]
    table = pd.read_csv(tmp_path / "h" / "history.csv", dtype={"fund_code": str})
    k4 = table[table["fund_code"] == "K004"].set_index("as_of")["status"]
    assert k4.iloc[-1] == ERROR and (k4.iloc[:-1] == OK).all()  # refused only on the date it shows


def test_a_first_date_x10_near_1000_kept_is_not_read_as_a_reset() -> None:
    navs, meta = _universe(level=1000.0)
    navs.iloc[0, 5] *= 10  # 10,000 then 1,000: the shape of a 결산 reset to 1,000
    kept = evaluate_universe(navs, meta, outliers="keep").fund("K005")
    assert kept.status == OK and "unadjusted_distribution" not in kept.reason_codes
    assert any("--outliers keep" in w and "첫 기준일" in w for w in kept.warnings)
    assert not any("결산" in w for w in kept.warnings)
