"""The Korean 하위 N% text uses the share-class weights the ranking used, and 운용기간 is written so that the
number shown never contradicts the limit it is compared with."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.engine import OK, evaluate_universe
from evaluator.domains.fund.reports.report import narrative_ko
from evaluator.domains.fund.rubric import default_rubric
from evaluator.domains.fund.wording import years_ko


def _navs(funds: int, seed: int, start_rows: dict[int, int] | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    r = rng.normal(3e-4, 0.01, (len(dates), funds)) + rng.normal(0, 3e-4, funds)
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"C{i:02d}" for i in range(funds)]
    )
    for i, row in (start_rows or {}).items():
        navs.iloc[:row, i] = np.nan
    return navs


def test_the_bottom_share_in_the_text_uses_the_class_weights() -> None:
    navs = _navs(14, seed=21)
    families = [f"P{i}" for i in range(14)]
    for i in (0, 1, 2, 3):  # one portfolio in four classes, one in three
        families[i] = "FAM4"
    for i in (4, 5, 6):
        families[i] = "FAM3"
    meta = pd.DataFrame(
        {"type": "국내주식형", "set_amount": 1e11, "family_code": families},
        index=pd.Index(navs.columns, name="fund_code"),
    )
    ev = evaluate_universe(navs, meta)
    rated = [f for f in ev.funds if f.status == OK]
    assert len(rated) == 14
    weight = {f.fund_code: 1.0 / f.portfolio_classes for f in rated}
    total = sum(weight.values())  # the number of portfolios: 9
    assert abs(total - 9) < 1e-9
    checked = 0
    for f in rated:
        below_or_me = sum(weight[g.fund_code] for g in rated if g.score <= f.score)  # independent rule
        expected = 100.0 * below_or_me / total
        text = narrative_ko(f, ev.rubric)
        m = re.search(r"하위 (\d+\.\d)%", text)
        if f.peer_percentile > 50:
            assert m is not None and float(m.group(1)) == round(expected, 1), (f.fund_code, text, expected)
            checked += 1
            if f.portfolio_classes > 1:  # 100/14 classes would say something else
                unweighted = 100 - f.peer_percentile + 100 / 14
                assert abs(unweighted - expected) > 0.05
    assert checked >= 4


def test_years_are_cut_not_rounded_beside_a_limit() -> None:
    assert [years_ko(x) for x in (2.97, 2.999, 3.0, 0.98, 1.0, 1.04, 0.04)] == [
        "2.9", "2.9", "3.0", "0.9", "1.0", "1.0", "0.0"
    ]  # fmt: skip
    rubric = {
        **default_rubric(),
        "provisional": {"min_history_years": 1, "max_history_years": 3, "window": "1y"},
    }
    dates = _navs(1, 0).index
    as_of = dates[-1]

    def start(years: float) -> int:
        return int(dates.searchsorted(as_of - pd.Timedelta(days=round(years * 365.25))))

    navs = _navs(12, seed=22, start_rows={0: start(2.985), 1: start(0.985)})
    meta = pd.DataFrame(
        {"type": "국내주식형", "set_amount": 1e11}, index=pd.Index(navs.columns, name="fund_code")
    )
    ev = evaluate_universe(navs, meta, rubric)
    young, younger = ev.fund("C00"), ev.fund("C01")
    assert 2.95 < young.history_years < 3 and 0.95 < younger.history_years < 1
    text = " ".join([*young.warnings, narrative_ko(young, rubric)])
    assert "2.9년(가등급 대상 1년 이상 3년 미만)" in text and "3.0년" not in text
    assert any("0.9년으로 가등급 최소 운용기간 1년에도 못 미칩니다" in e for e in younger.errors), (
        younger.errors
    )
