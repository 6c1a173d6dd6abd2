"""`evaluator fund evaluate` / `generate-sample` end to end: schema-valid reports, summaries, safe names."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.outputs import STAGING_SUFFIX
from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.data.sample import generate_sample
from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.reports import batch as batch_module
from evaluator.domains.fund.reports.batch import SERIES_FILE, report_names, write_reports
from evaluator.domains.fund.reports.report import report_schema, summary_schema

runner = CliRunner()


def _run(*args: str) -> object:
    return runner.invoke(app, list(args))


def _reports(folder: Path) -> dict[str, dict]:
    return {
        p.name: json.loads(p.read_text(encoding="utf-8"))
        for p in folder.glob("*.json")
        if p.name != "summary.json"
    }


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fund") / "reports"
    result = _run(
        "fund", "evaluate", "--sample", "--sample-funds", "150", "--risk-free", "0.03", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    return out


def test_sample_batch_reports_validate_and_show_broken_funds(sample_dir: Path) -> None:
    reports = _reports(sample_dir)
    assert len(reports) == 150
    for name, doc in reports.items():
        assert schema_problems(doc, report_schema()) == [], name
        assert name == f"{doc['fund_code']}.json"
        assert doc["summary_ko"]
    broken = generate_sample(funds=150, realistic=True).broken
    by_code = {d["fund_code"]: d for d in reports.values()}
    for kind in ("duplicate_date", "negative_nav", "missing_nav_gap", "unsorted_dates"):
        assert by_code[broken[kind]]["status"] == "error", kind
        assert "데이터 오류" in by_code[broken[kind]]["summary_ko"]
    for kind in ("short_history", "tiny_fund", "unrated_type"):
        assert by_code[broken[kind]]["status"] == "not_rated", kind
    ok = [d for d in reports.values() if d["status"] == "ok"]
    assert len(ok) > 100
    graded = ok[0]
    assert f"{graded['grade']}등급" in graded["summary_ko"] and graded["type"] in graded["summary_ko"]
    assert {d["grade"] for d in ok} == {1, 2, 3, 4, 5}


def test_summary_json_and_csv(sample_dir: Path) -> None:
    summary = json.loads((sample_dir / "summary.json").read_text(encoding="utf-8"))
    assert schema_problems(summary, summary_schema()) == []
    assert summary["funds_total"] == 150 == sum(summary["status_counts"].values())
    assert summary["status_counts"]["error"] == 4
    rows = list(csv.DictReader((sample_dir / "summary.csv").read_text(encoding="utf-8-sig").splitlines()))
    total = rows[-1]
    assert total["type"] == "(all)" and int(total["total"]) == 150
    per_type = {r["type"]: r for r in rows[:-1]}
    for fund_type, dist in summary["grade_distribution"].items():
        assert int(per_type[fund_type]["grade_1"]) == dist["1"]
    assert "국내주식형" in summary["peer_context"]


def test_existing_output_needs_force(sample_dir: Path) -> None:
    result = _run("fund", "evaluate", "--sample", "--out", str(sample_dir))
    assert result.exit_code == 2
    assert "--force" in result.output and "Traceback" not in result.output


def test_generated_file_round_trips_through_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "universe.csv"
    result = _run("fund", "generate-sample", "--funds", "40", "--years", "4", "--out", str(data))
    assert result.exit_code == 0, result.output
    bench = tmp_path / "universe.benchmark.csv"
    assert bench.exists()
    again = _run("fund", "generate-sample", "--funds", "40", "--years", "4", "--out", str(data))
    assert again.exit_code == 2 and "--force" in again.output
    out = tmp_path / "out"
    result = _run(
        "fund", "evaluate", str(data), "--benchmark", str(bench), "--as-of", "2025-05-30", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    reports = _reports(out)
    assert len(reports) == 40 and all(d["as_of"] == "2025-05-30" for d in reports.values())
    assert all(schema_problems(d, report_schema()) == [] for d in reports.values())
    # the same universe evaluated in memory gives the same grades
    sample = generate_sample(funds=40, years=4, realistic=True)
    from evaluator.domains.fund.data.loaders import benchmark_from_table, read_navs_frame, series_from_frame

    navs, issues, meta, _, _, adjustments = read_navs_frame(sample.rows)
    bench_levels = benchmark_from_table(series_from_frame(sample.benchmark, "b"))
    ev = evaluate_universe(
        navs, meta, benchmark=bench_levels, as_of=dt.date(2025, 5, 30), issues=issues, adjustments=adjustments
    )
    assert {f.fund_code: f.grade for f in ev.funds} == {d["fund_code"]: d["grade"] for d in reports.values()}
    assert {d["return_basis"] for d in reports.values()} >= {"distribution", "raw"}
    unadjusted = [c for c, how in sample.settling.items() if how == "none"]
    by_code = {d["fund_code"]: d for d in reports.values()}
    assert unadjusted and all(by_code[c]["reason_codes"] == ["unadjusted_distribution"] for c in unadjusted)
    allowed = tmp_path / "allowed"
    result = _run(
        "fund",
        "evaluate",
        str(data),
        "--benchmark",
        str(bench),
        "--as-of",
        "2025-05-30",
        "--allow-unadjusted",
        "--out",
        str(allowed),
    )
    assert result.exit_code == 0, result.output
    for c in unadjusted:
        doc = json.loads((allowed / f"{c}.json").read_text(encoding="utf-8"))
        assert doc["status"] == "ok" and any("--allow-unadjusted" in w for w in doc["warnings"])


def test_missing_column_is_one_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "navs.csv"
    data.write_text("펀드코드,기준가격\nA,1000\n", encoding="utf-8")
    out = tmp_path / "out"
    result = _run("fund", "evaluate", str(data), "--out", str(out))
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert (
        "no date column (기준일자 / date); its columns are: 펀드코드, 기준가격" in said
        and "Traceback" not in said
    )
    assert not out.exists()


def test_fund_codes_cannot_escape_the_folder(tmp_path: Path) -> None:
    codes = ["../../evil", "a/b", "summary", "a_b", "정상펀드"]
    dates = pd.bdate_range(end="2025-06-30", periods=900)
    rng = np.random.default_rng(0)
    navs = pd.DataFrame(
        1000 * np.cumprod(1 + rng.normal(3e-4, 0.01, (900, 5)), axis=0), index=dates, columns=codes
    )
    meta = pd.DataFrame({"type": "국내주식형", "set_amount": 1e11}, index=codes)
    out = tmp_path / "out"
    outcome = write_reports(evaluate_universe(navs, meta), out)
    files = sorted(p.name for p in out.iterdir())
    assert all((out / f).resolve().parent == out.resolve() for f in files)
    assert not (tmp_path.parent / "evil.json").exists()
    assert len(set(outcome.files.values())) == 5 and "summary.json" not in outcome.files.values()
    assert (
        json.loads((out / outcome.files["../../evil"]).read_text(encoding="utf-8"))["fund_code"]
        == "../../evil"
    )
    names = report_names(["a/b", "a_b", "Summary"])
    assert names["a/b"] == "a_b.json"
    assert names["a_b"].startswith("a_b-") and names["Summary"].startswith("Summary-")  # clash → hash suffix


def test_one_unwritable_report_does_not_stop_the_batch(tmp_path: Path) -> None:
    sample = generate_sample(funds=20, years=4)
    from evaluator.domains.fund.data.loaders import navs_from_frame

    navs, issues, meta, _, _ = navs_from_frame(sample.rows)
    ev = evaluate_universe(navs, meta, issues=issues)
    out = tmp_path / "out"
    k = next(i for i, f in enumerate(ev.funds) if i >= 3 and f.status == "ok")  # a rated fund: it has a chart
    blocked = ev.funds[k].fund_code
    staging = out.with_name(out.name + STAGING_SUFFIX)  # the batch is written there, then swapped in

    def block(done: int, total: int) -> None:
        if done == k:  # a folder where the next report should go
            (staging / f"{blocked}.json").mkdir()

    outcome = write_reports(ev, out, force=True, on_progress=block)
    assert set(outcome.failures) == {blocked}
    assert len(outcome.files) == 19
    summary = json.loads(outcome.summary_json.read_text(encoding="utf-8"))
    line = next(f for f in summary["funds"] if f["fund_code"] == blocked)
    assert line["file"] is None and "write_error" in line
    charted = [json.loads(x)["fund_code"] for x in (out / SERIES_FILE).read_text(encoding="utf-8").splitlines()]
    assert set(charted) == {f.fund_code for f in ev.funds if f.status == "ok"} - {blocked}  # its line went too
    assert outcome.texts[SERIES_FILE] == (out / SERIES_FILE).read_text(encoding="utf-8")  # what storing reads


def test_a_failure_to_make_the_nav_series_costs_the_chart_not_the_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.domains.fund.data.loaders import navs_from_frame

    navs, issues, meta, _, _ = navs_from_frame(generate_sample(funds=20, years=4).rows)
    ev = evaluate_universe(navs, meta, issues=issues)

    def broken(evaluation: object, max_points: int = 0) -> Iterator[tuple[str, str]]:
        yield "KR0000", "{}"
        raise MemoryError("no room for the chart")

    monkeypatch.setattr(batch_module, "series_lines", broken)  # the forked worker has it too
    outcome = write_reports(ev, tmp_path / "out")
    assert len(outcome.files) == len(ev.funds) and not outcome.failures
    assert not (tmp_path / "out" / SERIES_FILE).exists()
    summary = json.loads(outcome.summary_json.read_text(encoding="utf-8"))
    assert any("no room for the chart" in w and SERIES_FILE in w for w in summary["warnings"])
