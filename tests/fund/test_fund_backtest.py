"""`evaluator fund backtest`: statistics on a hand-computed universe, the oracle, bad input, skill / no skill."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.schemas import load_schema, schema_problems
from evaluator.domains.fund.data.readers import DataError
from evaluator.domains.fund.data.sample import sample_universe
from evaluator.domains.fund.history.backtest import analyse, backtest, forward_frame, load_history
from evaluator.domains.fund.history.backtest_stats import block_ci, block_indices, newey_west_t, spearman
from evaluator.domains.fund.history.io import write_history
from evaluator.domains.fund.history.run import as_of_dates, parse_month, run_history
from evaluator.domains.fund.rubric import default_rubric

runner = CliRunner()
D = ["2024-01-31", "2024-02-29", "2024-03-29", "2024-04-30"]
CODES = list("ABCDEF")


def _tiny() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six funds of one 유형, four month-ends; F stops reporting after January (see the test for the sums)."""
    grades = {
        D[0]: [1, 2, 3, 4, 5, 5],
        D[1]: [1, 2, 3, 4, 5, None],
        D[2]: [2, 1, 3, 5, 4, None],
        D[3]: [1, 1, 3, 5, 4, None],
    }
    scores = {
        D[0]: [90, 70, 50, 30, 10, 5],
        D[1]: [90, 70, 50, 30, 10, None],
        D[2]: [70, 90, 50, 10, 30, None],
        D[3]: [90, 80, 50, 10, 30, None],
    }
    forward = {  # returns from the as-of date to the next one
        D[0]: [0.10, 0.05, 0.0, -0.05, -0.10, 0.0],
        D[1]: [0.0, 0.10, 0.05, -0.05, 0.0],
        D[2]: [0.02, 0.01, 0.0, -0.01, -0.02],
    }
    rows, levels = [], []
    level = dict.fromkeys(CODES, 100.0)
    for k, d in enumerate(D):
        for i, c in enumerate(CODES):
            g = grades[d][i]
            rows.append(
                {
                    "fund_code": c,
                    "as_of": d,
                    "status": "ok" if g is not None else "not_rated",
                    "grade": g,
                    "score": scores[d][i],
                    "type": "국내주식형",
                }
            )
            gone = c == "F" and k > 0
            levels.append({"fund_code": c, "as_of": d, "level": level[c], "level_date": D[0] if gone else d})
        if k < 3:
            for i, c in enumerate(CODES):
                if i < len(forward[d]) and c != "F":
                    level[c] *= 1 + forward[d][i]
    table = pd.DataFrame(rows)
    table["grade"] = table["grade"].astype("Int64")
    return table, pd.DataFrame(levels)


def test_hand_computed_universe() -> None:
    table, levels = _tiny()
    frame, dates, steps = forward_frame(table, levels, 1, "M")
    assert dates == D[:3] and steps == 1
    assert len(frame) == 16 and int(frame["stopped"].sum()) == 1
    assert frame.loc[(frame["fund_code"] == "F"), "forward"].tolist() == [0.0]  # kept: return to its last NAV
    doc = analyse(frame, dates, steps, reps=200)
    g1, g5 = doc["grades"]["1"], doc["grades"]["5"]
    # grade 1: A at D0 (+10 %), A at D1 (0), B at D2 (+1 %); peer medians are 0 on every date
    assert math.isclose(g1["mean_excess"], 0.11 / 3) and math.isclose(g1["median_excess"], 0.01)
    assert math.isclose(g1["hit_rate"], 2 / 3) and g1["observations"] == 3
    # grade 5: E (−10 %), F (0, stopped), E (0), D (−1 %)
    assert math.isclose(g5["mean_excess"], -0.11 / 4) and g5["hit_rate"] == 0.0 and g5["stopped"] == 1
    ics = [p["ic"] for p in doc["ic"]["by_date"]]
    want = [13 / math.sqrt(17.5 * 17), 4 / math.sqrt(10 * 9.5), 0.8]
    assert np.allclose(ics, want, atol=1e-12)
    assert math.isclose(doc["ic"]["mean"], sum(want) / 3) and doc["ic"]["share_positive"] == 1.0
    m = doc["migration"]
    assert m["matrix"]["1"] == {"1": 2, "2": 1, "3": 0, "4": 0, "5": 0, "unrated": 0}
    assert m["matrix"]["2"] == {"1": 2, "2": 1, "3": 0, "4": 0, "5": 0, "unrated": 0}
    assert m["matrix"]["3"]["3"] == 3
    assert m["matrix"]["4"] == {"1": 0, "2": 0, "3": 0, "4": 2, "5": 1, "unrated": 0}
    assert m["matrix"]["5"] == {"1": 0, "2": 0, "3": 0, "4": 1, "5": 2, "unrated": 1}
    assert m["graded_at_both"] == 15 and math.isclose(m["persistence"], 10 / 15)
    assert doc["monotonicity"]["monotone"] is False  # grade 2 (+5 %, +10 %, +1 % → …) beats grade 1


def test_too_few_dates_give_null_with_a_reason() -> None:
    table, levels = _tiny()
    frame, dates, steps = forward_frame(table, levels, 2, "M")
    assert dates == D[:2] and steps == 2
    doc = analyse(frame, dates, steps, reps=200)
    assert doc["ic"]["mean"] is None and "fewer than 3" in doc["ic"]["reason"]
    assert doc["grades"]["1"]["mean_excess_ci95"] is None and "bootstrap" in doc["grades"]["1"]["reason"]
    assert doc["grades"]["1"]["mean_excess"] is not None  # the point estimate is still there
    with pytest.raises(DataError, match="longer than the history"):
        forward_frame(table, levels, 4, "M")
    with pytest.raises(DataError, match="multiple of 3"):
        forward_frame(table, levels, 4, "Q")


def test_spearman_by_hand_and_refusals() -> None:
    a = np.array([1.0, 2, 3, 4, 5])
    b = np.array([5.0, 6, 7, 8, 7])  # a tie: average ranks 3.5
    assert math.isclose(spearman(a, b), 8 / math.sqrt(95))
    assert spearman(a[:4], b[:4]) is None  # fewer than five funds
    assert spearman(a, np.full(5, 3.0)) is None  # no spread
    assert spearman(np.r_[a, np.nan], np.r_[b, 1.0]) == spearman(a, b)


@pytest.mark.parametrize("lag", [0, 1, 3, 11])
def test_newey_west_matches_statsmodels(lag: int) -> None:
    x = np.random.default_rng(lag).normal(0.03, 0.1, 48) + np.sin(np.arange(48) / 3) * 0.05
    oracle = sm.OLS(x, np.ones_like(x)).fit(
        cov_type="HAC", cov_kwds={"maxlags": lag, "use_correction": False}
    )
    assert math.isclose(newey_west_t(x, lag), float(oracle.tvalues[0]), rel_tol=1e-10)


def test_block_bootstrap_draws_whole_blocks() -> None:
    idx = block_indices(10, 3, reps=50, seed=1)
    assert idx.shape == (50, 10) and idx.min() >= 0 and idx.max() <= 9
    for row in idx:
        for start in range(0, 9, 3):  # each block is consecutive dates
            block = row[start : start + 3]
            assert np.all(np.diff(block) == 1)
    ci, why = block_ci(5, 3, lambda i: float(i.mean()))
    assert ci is None and "fewer than two bootstrap blocks" in why
    ci, why = block_ci(40, 2, lambda i: float(np.arange(40)[i].mean()), reps=300)
    assert why is None and ci[0] < 19.5 < ci[1]


def _history(tmp: Path, skill: tuple[float, float], seed: int, funds: int = 100) -> Path:
    u = sample_universe(funds=funds, years=12, seed=seed, skill=skill)
    dates = as_of_dates(u, parse_month("2016-09", "--from"), parse_month("2025-06", "--to"), "Q")
    out = tmp / f"h{seed}"
    write_history(run_history(u, default_rubric(), dates), out, freq="Q")
    return out


@pytest.mark.slow
def test_planted_skill_is_found_and_no_skill_is_not(tmp_path: Path) -> None:
    # 30 % of the funds have an information ratio of 0.5 (alpha = 0.5 × tracking error a year)
    skilled = backtest(_history(tmp_path, (0.3, 0.5), 7), 12, reps=500)["all"]["ic"]
    assert skilled["mean"] > 0 and skilled["ci95"][0] > 0, skilled
    none = backtest(_history(tmp_path, (0.0, 0.0), 2), 12, reps=500)["all"]["ic"]
    assert none["ci95"][0] < 0 < none["ci95"][1], none


def test_cli_end_to_end_schema_plots_and_errors(tmp_path: Path) -> None:
    hist = tmp_path / "hist"
    args = ["fund", "history", "--sample", "--sample-funds", "40", "--sample-years", "5", "--freq", "Q"]
    r = runner.invoke(app, [*args, "--from", "2023-06", "--to", "2025-06", "--out", str(hist)])
    assert r.exit_code == 0, r.output
    bt = tmp_path / "bt"
    r = runner.invoke(
        app,
        [
            "fund",
            "backtest",
            str(hist),
            "--horizon",
            "6",
            "--by",
            "유형",
            "--out",
            str(bt),
            "--replicates",
            "200",
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads((bt / "backtest.json").read_text(encoding="utf-8"))
    schema = load_schema("evaluator.domains.fund.history", "backtest.schema.json")
    assert schema_problems(doc, schema) == []
    assert (
        doc["by_type"]
        and "유형과 설정액은" in doc["caveat_ko"]
        and "유형과 설정액" in r.output.replace("\n", "")
    )
    for name in ("backtest_excess_by_grade.png", "backtest_ic.png", "backtest_migration.png"):
        assert (bt / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = runner.invoke(app, ["plot", str(bt)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (bt / "plots").glob("*.png")) == sorted(
        ["backtest_excess_by_grade.png", "backtest_ic.png", "backtest_migration.png"]
    )
    assert runner.invoke(app, ["plot", str(bt)]).exit_code != 0  # exists: needs --force
    again = runner.invoke(app, ["fund", "backtest", str(hist), "--out", str(bt), "--horizon", "6"])
    assert again.exit_code != 0 and "--force" in again.output
    r = runner.invoke(app, ["fund", "backtest", str(hist), "--horizon", "60", "--out", str(tmp_path / "x")])
    assert r.exit_code != 0 and "longer than the history" in " ".join(r.output.split())
    assert "Traceback" not in r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    r = runner.invoke(app, ["fund", "backtest", str(empty), "--out", str(tmp_path / "y")])
    assert r.exit_code != 0 and "not a `fund history` folder" in " ".join(r.output.split())
    with pytest.raises(DataError, match="not a folder"):
        load_history(tmp_path / "missing")
