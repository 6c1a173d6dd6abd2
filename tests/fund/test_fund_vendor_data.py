"""Vendor data as it really arrives: '-', '—', 'N/A', '#N/A' and blanks in numeric columns, a benchmark on
its own calendar, and a META export with 대유형/중유형/소유형 instead of 유형."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.data.loaders import load_universe
from evaluator.domains.fund.data.readers import DataError
from evaluator.domains.fund.engine.engine import ERROR, evaluate_universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.reports.report import build_summary
from evaluator.domains.fund.task.dataset import load_evaluation, parse_source

runner = CliRunner()
HEADER = ["기준일자", "펀드코드", "펀드명", "유형", "기준가격", "분배금", "설정원본(억원)"]
DATES = pd.bdate_range("2024-01-01", periods=14)


def _rows() -> list[list[str]]:
    """Five funds; A, B and C carry placeholders where KOFIA-style exports put them."""
    price_gaps = {
        ("A", 3): "-",
        ("A", 4): "—",
        ("A", 7): "N/A",
        ("A", 9): "#N/A",
        ("A", 11): "",
        ("B", 5): "n/a",
    }
    price_gaps |= {("D", k): "-" for k in range(4, 8)}  # four in a row: beyond the fill limit
    price_gaps |= {("E", k): "—" for k in range(14)}  # never priced at all
    rows = []
    for code in "ABCDE":
        for k, day in enumerate(DATES):
            price = price_gaps.get((code, k), f"{1000 + 3 * k + ord(code):,.2f}")
            dist = "12.5" if (code == "B" and k == 6) else ("-" if code == "B" else "")
            amount = "—" if code == "C" else ("N/A" if code == "E" else "1,200")
            rows.append([day.strftime("%Y-%m-%d"), code, f"펀드{code}", "국내주식형", price, dist, amount])
    return rows


def _write(tmp_path: Path, kind: str) -> Path:
    rows = [HEADER, *_rows()]
    if kind == "csv":
        path = tmp_path / "navs.csv"
        path.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in rows) + "\n", encoding="utf-8")
        return path
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["펀드 기준가격 일별 조회"])  # a title row above the header, as exports have
    for r in rows:
        ws.append(r)  # openpyxl stores '#N/A' as an Excel error cell, as a real export has it
    path = tmp_path / "navs.xlsx"
    book.save(path)
    return path


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_placeholders_are_missing_values_in_price_distribution_and_amount_columns(
    tmp_path: Path, kind: str
) -> None:
    universe = load_universe(_write(tmp_path, kind))
    assert set(universe.issues) == {"E"} and "모두 비어" in universe.issues["E"][0]
    a = universe.navs["A"]
    assert a.isna().sum() == 5 and a.notna().sum() == 9
    assert any("5 row(s)" not in w and "have no 기준가격" in w for w in universe.warnings)
    dist = universe.adjustments.distribution
    assert list(dist["B"].dropna()) == [12.5]  # '-' on the other rows is "no distribution"
    amounts = universe.meta["set_amount"]
    assert np.isnan(amounts["C"]) and amounts["A"] == pytest.approx(1200e8)
    ev = evaluate_loaded(universe)
    fa, fd = ev.fund("A"), ev.fund("D")
    assert fa.status != ERROR and not fa.errors[:0]
    assert any("직전 기준가격을 이어 썼습니다" in w for w in fa.warnings)
    assert all("비어" not in e and "숫자가 아닌" not in e for e in fa.errors)
    assert fd.status == ERROR and "4개 기준일" in fd.errors[0]  # a missing price beyond the limit
    assert ev.fund("E").status == ERROR
    assert ev.fund("C").warnings and any("설정액 정보가 없어" in w for w in ev.fund("C").warnings)


def test_wide_layout_reads_the_same_placeholders(tmp_path: Path) -> None:
    lines = ["date,A,B,C"] + [
        f"{d:%Y-%m-%d},{'—' if k == 3 else ('#N/A' if k == 4 else 1000 + k)},{1000 + 2 * k},-"
        for k, d in enumerate(DATES)
    ]
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    universe = load_universe(path, meta=_meta_file(tmp_path, ["A", "B", "C"], "유형"))
    assert universe.navs["A"].isna().sum() == 2 and set(universe.issues) == {"C"}
    ev = evaluate_loaded(universe)
    assert any("직전 기준가격을 이어 썼습니다" in w for w in ev.fund("A").warnings)
    assert ev.fund("A").status != ERROR


def _meta_file(tmp_path: Path, codes: list[str], *type_columns: str) -> Path:
    frame = pd.DataFrame({"펀드코드": codes, "설정원본": 1e11})
    for name in type_columns:
        frame[name] = {"대유형": "주식형", "중유형": "국내주식", "소유형": "국내주식형", "유형": "기타"}[name]
    path = tmp_path / f"meta-{'-'.join(type_columns)}.csv"
    frame.to_csv(path, index=False)
    return path


def test_type_column_names_the_peer_group_and_its_absence_lists_the_candidates(tmp_path: Path) -> None:
    data = tmp_path / "wide.csv"
    data.write_text("date,A,B\n2024-01-02,1000,1000\n2024-01-03,1001,1002\n", encoding="utf-8")
    meta = _meta_file(tmp_path, ["A", "B"], "대유형", "중유형", "소유형")
    with pytest.raises(DataError, match="대유형, 중유형, 소유형 — pick one with --type-column NAME"):
        load_universe(data, meta=meta)
    assert set(load_universe(data, meta=meta, type_column="소유형").meta["type"]) == {"국내주식형"}
    assert set(load_universe(data, meta=meta, type_column="대유형").meta["type"]) == {"주식형"}
    with pytest.raises(DataError, match="--type-column '세부유형' is not a column"):
        load_universe(data, meta=meta, type_column="세부유형")
    both = _meta_file(tmp_path, ["A", "B"], "유형", "소유형")
    assert set(load_universe(data, meta=both, type_column="소유형").meta["type"]) == {"국내주식형"}
    assert set(load_universe(data, meta=both).meta["type"]) == {"기타"}
    result = runner.invoke(
        app, ["fund", "evaluate", str(data), "--meta", str(meta), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code != 0 and "--type-column" in result.output and "소유형" in result.output


def _universe(funds: int = 40, seed: int = 8) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    b = rng.normal(3e-4, 0.01, len(dates))
    r = b[:, None] * rng.uniform(0.7, 1.3, funds) + rng.normal(0, 0.004, (len(dates), funds))
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"F{i:02d}" for i in range(funds)]
    )
    meta = pd.DataFrame(
        {"type": np.where(np.arange(funds) % 2, "국내주식형", "채권형"), "set_amount": 1e11},
        index=navs.columns,
    )
    return navs, meta, pd.Series(1000 * np.cumprod(1 + b), index=dates, name="KOSPI")


def test_a_benchmark_on_its_own_calendar_is_said_once_and_changes_no_grade(tmp_path: Path) -> None:
    navs, meta, bench = _universe()
    missing = pd.DatetimeIndex(["2024-02-06", "2024-09-10", "2025-01-14"])
    saturdays = pd.DatetimeIndex(["2024-02-03", "2024-09-07", "2025-01-11"])
    own = pd.concat([bench.drop(missing), pd.Series(1.0, index=saturdays)]).sort_index()  # wild Saturday rows
    fixed = bench.copy()
    fixed[missing] = np.nan
    fixed = fixed.ffill()  # what a user cleaning the file by hand would give: the previous close carried
    ev, clean = evaluate_universe(navs, meta, benchmark=own), evaluate_universe(navs, meta, benchmark=fixed)
    for f in clean.funds:
        g = ev.fund(f.fund_code)
        assert (g.status, g.grade, g.score, g.metrics) == (f.status, f.grade, f.score, f.metrics)
        assert not any("시장 기준일" in w or "주말" in w for w in g.warnings)
    notes = ev.inputs["calendar"]["notes"]
    assert len(notes) == 1 and all(d.strftime("%Y-%m-%d") in notes[0] for d in missing.append(saturdays))
    assert ev.inputs["calendar"]["calendar"] == "majority" and "notes" not in clean.inputs["calendar"]
    summary = build_summary(ev, {})
    assert sum("BENCHMARK" in w for w in summary["warnings"]) == 1
    # the same through files and the console: the line once, in summary.json and on the screen
    long = navs.stack().rename("기준가격").reset_index()
    long.columns = ["기준일자", "펀드코드", "기준가격"]
    long["유형"] = long["펀드코드"].map(meta["type"])
    long["설정원본"] = 1e11
    long.to_csv(tmp_path / "navs.csv", index=False)
    own.rename_axis("date").rename("close").to_csv(tmp_path / "bench.csv")
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "fund",
            "evaluate",
            str(tmp_path / "navs.csv"),
            "--benchmark",
            str(tmp_path / "bench.csv"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("BENCHMARK is on its own calendar") == 1
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert sum("BENCHMARK is on its own calendar" in w for w in written["warnings"]) == 1


def test_a_benchmark_missing_more_than_the_limit_stops_the_run() -> None:
    navs, meta, bench = _universe(funds=10)
    with pytest.raises(DataError, match="no level on 4 consecutive market dates after 2024-03-01"):
        evaluate_universe(navs, meta, benchmark=bench.drop(pd.bdate_range("2024-03-04", periods=4)))


def test_the_grpo_task_never_trains_on_a_typo_fund(tmp_path: Path) -> None:
    navs, meta, _bench = _universe(funds=20)
    navs.iloc[600, 3] *= 10
    long = navs.stack().rename("기준가격").reset_index()
    long.columns = ["기준일자", "펀드코드", "기준가격"]
    long["유형"] = long["펀드코드"].map(meta["type"])
    long["설정원본"] = 1e11
    long.to_csv(tmp_path / "navs.csv", index=False)
    ev = load_evaluation(parse_source(str(tmp_path / "navs.csv")))
    assert ev.fund("F03").status == ERROR and ev.fund("F03").reason_codes == ("nav_outlier",)
    kept = load_evaluation(parse_source(f"{tmp_path / 'navs.csv'}?outliers=keep"))
    assert kept.fund("F03").status != ERROR
