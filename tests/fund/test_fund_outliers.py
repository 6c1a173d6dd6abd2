"""NAV typos are never graded silently: planted ×10, ÷10, ×100, digit-twice and multi-day typos in a
varied universe are all caught, and no genuine move (a shared crash, a leveraged fund, a drop that stays,
a 결산 reset) is flagged; the other funds' grades do not move; repair and keep say what they did."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.data.loaders import Universe
from evaluator.domains.fund.engine.engine import ERROR, NOT_RATED, OK, evaluate_universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.engine.outliers import NAV_OUTLIER, find_outliers
from evaluator.domains.fund.history.run import as_of_dates, history_row, parse_month, run_history
from evaluator.domains.fund.rubric import default_rubric

runner = CliRunner()
TYPES = {"국내주식형": 0.18, "해외주식형": 0.22, "채권형": 0.03, "혼합형": 0.10}
CRASH = 500
"""The row where every 국내주식형 fund falls with its benchmark (−25 %) and is back the next day."""


def _typo(kind: str, v: float) -> float:
    if kind == "x10":
        return v * 10
    if kind == "d10":
        return v / 10
    if kind == "x100":
        return v * 100
    whole, frac = f"{v:.2f}".split(".")  # a digit typed twice: 1052.34 → 10552.34
    return float(whole[:2] + whole[1:] + "." + frac)


def _planted_universe(seed: int = 5) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict, set, dict]:
    """~240 funds over four years: varied volatility, leveraged and single-stock funds, a shared crash,
    drops that stay, raw-NAV funds that reset to 1,000 each year, and planted typos."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    n_days = len(dates)
    bench_r = {t: rng.normal(2e-4, v / np.sqrt(252), n_days) for t, v in TYPES.items()}
    crash = np.array([-0.25, 0.30, 0.02, 0.0])  # a one-day V: only the market explains it
    bench_r["국내주식형"][CRASH : CRASH + 4] = crash
    codes, types, rets, genuine = [], [], [], {}
    for k in range(240):
        t = list(TYPES)[k % 4]
        beta = rng.uniform(0.8, 1.2)
        idio = TYPES[t] * rng.uniform(0.1, 0.5) / np.sqrt(252)
        kind = "plain"
        if k % 20 == 0 and t == "국내주식형":
            beta, idio, kind = 2.0, 0.02, "leveraged"  # a 2× fund: −50 % on the crash day
        elif k % 20 == 4:
            idio, kind = 0.035, "single_stock"  # daily moves of several percent
        r = beta * bench_r[t] + rng.normal(0, idio, n_days)
        if k % 25 == 7:
            r[rng.integers(200, 900)] = -0.4  # a fund-specific loss that stays
            kind = "stay_down"
        codes.append(f"F{k:03d}")
        types.append(t)
        rets.append(r)
        if kind != "plain":
            genuine[codes[-1]] = kind
        if t == "국내주식형":
            genuine.setdefault(codes[-1], "crash")
    nav = 1000 * np.cumprod(1 + np.array(rets).T, axis=0)
    for k in range(3, 240, 40):  # raw 기준가격 that resets to 1,000 at each 결산 (gain paid out)
        code = codes[k]
        level = nav[:, k] / nav[0, k] * 1000 * 1.0
        paid = level.copy()
        base = 1000.0
        for e in range(252, n_days, 252):
            factor = paid[e - 1] / base
            if factor > 1.03:
                paid[e:] = paid[e:] / factor
        nav[:, k] = paid
        genuine[code] = "reset"
    navs = pd.DataFrame(nav, index=dates, columns=codes)
    planted: dict[str, list[str]] = {}
    kinds = ("x10", "d10", "x100", "digit", "x10_2day", "d10_3day")
    candidates = [
        c for c in codes if c not in genuine or genuine[c] in ("single_stock", "crash", "leveraged")
    ]
    picked = rng.choice(candidates, 48, replace=False)
    for j, code in enumerate(picked):
        kind = kinds[j % len(kinds)]
        row = int(rng.integers(80, n_days - 10))
        if abs(row - CRASH) < 8:
            row += 20
        days = 3 if kind.endswith("3day") else 2 if kind.endswith("2day") else 1
        base_kind = kind.split("_")[0]
        for d in range(days):
            navs.iloc[row + d, navs.columns.get_loc(code)] = _typo(base_kind, navs.iloc[row + d][code])
        planted[code] = [dates[row + d].strftime("%Y-%m-%d") for d in range(days)]
    meta = pd.DataFrame({"type": types, "set_amount": 1e11}, index=pd.Index(codes, name="fund_code"))
    bench = pd.DataFrame(
        {t: 1000 * np.cumprod(1 + r) for t, r in bench_r.items()}, index=dates, columns=list(TYPES)
    )
    return navs, meta, bench, planted, set(genuine) - set(planted), genuine


@pytest.fixture(scope="module")
def planted() -> tuple:
    navs, meta, bench, typos, genuine, kinds = _planted_universe()
    ev = evaluate_universe(navs, meta, benchmark=bench)
    return navs, meta, bench, typos, genuine, kinds, ev


def test_every_planted_typo_is_caught_and_no_genuine_move_is_flagged(planted: tuple) -> None:
    navs, _meta, _bench, typos, genuine, kinds, ev = planted
    flagged = {f.fund_code for f in ev.funds if NAV_OUTLIER in f.reason_codes}
    tp = len(flagged & set(typos))
    precision = tp / max(len(flagged), 1)
    recall = tp / len(typos)
    print(
        f"\nNAV outliers: {len(navs.columns)} funds, {len(typos)} planted typos, {len(flagged)} flagged, "
        f"precision {precision:.3f}, recall {recall:.3f}; genuine moves checked: "
        + ", ".join(f"{k} {sum(1 for c in genuine if kinds[c] == k)}" for k in sorted(set(kinds.values())))
    )
    assert recall == 1.0 and precision == 1.0
    assert not flagged & genuine
    for code, days in typos.items():
        fund = ev.fund(code)
        assert fund.status == ERROR and fund.grade is None
        text = " ".join(fund.errors)
        assert all(day in text for day in days), (code, days, text)
        assert "기준가격" in text and "원복" in text and "전일 대비" in text
    # the shared crash is a jump that comes back the next day: only its benchmark and peers clear it
    alone = find_outliers(np.ascontiguousarray(navs.to_numpy()), np.arange(navs.shape[1]).astype(object))
    blind = {navs.columns[c] for c in alone.episodes} - set(typos)
    assert blind and {kinds[c] for c in blind} <= {"crash", "stay_down", "leveraged"}
    # the genuine ones are graded as before: resets are the reset detector's, not the outlier detector's
    for code in genuine:
        fund = ev.fund(code)
        assert NAV_OUTLIER not in fund.reason_codes
        if kinds[code] == "reset":
            assert fund.status == NOT_RATED and "unadjusted_distribution" in fund.reason_codes
        else:
            assert fund.status == OK, (code, kinds[code], fund.errors)


def test_a_typo_fund_changes_no_other_funds_grade_or_score(planted: tuple) -> None:
    navs, meta, bench, typos, _genuine, _kinds, ev = planted
    without = evaluate_universe(navs.drop(columns=list(typos)), meta.drop(index=list(typos)), benchmark=bench)
    for f in without.funds:
        g = ev.fund(f.fund_code)
        assert (g.status, g.grade, g.score, g.peer_percentile) == (
            f.status,
            f.grade,
            f.score,
            f.peer_percentile,
        )


def _small(seed: int = 1, funds: int = 24) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    r = rng.normal(3e-4, 0.008, (len(dates), funds))
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"F{i:02d}" for i in range(funds)]
    )
    return navs, pd.DataFrame({"type": "국내주식형", "set_amount": 1e11}, index=navs.columns)


def test_repair_reads_the_typo_as_a_missing_date_and_keep_grades_it_with_a_warning() -> None:
    navs, meta = _small()
    typo = navs.copy()
    typo.iloc[700, 0] *= 10
    missing = navs.copy()
    missing.iloc[700, 0] = np.nan  # the same date simply absent: filled forward by the calendar rule
    repaired = evaluate_universe(typo, meta, outliers="repair")
    absent = evaluate_universe(missing, meta)
    f, g = repaired.fund("F00"), absent.fund("F00")
    assert f.status == OK and f.metrics == g.metrics and f.grade == g.grade
    assert any("--outliers repair" in w and navs.index[700].strftime("%Y-%m-%d") in w for w in f.warnings)
    kept = evaluate_universe(typo, meta, outliers="keep").fund("F00")
    assert kept.status == OK and any("--outliers keep" in w for w in kept.warnings)
    assert kept.metrics["3y"]["annualized_volatility"] > 1.0  # graded on the bad price, as asked
    longer = typo.copy()
    longer.iloc[700:705, 1] /= 10  # five days: beyond the fill limit, so repair cannot fill it
    f1 = evaluate_universe(longer, meta, outliers="repair").fund("F01")
    assert f1.status == ERROR and "이어 쓸 수 없습니다" in f1.errors[0]


def test_a_typo_landing_near_1000_is_an_outlier_not_a_reset() -> None:
    navs, meta = _small(seed=2)
    navs["F03"] = navs["F03"] * 10  # a fund priced around 10,000: ÷10 lands near 1,000, like a reset
    navs.iloc[600, 3] /= 10
    ev = evaluate_universe(navs, meta, outliers="keep")
    f = ev.fund("F03")
    assert f.status == OK and "unadjusted_distribution" not in f.reason_codes
    assert any("이상치" in w for w in f.warnings) and not any("결산" in w for w in f.warnings)
    assert evaluate_universe(navs, meta).fund("F03").reason_codes == (NAV_OUTLIER,)


def test_history_counts_a_typo_only_on_dates_whose_windows_hold_it() -> None:
    rng = np.random.default_rng(4)
    dates = pd.bdate_range("2013-01-02", "2025-06-30")
    r = rng.normal(3e-4, 0.008, (len(dates), 12))
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"F{i:02d}" for i in range(12)]
    )
    row = int(dates.searchsorted(pd.Timestamp("2014-06-16")))
    navs.iloc[row, 0] *= 10
    meta = pd.DataFrame(
        {"type": "국내주식형", "set_amount": 1e11}, index=pd.Index(navs.columns, name="fund_code")
    )
    universe = Universe(navs=navs, meta=meta, issues={})
    rubric = default_rubric()
    months = as_of_dates(universe, parse_month("2014-03", "--from"), parse_month("2025-06", "--to"), "Q")
    hist = run_history(universe, rubric, months)
    f0 = hist.table[hist.table["fund_code"] == "F00"].set_index("as_of")["status"]
    before, held, after = f0[:"2014-03-31"], f0["2014-06-30":"2024-03-29"], f0["2024-06-28":]
    assert (before != ERROR).all()  # the typo has not happened yet
    assert (held == ERROR).all() and len(held) == 40  # every 10-year window from then on holds it
    assert (after != ERROR).all() and len(after) == 5  # no window reaches back to it any more
    for when in ("2014-06-30", "2024-03-29", "2024-06-28"):
        single = evaluate_loaded(universe, rubric, as_of=dt.date.fromisoformat(when))
        day = hist.table[hist.table["as_of"] == when].set_index("fund_code")
        for fund in single.funds:
            expected = history_row(fund, str(rubric["version"]))
            got = day.loc[fund.fund_code]
            for col in ("status", "grade", "score", "peer_percentile"):
                value = got[col]
                value = None if value is None or (not isinstance(value, str) and pd.isna(value)) else value
                assert (
                    value == pytest.approx(expected[col])
                    if isinstance(value, float)
                    else value == expected[col]
                )
    repaired = run_history(universe, rubric, months[-6:], outliers="repair")
    assert repaired.table[repaired.table["fund_code"] == "F00"]["status"].eq(OK).all()


def test_stored_batches_hold_the_typo_fund_as_an_error_and_the_mode_is_part_of_their_identity(
    tmp_path: Path,
) -> None:
    navs, _meta = _small(seed=6, funds=12)
    navs.iloc[650, 2] *= 10
    long = navs.stack().rename("기준가격").reset_index()
    long.columns = ["기준일자", "펀드코드", "기준가격"]
    long["유형"] = "국내주식형"
    long["설정원본"] = 1e11
    long.to_csv(tmp_path / "navs.csv", index=False)
    db = f"sqlite:///{tmp_path / 'runs.db'}"

    def run(out: str, *extra: str) -> str:
        result = runner.invoke(
            app,
            ["fund", "evaluate", str(tmp_path / "navs.csv"), "-o", str(tmp_path / out), "--db", db, *extra],
        )
        assert result.exit_code == 0, result.output
        return result.output

    assert "stored run 1" in run("a")
    report = json.loads((tmp_path / "a" / "F02.json").read_text(encoding="utf-8"))
    assert (
        report["status"] == ERROR
        and report["reason_codes"] == [NAV_OUTLIER]
        and "원복" in report["errors"][0]
    )
    assert "stored run 2" in run(
        "b", "--outliers", "keep"
    )  # other grades: another batch, not "already stored"
    bad = runner.invoke(
        app, ["fund", "evaluate", str(tmp_path / "navs.csv"), "-o", str(tmp_path / "d"), "--outliers", "drop"]
    )
    assert bad.exit_code != 0 and "error, repair, keep" in bad.output


def test_a_jump_on_the_last_dates_that_has_not_come_back_is_not_graded() -> None:
    navs, meta = _small(seed=3)
    navs.iloc[-1, 4] *= 10  # on the as-of date itself: nothing can confirm it, so it is not graded
    ev = evaluate_universe(navs, meta)
    f = ev.fund("F04")
    assert f.status == ERROR and f.reason_codes == ("nav_outlier_unconfirmed",)
    assert navs.index[-1].strftime("%Y-%m-%d") in f.errors[0] and "돌아오지 않음" in f.errors[0]
    assert all(g.status == OK for g in ev.funds if g.fund_code != "F04")
