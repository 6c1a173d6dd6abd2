"""결산 distributions: total-return metrics against an independent numpy computation, realignment of
distributions dated one row early, and the detector of unadjusted resets on hundreds of generated funds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.engine.engine import NOT_RATED, OK, evaluate_universe
from evaluator.domains.fund.engine.total_return import Adjustments, total_return_levels

END = pd.Timestamp("2025-06-30")


def _world(funds: int, years: float, seed: int, vols: np.ndarray | None = None, drift: float = 0.10):
    """Business-day total-return levels following one market index, and that index."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end=END, periods=int(252 * years))
    market = rng.normal(drift / 252, 0.15 / np.sqrt(252), len(dates))
    vols = np.full(funds, 0.15) if vols is None else vols
    beta = vols / 0.15
    idio = rng.standard_normal((len(dates), funds)) * (0.25 * vols / np.sqrt(252))
    r = beta * market[:, None] + idio + 0.02 / 252
    r[0] = 0.0
    levels = 1000.0 * np.cumprod(1 + r, axis=0)
    bench = pd.Series(1000.0 * np.cumprod(1 + np.r_[0.0, market[1:]]), index=dates, name="KOSPI")
    codes = [f"F{i:03d}" for i in range(funds)]
    return pd.DataFrame(levels, index=dates, columns=codes), bench


def _settle(levels: pd.DataFrame, funds: list[str], min_gain: float = 0.0, seed: int = 0):
    """Pay out the gain above 1,000 once a year: NAV_t = NAV_{t−1}(1 + r_t) − D_t (rounded to 0.01)."""
    rng = np.random.default_rng(seed)
    nav = levels.copy()
    dist = pd.DataFrame(np.nan, index=levels.index, columns=funds)
    for code in funds:
        lv = levels[code].to_numpy()
        x = lv.copy()
        d = np.zeros(len(x))
        first = int(rng.integers(100, 250))
        for t in range(1, len(x)):
            x[t] = x[t - 1] * lv[t] / lv[t - 1]
            if t >= first and (t - first) % 252 == 0 and x[t - 1] > 1000.0 * (1 + min_gain):
                d[t] = round(x[t - 1] - 1000.0, 2)
                x[t] -= d[t]
            x[t] = round(x[t], 2)
        nav[code] = x
        dist[code] = d
    return nav, dist


def _meta(codes: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"type": "국내주식형", "set_amount": 1e11}, index=codes)


def _numpy_metrics(levels: np.ndarray, dates: pd.DatetimeIndex, years: int) -> dict[str, float]:
    """Independent: window start = last date on or before as-of − N years; plain numpy formulas."""
    start = int(np.searchsorted(dates, END - pd.DateOffset(years=years), side="right")) - 1
    w = levels[start:]
    r = w[1:] / w[:-1] - 1
    wealth = w / w[0]
    return {
        "annualized_return": (w[-1] / w[0]) ** (252 / len(r)) - 1,
        "annualized_volatility": r.std(ddof=1) * np.sqrt(252),
        "sharpe": r.mean() / r.std(ddof=1) * np.sqrt(252),
        "max_drawdown": (wealth / np.maximum.accumulate(wealth) - 1).min(),
    }


def _close(got: dict, want: dict) -> None:
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


def test_total_return_metrics_for_distribution_rate_and_adjusted_columns() -> None:
    levels, bench = _world(24, 3.2, seed=1, drift=0.25)
    settling = list(levels.columns[:12])
    nav, dist = _settle(levels, settling)
    assert (dist > 0).any().all()  # every settling fund paid
    nav_np, d_np = nav.to_numpy(), dist.reindex(columns=nav.columns).fillna(0.0).to_numpy()
    # independent total-return index: Π (NAV_t + D_t) / NAV_{t−1}
    ratio = np.ones_like(nav_np)
    ratio[1:] = (nav_np[1:] + d_np[1:]) / nav_np[:-1]
    truth = nav_np[0] * np.cumprod(ratio, axis=0)
    prev = np.vstack([nav_np[:1], nav_np[:-1]])
    rate = pd.DataFrame(
        np.where(d_np > 0, d_np / prev * 100.0, 0.0)[:, :12], index=nav.index, columns=settling
    )
    adjusted = pd.DataFrame(truth[:, :12] * 1.7, index=nav.index, columns=settling)  # any scale
    for adj in (Adjustments(distribution=dist), Adjustments(rate=rate), Adjustments(adjusted=adjusted)):
        ev = evaluate_universe(nav, _meta(list(nav.columns)), benchmark=bench, adjustments=adj)
        for j, code in enumerate(nav.columns):
            f = ev.fund(code)
            assert f.status == OK and not f.reason_codes, (code, f.errors)
            for years in (1, 3):
                _close(f.metrics[f"{years}y"], _numpy_metrics(truth[:, j], nav.index, years))
        assert {ev.fund(c).return_basis for c in settling} == {
            "distribution" if adj.distribution is not None else "rate" if adj.rate is not None else "adjusted"
        }
    # without the column the same funds are caught, not graded on their resets
    bare = evaluate_universe(nav, _meta(list(nav.columns)), benchmark=bench)
    assert all(bare.fund(c).reason_codes == ("unadjusted_distribution",) for c in settling)
    assert all(bare.fund(c).status == OK for c in nav.columns[12:])


def test_distribution_dated_on_the_settlement_day_is_realigned() -> None:
    levels, bench = _world(16, 2.5, seed=2, drift=0.25)
    settling = list(levels.columns[:8])
    nav, dist = _settle(levels, settling, seed=3)
    early = dist.shift(-1)  # the vendor dates it one row early, on the 결산일
    ev_true = evaluate_universe(
        nav, _meta(list(nav.columns)), benchmark=bench, adjustments=Adjustments(distribution=dist)
    )
    ev_early = evaluate_universe(
        nav, _meta(list(nav.columns)), benchmark=bench, adjustments=Adjustments(distribution=early)
    )
    for code in settling:
        assert ev_early.fund(code).metrics == ev_true.fund(code).metrics
        assert any("분배락일로 한 행 옮겨" in w for w in ev_early.fund(code).warnings)
        assert not any("분배락일로" in w for w in ev_true.fund(code).warnings)


def test_levels_of_a_fund_without_distributions_are_its_navs() -> None:
    nav = np.array([[1000.0, np.nan], [1010.0, 1000.0], [np.nan, 990.0], [1020.0, 1001.0]])
    dist = np.array([[0.0, np.nan], [0.0, np.nan], [np.nan, np.nan], [15.0, np.nan]])
    got = total_return_levels(nav, dist)
    assert np.isnan(got[2, 0]) and np.isnan(got[0, 1])
    assert got[3, 0] == pytest.approx(1000.0 * 1.01 * (1035.0 / 1010.0), rel=1e-12)  # hole: from the last NAV
    np.testing.assert_allclose(got[1:, 1], nav[1:, 1], rtol=1e-12)


def test_reset_detector_catches_every_resetting_fund_and_flags_no_continuous_one() -> None:
    funds = 240
    vols = np.random.default_rng(5).uniform(0.02, 0.30, funds)
    levels, bench = _world(funds, 4.0, seed=6, vols=vols, drift=0.12)
    codes = list(levels.columns)
    # resetting funds pay gains of 3 % or more; smaller payouts are kept (유보), below what the detector sees
    nav, dist = _settle(levels, codes[::2], min_gain=0.03, seed=7)
    resetting = {c for c in codes[::2] if (dist[c] > 0).any()}
    assert len(resetting) >= 100
    for benchmark in (bench, None):  # the market move is the benchmark's, else the peers' median
        ev = evaluate_universe(nav, _meta(codes), benchmark=benchmark)
        flagged = {f.fund_code for f in ev.funds if f.reason_codes == ("unadjusted_distribution",)}
        assert flagged == resetting
        for code in flagged:
            f = ev.fund(code)
            assert f.status == NOT_RATED and f.grade is None
            assert any("결산" in e and "수정기준가격" in e and "분배금" in e for e in f.errors)
    allowed = evaluate_universe(nav, _meta(codes), benchmark=bench, allow_unadjusted=True)
    for code in resetting:
        f = allowed.fund(code)
        assert f.status == OK and any("--allow-unadjusted" in w for w in f.warnings)
