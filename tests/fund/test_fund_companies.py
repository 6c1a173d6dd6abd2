"""운용사 ratings: scores, weights and grades against an independent numpy computation, the qualitative
file (Korean / English headers, CSV / Excel) and each way it can be refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from company_universe import SMALL, expected, reports_of, write_meta
from conftest import run_cli

from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.companies.document import companies_schema
from evaluator.domains.fund.data.sample import sample_universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.reports.batch import write_reports
from evaluator.domains.fund.rubric import default_rubric

RULE = default_rubric()["company_rating"]


@pytest.fixture(scope="module")
def universe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("companies")
    evaluation = evaluate_loaded(sample_universe(funds=160, years=6, realistic=True), default_rubric())
    write_reports(evaluation, base / "reports")
    meta = write_meta(base / "reports", base / "meta.csv")
    (base / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return {"reports": base / "reports", "meta": base / "meta.csv", "base": base}


def _meta(u: dict[str, Path]) -> dict:
    return json.loads((u["base"] / "meta.json").read_text(encoding="utf-8"))


QUAL = {
    "가람자산운용": {
        "philosophy": 4,
        "organization": 3,
        "risk_management": 5,
        "people": 2,
        "infrastructure": 4,
    },
    "누리자산운용": {"philosophy": 2, "organization": 2.5, "risk_management": 3},  # two pillars left blank
    "바른자산운용": {
        "philosophy": 5,
        "organization": 5,
        "risk_management": 5,
        "people": 5,
        "infrastructure": 5,
    },
}


def _qual_csv(path: Path, rows: dict[str, dict[str, float]], korean: bool = True) -> Path:
    names = {p["id"]: p["name"] for p in RULE["pillars"]}
    ids = [p["id"] for p in RULE["pillars"]]
    head = (
        ["운용사", "평가일", "애널리스트"] + [names[i] for i in ids]
        if korean
        else ["Company", "Date", "Analyst", *ids]
    )
    lines = ["2025년 운용사 정성평가", ",".join(head)]
    for c, s in rows.items():
        lines.append(",".join([c, "2025-05-31", "김분석"] + [str(s.get(i, "")) for i in ids]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    return path


def _run(u: dict[str, Path], out: Path, *extra: str) -> dict:
    result = run_cli(
        "fund", "companies", str(u["reports"]), "--meta", str(u["meta"]), "--out", str(out), *extra
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "companies.json").read_text(encoding="utf-8"))
    assert schema_problems(doc, companies_schema()) == []
    return doc


def _check(doc: dict, want: dict) -> None:
    got = {c["company"]: c for c in doc["companies"]}
    assert set(got) == set(want)
    for name, w in want.items():
        c = got[name]
        assert c["funds_rated"] == w["funds"], name
        if w["quant"] is None:
            assert c["quantitative_score"] is None
        else:
            assert c["quantitative_score"] == pytest.approx(w["quant"], abs=1e-9)
            assert c["aum_krw"] == pytest.approx(w["aum"], rel=1e-12)
        assert (c["qualitative_score"] is None) == (w["qual"] is None)
        if w["qual"] is not None:
            assert c["qualitative_score"] == pytest.approx(w["qual"], abs=1e-9)
        assert (c["status"] == "ok") == (w["score"] is not None), name
        if w["score"] is not None:
            assert c["score"] == pytest.approx(w["score"], abs=1e-9)
            assert c["top_percent"] == pytest.approx(w["top"], abs=1e-9)
            assert c["grade"] == w["grade"] and c["grade_label"] == f"{w['grade']}등급"
        weights = {f["fund_code"]: f["weight"] for f in c["funds"] if f["counted"]}
        assert weights.keys() == w["weights"].keys()
        for code, value in w["weights"].items():
            assert weights[code] == pytest.approx(value, abs=1e-12)


def test_scores_weights_and_grades_match_numpy(universe: dict[str, Path], tmp_path: Path) -> None:
    qual = _qual_csv(tmp_path / "qual.csv", QUAL)
    doc = _run(universe, tmp_path / "out", "--qualitative", str(qual))
    want = expected(universe["reports"], _meta(universe), RULE, QUAL)
    _check(doc, want)
    got = {c["company"]: c for c in doc["companies"]}
    # the universe has what the rule is about: grouped classes, error / not-rated funds, small companies
    assert any(c["classes_rated"] > c["funds_rated"] for c in got.values())
    reasons = [r for c in got.values() for r in c["reasons"]]
    assert any("데이터 오류" in r for r in reasons) and any("평가 제외" in r for r in reasons)
    for small in SMALL:
        assert got[small]["status"] == "not_rated" and "최소 3개" in got[small]["reasons"][0]
    assert got["가람자산운용"]["basis"] == "blended" and got["하늘투자운용"]["basis"] == "quantitative_only"
    assert any("정성평가 행이 없어" in r for r in got["하늘투자운용"]["reasons"])
    report = (tmp_path / "out" / "reports" / "가람자산운용.md").read_text(encoding="utf-8")
    assert "강점은 리스크관리체계(5점), 약점은 운용인력(2점)" in report and "유형별 강점과 약점" in report
    assert (tmp_path / "out" / "companies.png").stat().st_size > 10_000


def test_english_excel_file_and_required_pillars(universe: dict[str, Path], tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    ws = book.active
    ws.append(["운용사 정성평가 (analyst sheet)"])
    ws.append(["Company", "Analyst", *(p["id"] for p in RULE["pillars"]), "Note"])
    for c, s in QUAL.items():
        ws.append([c, "Kim", *(s.get(p["id"]) for p in RULE["pillars"]), "ok"])
    book.save(tmp_path / "qual.xlsx")
    rubric = default_rubric()
    rubric["company_rating"]["require_qualitative"] = True
    rubric["company_rating"]["weights"] = {"quantitative": 60, "qualitative": 40}
    (tmp_path / "rubric.json").write_text(json.dumps(rubric, ensure_ascii=False), encoding="utf-8")
    doc = _run(
        universe,
        tmp_path / "out",
        "--qualitative",
        str(tmp_path / "qual.xlsx"),
        "--rubric",
        str(tmp_path / "rubric.json"),
    )
    _check(doc, expected(universe["reports"], _meta(universe), rubric["company_rating"], QUAL))
    rated = {c["company"] for c in doc["companies"] if c["status"] == "ok"}
    assert rated == set(QUAL)  # every other company lacks the required pillars
    assert doc["rule"]["source"] == "rubric"


def test_provisional_grades_are_left_out(universe: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    shutil.copytree(universe["reports"], folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    docs = {d["fund_code"]: d for d in reports_of(folder)}
    young = next(
        e["fund_code"]
        for e in summary["funds"]
        if e["status"] == "ok" and docs[e["fund_code"]]["company"] == "미르자산운용"
    )
    doc = json.loads((folder / docs[young]["fund_code"]).with_suffix(".json").read_text(encoding="utf-8"))
    doc["provisional"] = True
    (folder / f"{young}.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    summary["provisional_counts"] = {
        "1": 1
    }  # a summary that marks provisional grades (read report by report)
    (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("fund", "companies", str(folder), "--out", str(out)).exit_code == 0
    got = json.loads((out / "companies.json").read_text(encoding="utf-8"))
    assert got["sources"]["reports"]["read_from"] == "reports"
    mir = next(c for c in got["companies"] if c["company"] == "미르자산운용")
    fund = next(f for f in mir["funds"] if f["fund_code"] == young)
    assert fund["provisional"] and not fund["counted"] and "가등급" in fund["excluded_reason"]
    want = expected(folder, {}, RULE, {})
    assert mir["quantitative_score"] == pytest.approx(want["미르자산운용"]["quant"], abs=1e-9)


BAD = {
    "unknown company": (
        "운용사,운용철학\n없는자산운용,3\n",
        "company '없는자산운용' has no fund in the reports",
    ),
    "unknown pillar": (
        "운용사,운용철학,고객만족도\n가람자산운용,3,4\n",
        "column '고객만족도' is not a pillar of the rubric",
    ),
    "score above range": ("운용사,운용철학\n가람자산운용,7\n", "score 7 is outside the 1–5 scale"),
    "score below range": ("운용사,조직안정성\n가람자산운용,0\n", "score 0 is outside the 1–5 scale"),
    "not a number": ("운용사,운용철학\n가람자산운용,우수\n", "'우수' is not a score"),
    "duplicate rows": (
        "운용사,운용철학\n가람자산운용,3\n 가람자산운용 ,4\n",
        "is listed twice (rows 2 and 3)",
    ),
    "date after as-of": (
        "운용사,평가일,운용철학\n가람자산운용,2030-01-01,3\n",
        "after the reports' as-of date",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_qualitative_file_is_refused_with_its_message(
    universe: dict[str, Path], tmp_path: Path, case: str
) -> None:
    text, message = BAD[case]
    path = tmp_path / "qual.csv"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = run_cli(
        "fund", "companies", str(universe["reports"]), "--qualitative", str(path), "--out", str(out)
    )
    assert result.exit_code != 0
    flat = " ".join(result.output.split())
    assert message in flat and "1 problem(s)" in flat, result.output
    assert not out.exists()


def test_every_problem_is_listed_once(universe: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "qual.csv"
    path.write_text(
        "운용사,운용철학,고객만족도\n없는운용,3,1\n가람자산운용,9,1\n가람자산운용,3,1\n", encoding="cp949"
    )
    out = tmp_path / "out"
    result = run_cli(
        "fund", "companies", str(universe["reports"]), "--qualitative", str(path), "--out", str(out)
    )
    flat = " ".join(result.output.split())
    assert result.exit_code != 0 and "4 problem(s)" in flat and not out.exists()


def test_history_company_grades_equal_a_single_date_rating_and_drive_the_company_backtest(
    tmp_path: Path,
) -> None:
    import pandas as pd

    from evaluator.core.schemas import load_schema
    from evaluator.domains.fund.history.backtest import forward_frame, load_history

    hist = tmp_path / "hist"
    result = run_cli("fund", "history", "--sample", "--sample-funds", "60", "--from", "2022-03", "--to", "2025-06",
                     "--freq", "Q", "--out", str(hist))  # fmt: skip
    assert result.exit_code == 0, result.output
    companies = pd.read_parquet(hist / "companies.parquet")
    last = companies[companies["as_of"] == companies["as_of"].max()].set_index("company")
    single = _run({"reports": hist / "latest", "meta": _empty_meta(tmp_path)}, tmp_path / "single")
    for c in single["companies"]:
        row = last.loc[c["company"]]
        assert row["status"] == c["status"] and row["funds_rated"] == c["funds_rated"]
        if c["status"] == "ok":
            assert row["score"] == pytest.approx(c["score"], abs=1e-9) and int(row["grade"]) == c["grade"]
    bt = tmp_path / "bt"
    result = run_cli("fund", "backtest", str(hist), "--horizon", "12", "--level", "company", "--by", "유형",
                     "--replicates", "100", "--out", str(bt))  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((bt / "backtest.json").read_text(encoding="utf-8"))
    assert schema_problems(doc, load_schema("evaluator.domains.fund.history", "backtest.schema.json")) == []
    assert doc["level"] == "company" and doc["by_type"]
    # independently: every rated fund-date whose company was rated that date, counted by the company's grade
    table, levels, _ = load_history(hist)
    frame, _, _ = forward_frame(table, levels, 12, "Q")
    members = pd.read_parquet(hist / "company_funds.parquet").set_index("fund_code")["company"]
    grades = companies.dropna(subset=["grade"]).set_index(["company", "as_of"])["grade"]
    keys = list(zip(members.reindex(frame["fund_code"]), frame["as_of"], strict=True))
    got = pd.Series([grades.get(k) for k in keys]).dropna().astype(int).value_counts()
    for g, block in doc["all"]["grades"].items():
        assert block["observations"] == int(got.get(int(g), 0))


def _empty_meta(tmp_path: Path) -> Path:
    path = tmp_path / "meta.csv"
    path.write_text("펀드코드,펀드명\n", encoding="utf-8")
    return path


def test_report_names_from_hostile_company_names_stay_inside_and_unique() -> None:
    from evaluator.domains.fund.companies.service import report_names

    names = report_names(["../../etc/passwd", "가람/자산", "가람_자산", ".hidden", "", "a" * 500])
    files = list(names.values())
    assert len(set(files)) == len(files)
    assert all("/" not in f and "\\" not in f and not f.startswith(".") and len(f) < 140 for f in files)
