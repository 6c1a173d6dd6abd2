"""The parts behind the fund page and the readable pages, against independent implementations and real inputs.

Period returns: the engine's trailing returns against a pandas computation on a varied NAV matrix (gaps, a young
fund, ties); 유형 ranks, averages and quartiles by hand. Upload errors: the real loader's messages for broken files,
reworded in Korean naming the file and what to fix, never a command-line flag. Proportion intervals: Wilson
against statsmodels; a 0/20 accuracy gets a real interval in reports and in the run viewer."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.engine.period_returns import WINDOW_MONTHS, peer_table, trailing_returns


def _nav_matrix() -> tuple[np.ndarray, pd.DatetimeIndex]:
    dates = pd.bdate_range("2018-01-01", "2025-06-30")
    rng = np.random.default_rng(3)
    levels = np.cumprod(1 + rng.normal(0.0003, 0.01, size=(len(dates), 4)), axis=0) * 1000
    levels[: len(dates) - 300, 2] = np.nan  # a young fund: a little over a year of history
    levels[-40:-30, 3] = np.nan  # a gap inside the 3-month window (its ends still priced)
    return levels, dates


def test_trailing_returns_match_pandas_and_skip_windows_a_young_fund_lacks() -> None:
    levels, dates = _nav_matrix()
    as_of = pd.Timestamp("2025-06-30")
    got = trailing_returns(levels, dates, as_of)
    frame = pd.DataFrame(levels, index=dates)
    for window, months in WINDOW_MONTHS.items():
        start = frame.loc[: as_of - pd.DateOffset(months=months)].iloc[-1]
        expected = frame.loc[:as_of].iloc[-1] / start - 1
        np.testing.assert_allclose(got[window], expected.to_numpy(), rtol=1e-12, equal_nan=True)
    assert np.isnan(got["3y"][2]) and np.isfinite(got["1y"][2])  # never a shorter window passed off as 3년


def test_trailing_returns_before_the_data_begin_are_empty() -> None:
    levels, dates = _nav_matrix()
    got = trailing_returns(levels, dates, pd.Timestamp("2018-01-15"))
    assert all(np.isnan(v).all() for v in got.values())


def test_peer_table_ranks_averages_and_quartiles_within_each_type() -> None:
    returns = {"1y": np.array([0.10, 0.30, 0.10, -0.05, 0.20, np.nan, 0.05, 0.01, 0.02])}
    groups = ["A", "A", "A", "A", "A", "A", "B", "B", "B"]
    table = peer_table(returns, groups)
    a = [table[i]["1y"] for i in range(5)]
    assert [r["rank"] for r in a] == [3, 1, 3, 5, 2]  # ties share the better rank
    assert all(r["peers"] == 5 for r in a) and table[5] == {}  # no figure, no row
    assert a[0]["type_average"] == pytest.approx(np.mean([0.10, 0.30, 0.10, -0.05, 0.20]))
    assert [r["quartile"] for r in a] == [math.ceil(4 * r["rank"] / 5) for r in a] == [3, 1, 3, 4, 2]
    b = table[6]["1y"]
    assert (b["rank"], b["peers"], b["quartile"]) == (1, 3, None)  # fewer than four peers: no quartile


BROKEN = {
    "nodate.csv": ("펀드코드,기준가격\nA,1000\n", "날짜 열"),
    "nonav.csv": ("기준일자,펀드코드\n2024-01-02,A\n", "기준가격 열"),
    "nocode.csv": ("기준일자,기준가격\n2024-01-02,1000\n", "펀드코드 열"),
    "nohead.csv": ("1,2\n3,4\n", "머리글"),
    "bytes.csv": (None, "UTF-8 또는 CP949"),
    "empty.csv": ("기준일자,펀드코드,기준가격\n", "기준가격 자료가 한 줄도"),
    "notype.csv": ("기준일자,펀드코드,기준가격\n" + "".join(f"2024-01-{i:02d},A,{1000 + i}\n" for i in range(2, 28)),
                   "'유형' 열"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_upload_errors_say_in_korean_what_to_fix_in_the_form(name: str, tmp_path: Path) -> None:
    from evaluator.app.web.upload_errors import upload_error
    from evaluator.domains.fund.data.loaders import load_universe
    from evaluator.domains.fund.data.readers import DataError

    text, needle = BROKEN[name]
    path = tmp_path / "staged-data"
    path.write_bytes(b"\xff\xfe\x00\x81\x82\x83,\xff\n\x80\x80" if text is None else text.encode("utf-8"))
    with pytest.raises(DataError) as caught:
        load_universe(path)
    message = str(caught.value).replace(str(path), name)  # as the job stores it: the client's file name
    said = upload_error(message, {"data": {"name": name, "bytes": 10}})
    assert needle in said["text"] and said["detail"] is None
    assert "--" not in said["text"] and "다시 올리세요" in said["text"]
    if name != "notype.csv" and name != "empty.csv":
        assert f"기준가격(NAV) 파일({name})" in said["text"]


def test_an_unknown_failure_is_still_korean_and_names_no_flag() -> None:
    from evaluator.app.web.upload_errors import state_label, upload_error

    said = upload_error("DATA x.csv: something odd; pick one with --type-column NAME", {"data": {"name": "x.csv"}})
    assert said["text"].startswith("기준가격(NAV) 파일(x.csv)로 평가를 시작하지 못했습니다")
    assert said["detail"] and "--" not in said["detail"] and "something odd" in said["detail"]
    assert [state_label(s) for s in ("queued", "running", "done", "failed")] == ["대기", "진행 중", "완료", "실패"]


@pytest.mark.parametrize(("k", "n"), [(0, 20), (20, 20), (0, 1), (3, 7), (1, 50), (49, 50), (10, 20)])
def test_wilson_interval_matches_statsmodels(k: int, n: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    from evaluator.evaluation.stats import wilson_ci

    lo, hi = wilson_ci(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_a_zero_of_twenty_accuracy_gets_a_real_interval() -> None:
    from statsmodels.stats.proportion import proportion_confint

    from evaluator.evaluation import scoring, stats

    zero = scoring._with_ci([0.0] * 20, seed=0)
    assert zero["value"] == 0.0 and zero["ci95"][0] == 0.0
    assert zero["ci95"][1] == pytest.approx(proportion_confint(0, 20, method="wilson")[1]) and zero["ci95"][1] > 0.15
    mixed = [1.0, 0.0, 0.5, 1.0, 0.0]
    assert scoring._with_ci(mixed, seed=0)["ci95"] == stats.bootstrap_ci(mixed, seed=0)  # unchanged elsewhere
    assert scoring._with_ci([0.4] * 5, seed=0)["ci95"] == [0.4, 0.4]  # a constant inside (0, 1) is no proportion end


def test_the_run_viewer_gives_a_logged_zero_accuracy_its_interval_and_whole_step_ticks() -> None:
    from statsmodels.stats.proportion import proportion_confint

    from evaluator.app.run_folders.metrics import MetricsTable, Series, chart_groups
    from evaluator.app.web.run_pages.charts import training_charts

    steps = [4.0, 8.0, 12.0]
    table = MetricsTable(series={
        "reward": Series([1.0, 2.0, 3.0], [0.1, 0.2, 0.3]),
        "eval/accuracy": Series(steps, [0.0, 0.25, 1.0]),
        "eval/accuracy_ci_low": Series(steps, [0.0, 0.1, 1.0]),
        "eval/accuracy_ci_high": Series(steps, [0.0, 0.45, 1.0]),
        "eval/n": Series(steps, [20.0, 20.0, 20.0]),
    })
    charts = training_charts(chart_groups(table))
    held = next(c for c in charts if c["title"] == "검증 세트 평가")
    trace = held["spec"]["data"][0]
    assert trace["name"] == "검증 정확도"
    upper0 = proportion_confint(0, 20, method="wilson")[1]
    assert trace["error_y"]["array"][0] == pytest.approx(upper0) and trace["error_y"]["arrayminus"][0] == 0
    assert trace["error_y"]["array"][1] == pytest.approx(0.2)  # a logged interval is kept as it is
    assert trace["error_y"]["arrayminus"][2] == pytest.approx(1 - proportion_confint(20, 20, method="wilson")[0])
    for chart in charts:
        axis = chart["spec"]["layout"]["xaxis"]
        assert axis["title"]["text"] == "학습 단계 (step)" and isinstance(axis["dtick"], int) and axis["dtick"] >= 1
        assert not any(c.isascii() and c.isalpha() for c in chart["title"].split("(")[0])  # Korean titles
