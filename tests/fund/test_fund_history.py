"""`evaluator fund history`: month-end selection, equality with single-date runs, funds that come and go."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from history_compare import cell, same
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.data.loaders import Universe
from evaluator.domains.fund.data.readers import DataError
from evaluator.domains.fund.data.sample import sample_universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.history.run import (
    COLUMNS,
    HEADLINE,
    as_of_dates,
    history_row,
    parse_month,
    run_history,
)
from evaluator.domains.fund.reports.report import report_schema
from evaluator.domains.fund.rubric import default_rubric
from evaluator.methodology.rubric import PERIODS

runner = CliRunner()


def _universe(navs: pd.DataFrame, types: list[str], amount: float = 1e11) -> Universe:
    meta = pd.DataFrame(
        {"type": types, "set_amount": [amount] * len(types)}, index=pd.Index(navs.columns, name="fund_code")
    )
    return Universe(navs=navs, meta=meta, issues={})


@pytest.fixture(scope="module")
def universe() -> Universe:
    return sample_universe(funds=60, years=7, seed=11, risk_free=0.02, realistic=True)


def test_history_equals_single_date_runs_including_nulls(universe: Universe) -> None:
    rubric = default_rubric()
    dates = as_of_dates(universe, parse_month("2022-01", "--from"), parse_month("2025-06", "--to"), "Q")
    hist = run_history(universe, rubric, dates)
    table = hist.table
    assert len(table) == len(dates) * table["fund_code"].nunique()
    checked_nulls = 0
    for when in (dates[0], dates[len(dates) // 2], dates[-1]):
        single = evaluate_loaded(universe, rubric, as_of=when)
        day = table[table["as_of"] == single.as_of.isoformat()].set_index("fund_code")
        assert len(day) == len(single.funds)
        for fund in single.funds:
            expected = history_row(fund, str(rubric["version"]))
            got = day.loc[fund.fund_code]
            for col in COLUMNS[2:]:
                value = cell(got[col])
                assert same(value, expected[col]), (fund.fund_code, single.as_of, col, value, expected[col])
                checked_nulls += expected[col] is None
    # windows that are too long for the early dates, and not-rated funds, are nulls on both sides
    assert checked_nulls > 0
    assert (table["status"] == "ok").any() and table["sharpe_10y"].isna().all()
    assert hist.last.as_of == dates[-1].date()


def _business_days(start: str, end: str, holidays: list[str]) -> pd.DatetimeIndex:
    days = pd.bdate_range(start, end)
    return days[~days.isin(pd.DatetimeIndex(holidays))]


def test_month_end_is_the_last_market_date_with_holidays() -> None:
    # 2023-06-30 (Fri) and 2023-09-29 (Fri) are market holidays; 2023-12-29 is the last market day.
    days = _business_days("2023-01-02", "2023-12-29", ["2023-06-30", "2023-09-29", "2023-09-28"])
    rng = np.random.default_rng(0)
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + rng.normal(0, 0.01, (len(days), 6)), axis=0),
        index=days,
        columns=[f"F{i}" for i in range(6)],
    )
    # one fund also reports on a Saturday: not a market date, so it never becomes a month-end
    navs.loc[pd.Timestamp("2023-04-29")] = [np.nan] * 5 + [1000.0]
    navs = navs.sort_index()
    u = _universe(navs, ["주식형"] * 6)
    got = [
        d.strftime("%Y-%m-%d")
        for d in as_of_dates(u, parse_month("2023-04", "--from"), parse_month("2023-12", "--to"))
    ]
    assert got == [
        "2023-04-28",
        "2023-05-31",
        "2023-06-29",
        "2023-07-31",
        "2023-08-31",
        "2023-09-27",
        "2023-10-31",
        "2023-11-30",
        "2023-12-29",
    ]
    quarters = as_of_dates(u, parse_month("2023-01", "--from"), parse_month("2023-12", "--to"), "Q")
    assert [d.strftime("%m-%d") for d in quarters] == ["03-31", "06-29", "09-27", "12-29"]


def test_bad_ranges_are_clear_errors() -> None:
    days = _business_days("2023-01-02", "2023-03-31", [])
    navs = pd.DataFrame(1000.0, index=days, columns=["A", "B"])
    u = _universe(navs, ["주식형"] * 2)
    with pytest.raises(DataError, match="after --to"):
        as_of_dates(u, parse_month("2023-03", "--from"), parse_month("2023-01", "--to"))
    with pytest.raises(DataError, match="no month-end between 2024-01 and 2024-05"):
        as_of_dates(u, parse_month("2024-01", "--from"), parse_month("2024-05", "--to"))
    with pytest.raises(DataError, match="--freq"):
        as_of_dates(u, parse_month("2023-01", "--from"), parse_month("2023-03", "--to"), "W")
    for bad in ("2023", "2023-13", "Jan 2023", "", "2023/01"):
        with pytest.raises(DataError, match="YYYY-MM"):
            parse_month(bad, "--from")
    assert parse_month("2023-02-17", "--to") == pd.Period("2023-02", freq="M")


def test_funds_that_start_or_stop_mid_history_keep_every_row() -> None:
    days = _business_days("2016-01-04", "2024-12-31", [])
    rng = np.random.default_rng(3)
    n = 14
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + rng.normal(0.0003, 0.01, (len(days), n)), axis=0),
        index=days,
        columns=[f"K{i:02d}" for i in range(n)],
    )
    navs.loc[: pd.Timestamp("2021-06-30"), "K00"] = np.nan  # launched mid-2021
    navs.loc[pd.Timestamp("2023-03-01") :, "K01"] = np.nan  # stopped reporting in 2023
    u = _universe(navs, ["국내주식형"] * n)
    dates = as_of_dates(u, parse_month("2021-01", "--from"), parse_month("2024-12", "--to"), "Q")
    hist = run_history(u, default_rubric(), dates)
    table = hist.table.set_index(["fund_code", "as_of"])
    assert len(hist.table) == n * len(dates)
    launched = table.loc["K00"]
    assert launched.loc["2021-03-31", "status"] in ("not_rated", "error")
    assert launched.loc["2024-06-28", "status"] == "not_rated"  # not yet 3 years of history
    assert launched.loc["2024-12-31", "status"] == "ok" and launched.loc["2024-12-31", "grade"] in range(1, 6)
    assert pd.isna(launched.loc["2024-12-31", "sharpe_5y"]) and not pd.isna(
        launched.loc["2024-12-31", "sharpe_3y"]
    )
    stopped = table.loc["K01"]
    assert stopped.loc["2022-12-30", "status"] == "ok"
    assert stopped.loc["2024-12-31", "status"] != "ok" and pd.isna(stopped.loc["2024-12-31", "grade"])
    levels = hist.levels.set_index(["fund_code", "as_of"])
    gone = levels.loc[("K01", "2024-12-31")]
    assert gone["level_date"] == "2023-02-28" and gone["level"] == navs.loc["2023-02-28", "K01"]
    assert pd.isna(levels.loc[("K00", "2021-03-31"), "level_date"])
    assert np.isnan(levels.loc[("K00", "2021-03-31"), "level"])
    assert levels.loc[("K02", "2024-09-30"), "level"] == navs.loc["2024-09-30", "K02"]
    path = [p["as_of"] for p in dict(hist.grade_paths())["K01"]]
    assert path == [d.strftime("%Y-%m-%d") for d in dates]


def _run(*args: str) -> object:
    return runner.invoke(app, list(args))


def test_cli_writes_history_latest_and_summary(tmp_path: Path) -> None:
    out = tmp_path / "hist"
    args = [
        "fund",
        "history",
        "--sample",
        "--sample-funds",
        "40",
        "--sample-years",
        "6",
    ]  # = evaluate --sample
    db = f"sqlite:///{tmp_path / 'h.db'}"
    result = _run(*args, "--from", "2024-01", "--to", "2024-06", "--out", str(out), "--db", db)
    assert result.exit_code == 0, result.output
    assert "stored run 1: 40 fund reports" in " ".join(result.output.split())  # latest/ in the database
    csv_rows = pd.read_csv(out / "history.csv", encoding="utf-8-sig", dtype={"fund_code": str})
    parquet = pd.read_parquet(out / "history.parquet")
    assert list(parquet.columns) == list(COLUMNS) and list(csv_rows.columns) == list(COLUMNS)
    assert {f"{m}_{p}" for m in HEADLINE for p in PERIODS} <= set(parquet.columns)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["as_of_dates"] == sorted(parquet["as_of"].unique().tolist())
    assert len(summary["as_of_dates"]) == 6 and summary["rows"] == len(parquet) == len(csv_rows)
    reports = [p for p in (out / "latest").glob("*.json") if p.name != "summary.json"]
    assert len(reports) == parquet["fund_code"].nunique()
    last = summary["as_of_dates"][-1]
    for path in reports:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert schema_problems(doc, report_schema()) == []
        assert [h["as_of"] for h in doc["grade_history"]] == summary["as_of_dates"]
        row = parquet[(parquet["fund_code"] == doc["fund_code"]) & (parquet["as_of"] == last)].iloc[0]
        assert doc["grade_history"][-1]["status"] == row["status"] == doc["status"]
        assert doc["grade"] == (None if pd.isna(row["grade"]) else int(row["grade"]))
    again = _run(*args, "--from", "2024-01", "--to", "2024-06", "--out", str(out))
    assert again.exit_code != 0 and "--force" in again.output
    # the same date through `fund evaluate --as-of` gives the same grades, scores and metrics
    when = summary["as_of_dates"][2]
    single = tmp_path / "single"
    r = _run("fund", "evaluate", "--sample", "--sample-funds", "40", "--as-of", when, "--out", str(single))
    assert r.exit_code == 0, r.output
    day = parquet[parquet["as_of"] == when].set_index("fund_code")
    for path in (p for p in single.glob("*.json") if p.name != "summary.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        row = day.loc[doc["fund_code"]]
        assert row["status"] == doc["status"]
        assert (None if pd.isna(row["grade"]) else int(row["grade"])) == doc["grade"]
        for key, value in [
            ("score", doc["score"]),
            ("sharpe_3y", (doc["metrics"]["3y"] or {}).get("sharpe")),
        ]:
            assert (pd.isna(row[key]) and value is None) or math.isclose(row[key], value, rel_tol=1e-9), key


def test_force_replaces_latest_whole_so_no_earlier_report_survives(tmp_path: Path) -> None:
    out = tmp_path / "hist"
    base = ["fund", "history", "--sample", "--sample-years", "4", "--from", "2024-03", "--to", "2024-06"]
    first = _run(*base, "--sample-funds", "40", "--out", str(out))
    assert first.exit_code == 0, first.output
    before = {p.name for p in (out / "latest").iterdir()}
    (out / "latest" / "KR_OLD_FUND.json").write_text("{}", encoding="utf-8")  # a fund no longer in the data
    again = _run(*base, "--sample-funds", "25", "--out", str(out), "--force")
    assert again.exit_code == 0, again.output
    after = {p.name for p in (out / "latest").iterdir()}
    table = pd.read_parquet(out / "history.parquet")
    reports = {
        json.loads((out / "latest" / n).read_text(encoding="utf-8")).get("fund_code")
        for n in after
        if n.endswith(".json") and n != "summary.json"
    }
    assert reports == set(table["fund_code"]) and len(reports) == 25  # exactly this run's funds
    assert "KR_OLD_FUND.json" not in after and len(after) < len(before)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging folder left behind
    summary = json.loads((out / "latest" / "summary.json").read_text(encoding="utf-8"))
    assert summary  # the latest/ summary belongs to the new run's folder


def test_cli_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    out = tmp_path / "h"
    base = ["fund", "history", "--sample", "--sample-funds", "20", "--sample-years", "2", "--out", str(out)]
    r = _run(*base, "--from", "2024-05", "--to", "2024-01")
    assert r.exit_code != 0 and "after --to" in r.output and "Traceback" not in r.output
    r = _run(*base, "--from", "2024-5x", "--to", "2024-06")
    assert r.exit_code != 0 and "YYYY-MM" in r.output
    r = _run(*base, "--from", "2024-01", "--to", "2024-06", "--freq", "W")
    assert r.exit_code != 0 and "--freq" in r.output
    r = _run(*base, "--from", "1990-01", "--to", "1990-12")
    assert r.exit_code != 0 and "no month-end" in r.output
    assert not out.exists() or not any(out.iterdir())
