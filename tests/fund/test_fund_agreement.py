"""`evaluator fund agreement`: engine and model grades against analysts', end to end and on hand-made batches."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.agreement.io import ExpertGrade, Experts
from evaluator.domains.fund.agreement.plot import by_type_figure, confusion_figure
from evaluator.domains.fund.agreement.report import agreement_schema, build_agreement, csv_rows
from evaluator.domains.fund.agreement.reports import Batch, EngineFund
from evaluator.domains.fund.reports.report import summary_schema
from evaluator.domains.fund.task.model_eval import add_model_to_summary

LABELS = [f"{g}등급" for g in range(1, 6)]
runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def _said(result) -> str:
    """The command's output with Rich's line wrapping undone."""
    return " ".join(result.output.split())


def _qwk(a, b) -> float:
    return cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agree") / "reports"
    result = _run("fund", "evaluate", "--sample", "--sample-funds", "40", "--out", out)
    assert result.exit_code == 0, result.output
    return out


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def _experts_csv(folder: Path, target: Path) -> dict:
    """Two analysts grade all but the last three rated funds (one close to the engine, one further off),
    plus a fund the engine did not rate and one it never saw. Returns what the agreement must find."""
    funds = _summary(folder)["funds"]
    rated = [f for f in funds if f["status"] == "ok"]
    graded, left_out = rated[:-3], rated[-3:]
    unrated = next(f for f in funds if f["status"] == "not_rated")
    lines = ["펀드코드,펀드명,등급,평가자"]
    pairs: dict[str, list[tuple[str, int, int, str]]] = {"김": [], "이": []}
    for i, f in enumerate(graded):
        kim = min(5, max(1, f["grade"] + (1 if i % 5 == 0 else 0)))
        lee = min(5, max(1, f["grade"] + (-1, 0, 1, 2)[i % 4]))
        for who, g in (("김", kim), ("이", lee)):
            lines.append(f'{f["fund_code"]},"{f["fund_name"]}",{g}등급,{who}')
            pairs[who].append((f["fund_code"], g, f["grade"], f["type"]))
    lines.append(f"{unrated['fund_code']},미평가 펀드,2,김")
    lines.append("KR9999999999,없는 펀드,3,이")
    target.write_bytes(("\n".join(lines) + "\n").encode("cp949"))
    return {"pairs": pairs, "left_out": [f["fund_code"] for f in left_out], "unrated": unrated["fund_code"]}


def test_cli_agreement_after_fund_evaluate(batch_dir: Path, tmp_path: Path) -> None:
    truth = _experts_csv(batch_dir, tmp_path / "experts.csv")
    out = tmp_path / "ag"
    result = _run(
        "fund", "agreement", batch_dir, "--experts", tmp_path / "experts.csv", "--by", "유형", "--out", out
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "agreement.json").read_text(encoding="utf-8"))
    assert schema_problems(doc, agreement_schema()) == []
    pooled = truth["pairs"]["김"] + truth["pairs"]["이"]
    experts, engine = [p[1] for p in pooled], [p[2] for p in pooled]
    eng = doc["overall"]["engine"]
    assert eng["kappa"] == pytest.approx(_qwk(experts, engine))
    assert eng["pairs"] == len(pooled) and eng["funds"] == len(truth["pairs"]["김"])
    assert eng["exact"]["rate"] == pytest.approx(np.mean(np.array(experts) == np.array(engine)))
    assert eng["within_one"]["rate"] == pytest.approx(np.mean(np.abs(np.subtract(experts, engine)) <= 1))
    lo, hi = eng["kappa_ci95"]
    assert lo < eng["kappa"] < hi
    assert np.array(eng["confusion"]).sum() == len(pooled)
    kim = truth["pairs"]["김"]
    assert eng["by_analyst"]["김"]["kappa"] == pytest.approx(_qwk([p[1] for p in kim], [p[2] for p in kim]))
    inter = doc["overall"]["inter_analyst"]
    lee = truth["pairs"]["이"]
    assert inter["analyst_pairs"][0]["kappa"] == pytest.approx(_qwk([p[1] for p in kim], [p[1] for p in lee]))
    # missing funds on either side: counted and listed
    assert doc["counts"]["engine_only"] == 3
    assert sorted(e["fund_code"] for e in doc["missing"]["engine_only"]) == sorted(truth["left_out"])
    reasons = {e["fund_code"]: e["reason"] for e in doc["missing"]["expert_only"]}
    assert reasons == {truth["unrated"]: "not_rated", "KR9999999999": "no_report"}
    # per 유형: the same κ on each peer group's pairs
    for fund_type, scope in doc["by_type"].items():
        mine = [p for p in pooled if p[3] == fund_type]
        assert scope["engine"]["pairs"] == len(mine)
        if scope["engine"]["kappa"] is not None:
            assert scope["engine"]["kappa"] == pytest.approx(_qwk([p[1] for p in mine], [p[2] for p in mine]))
    worst = doc["overall"]["largest_disagreements"]["engine"]
    assert 0 < len(worst) <= 20
    gaps = [abs(d["difference"]) for d in worst]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > 0
    assert worst[0]["metrics"]["window"] in ("1y", "3y", "5y", "10y") and worst[0]["summary_ko"]
    # the CSV, the heat maps and the Korean console line
    rows = list(csv.DictReader((out / "agreement.csv").read_text(encoding="utf-8-sig").splitlines()))
    first = rows[0]
    assert (first["scope"], first["comparison"], first["analyst"]) == ("전체", "engine_vs_experts", "")
    assert float(first["kappa"]) == pytest.approx(eng["kappa"])
    assert {r["scope"] for r in rows} == {"전체", *doc["by_type"]}
    funds_rows = list(
        csv.DictReader((out / "agreement_funds.csv").read_text(encoding="utf-8-sig").splitlines())
    )
    assert len(funds_rows) == len(pooled) + 2 + 3
    for png in ("agreement_confusion.png", "agreement_confusion_by_type.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "가중 카파" in _said(result) and "엔진만 평가 3개" in _said(result)
    assert doc["summary_ko"].startswith(f"전문가 평가 {len(kim)}개 펀드 비교")


def test_existing_outputs_are_refused_without_force(batch_dir: Path, tmp_path: Path) -> None:
    _experts_csv(batch_dir, tmp_path / "experts.csv")
    out = tmp_path / "ag"
    out.mkdir()
    (out / "agreement.csv").write_text("keep me")
    args = (
        "fund",
        "agreement",
        batch_dir,
        "--experts",
        tmp_path / "experts.csv",
        "--out",
        out,
        "--resamples",
        "50",
    )
    refused = _run(*args)
    assert refused.exit_code == 2 and "pass --force" in _said(refused)
    assert (out / "agreement.csv").read_text() == "keep me" and not (out / "agreement.json").exists()
    forced = _run(*args, "--force")
    assert forced.exit_code == 0, forced.output
    assert (out / "agreement.csv").read_text(encoding="utf-8-sig").startswith("scope,")
    assert sorted(p.name for p in out.iterdir()) == [
        "agreement.csv", "agreement.json", "agreement_confusion.png", "agreement_funds.csv",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("펀드코드,펀드명\nKR5230100000,가\n", "no grade column"),
        ("펀드코드,등급\nKR5230100000,7\n", "outside the rubric's 1…5"),
        ("펀드코드,등급\nKR5230100000,1\nKR5230100000,2\n", "different grades"),
    ],
)
def test_bad_experts_files_end_with_a_clear_error(
    batch_dir: Path, tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / "e.csv").write_text(content, encoding="utf-8")
    result = _run("fund", "agreement", batch_dir, "--experts", tmp_path / "e.csv", "--out", tmp_path / "ag")
    assert result.exit_code == 2 and message in _said(result)
    assert "Traceback" not in _said(result) and not (tmp_path / "ag" / "agreement.json").exists()


def test_cells_that_look_like_console_markup_are_printed_as_written(batch_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("펀드코드,등급\n[/x],1\n[/x],2\n", encoding="utf-8")
    result = _run("fund", "agreement", batch_dir, "--experts", tmp_path / "e.csv", "--out", tmp_path / "ag")
    assert result.exit_code == 2 and "Traceback" not in _said(result)
    assert "[/x]: 1 (row 2), 2 (row 3)" in _said(result)
    (tmp_path / "e.csv").write_text("펀드코드,등급\n[/x],1\n", encoding="utf-8")
    result = _run("fund", "agreement", batch_dir, "--experts", tmp_path / "e.csv", "--out", tmp_path / "ag")
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "ag" / "agreement.json").read_text(encoding="utf-8"))
    assert doc["missing"]["expert_only"] == [{"fund_code": "[/x]", "reason": "no_report", "rows": [2]}]
    assert "함께 가진 펀드가 없습니다" in _said(result)


def test_bad_folders_flags_and_rubrics(batch_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("fund_code,grade\nKR5230100000,1\n")
    base = ("fund", "agreement")
    empty = tmp_path / "empty"
    empty.mkdir()
    no_summary = _run(*base, empty, "--experts", tmp_path / "e.csv", "--out", tmp_path / "a1")
    assert no_summary.exit_code == 2 and "no summary.json" in _said(no_summary)
    by = _run(*base, batch_dir, "--experts", tmp_path / "e.csv", "--out", tmp_path / "a2", "--by", "운용사")
    assert by.exit_code == 2 and "--by accepts 유형" in _said(by)
    negative = _run(
        *base, batch_dir, "--experts", tmp_path / "e.csv", "--out", tmp_path / "a4", "--resamples", "-1"
    )
    assert negative.exit_code == 2 and "--resamples must be 0 or more" in _said(negative)
    english = _run(
        *base, batch_dir, "--experts", tmp_path / "e.csv", "--out", tmp_path / "a5", "--by", "type"
    )
    assert english.exit_code == 0, english.output
    assert (tmp_path / "a5" / "agreement_confusion_by_type.png").is_file()
    inside = _run(*base, batch_dir, "--experts", tmp_path / "e.csv", "--out", batch_dir)
    assert inside.exit_code == 2 and "its own folder" in _said(inside)
    rubric = json.loads(
        (Path(__file__).parents[2] / "domains" / "fund" / "rubric.json").read_text(encoding="utf-8")
    )
    rubric["version"] = "2099.9"
    (tmp_path / "r.json").write_text(json.dumps(rubric, ensure_ascii=False), encoding="utf-8")
    other = _run(
        *base,
        batch_dir,
        "--experts",
        tmp_path / "e.csv",
        "--out",
        tmp_path / "a3",
        "--rubric",
        tmp_path / "r.json",
    )
    assert other.exit_code == 2 and "graded with rubric" in _said(other) and "2099.9" in _said(other)


def test_model_grades_from_the_batch_are_compared_too(batch_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    shutil.copytree(batch_dir, folder)
    summary = _summary(folder)
    rated = [f for f in summary["funds"] if f["status"] == "ok"]
    evaluations = {}
    for i, f in enumerate(rated):
        grade = None if i == 0 else min(5, max(1, f["grade"] + (i % 3) - 1))
        evaluations[f["fund_code"]] = {
            "grade": grade,
            "agrees": None if grade is None else grade == f["grade"],
            "schema_valid": grade is not None,
            "engine_grade": f["grade"],
            "grade_difference": None if grade is None else grade - f["grade"],
        }
    add_model_to_summary(summary, evaluations, {"model": "tiny", "adapter": None, "generation": {}})
    assert schema_problems(summary, summary_schema()) == []
    (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    truth = _experts_csv(folder, tmp_path / "experts.csv")
    # a damaged report costs its fund the details, not the run
    broken = rated[1]["file"]
    (folder / broken).write_text("{not json", encoding="utf-8")
    result = _run(
        "fund", "agreement", folder, "--experts", tmp_path / "experts.csv", "--out", tmp_path / "ag"
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "ag" / "agreement.json").read_text(encoding="utf-8"))
    assert schema_problems(doc, agreement_schema()) == []
    assert doc["reports"]["model"] == "tiny" and "모델 일치" in doc["summary_ko"]
    pooled = [
        p for who in ("김", "이") for p in truth["pairs"][who] if evaluations[p[0]]["grade"] is not None
    ]
    model = doc["overall"]["model"]
    assert model["pairs"] == len(pooled)
    assert model["kappa"] == pytest.approx(
        _qwk([p[1] for p in pooled], [evaluations[p[0]]["grade"] for p in pooled])
    )
    assert doc["missing"]["model_missing"] == [{"fund_code": rated[0]["fund_code"], "type": rated[0]["type"]}]
    entries = (
        doc["overall"]["largest_disagreements"]["engine"] + doc["overall"]["largest_disagreements"]["model"]
    )
    damaged = [e for e in entries if e["fund_code"] == rated[1]["fund_code"]]
    for e in damaged:
        assert e["metrics"] is None and "is not readable" in e["detail_error"]
    assert any(e["metrics"] for e in entries if e["fund_code"] != rated[1]["fund_code"])


def test_excel_experts_file_through_the_cli(batch_dir: Path, tmp_path: Path) -> None:
    from openpyxl import Workbook

    rated = [f for f in _summary(batch_dir)["funds"] if f["status"] == "ok"]
    book = Workbook()
    sheet = book.active
    sheet.append(["2025년 상반기 전문가 등급"])
    sheet.append(["펀드코드", "등급"])
    for i, f in enumerate(rated):
        sheet.append([f["fund_code"], f"{f['grade']}등급" if i % 2 else float(min(5, f["grade"] + 1))])
    book.save(tmp_path / "experts.xlsx")
    args = ("--out", tmp_path / "ag", "--resamples", "0")
    result = _run("fund", "agreement", batch_dir, "--experts", tmp_path / "experts.xlsx", *args)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "ag" / "agreement.json").read_text(encoding="utf-8"))
    assert doc["experts"]["format"] == "xlsx" and doc["experts"]["header_row"] == 2
    expected = [f["grade"] if i % 2 else min(5, f["grade"] + 1) for i, f in enumerate(rated)]
    eng = doc["overall"]["engine"]
    assert eng["kappa"] == pytest.approx(_qwk(expected, [f["grade"] for f in rated]))
    assert eng["kappa_ci95"] is None and doc["counts"]["engine_only"] == 0
    assert doc["overall"]["inter_analyst"] is None and eng["by_analyst"] is None


# ------------------------------------------------------------------ hand-made batches


def _batch(grades: dict[str, tuple[str, int | None]], model: dict[str, int | None] | None = None) -> Batch:
    funds = {
        code: EngineFund(code, f"펀드 {code}", t, "ok" if g else "not_rated", g, 50.0, 50.0, None,
                         (model or {}).get(code))
        for code, (t, g) in grades.items()
    }  # fmt: skip
    return Batch(Path("batch"), "2025-06-30", {"name": "r", "version": "1"}, funds, "m" if model else None)


def _experts(rows: list[tuple[str, int, str | None]]) -> Experts:
    grades = [ExpertGrade(code, g, who, None, i + 2) for i, (code, g, who) in enumerate(rows)]
    return Experts(grades=grades, source={"path": "e.csv", "format": "csv", "header_row": 1, "rows_used": len(rows)},
                   has_analyst=any(r[2] for r in rows))  # fmt: skip


def test_three_analysts_pool_pairs_and_give_the_ceiling() -> None:
    rng = np.random.default_rng(2)
    truth = rng.integers(1, 6, size=30)
    codes = [f"F{i:02d}" for i in range(30)]
    batch = _batch(
        {
            c: ("국내주식형" if i % 2 else "채권형", int(g))
            for i, (c, g) in enumerate(zip(codes, truth, strict=True))
        }
    )
    given = {who: np.clip(truth + rng.integers(-1, 2, size=30), 1, 5) for who in ("A", "B", "C")}
    rows = [
        (c, int(given[who][i]), who)
        for who in given
        for i, c in enumerate(codes)
        if not (who == "C" and i < 10)
    ]
    doc = build_agreement(_experts(rows), batch, LABELS, by_type=True, resamples=300)
    assert schema_problems(doc, agreement_schema()) == []
    inter = doc["overall"]["inter_analyst"]
    # pooled inter-analyst κ: every two analysts of a fund, both directions (symmetric)
    a, b = [], []
    for i in range(30):
        who = ["A", "B"] + ([] if i < 10 else ["C"])
        for x in who:
            for y in who:
                if x != y:
                    a.append(given[x][i])
                    b.append(given[y][i])
    assert inter["kappa"] == pytest.approx(_qwk(a, b))
    assert inter["pairs"] == 30 + 20 + 20  # A-B on 30 funds, A-C and B-C on 20
    pair_bc = next(p for p in inter["analyst_pairs"] if p["analysts"] == ["B", "C"])
    assert pair_bc["pairs"] == 20 and pair_bc["kappa"] == pytest.approx(
        _qwk(given["B"][10:], given["C"][10:])
    )
    eng = doc["overall"]["engine"]
    assert eng["pairs"] == 80 and eng["funds"] == 30
    assert eng["by_analyst"]["C"]["kappa"] == pytest.approx(_qwk(given["C"][10:], truth[10:]))
    assert set(doc["by_type"]) == {"국내주식형", "채권형"}
    # bootstrap resamples funds: CI of the pooled κ contains it
    assert eng["kappa_ci95"][0] < eng["kappa"] < eng["kappa_ci95"][1]
    rows_csv = csv_rows(doc)
    assert [r["analyst"] for r in rows_csv if r["scope"] == "전체" and r["comparison"] == "inter_analyst"] == [
        "", "A / B", "A / C", "B / C",
    ]  # fmt: skip


def test_largest_disagreements_are_ranked_and_capped() -> None:
    codes = [f"F{i:02d}" for i in range(40)]
    batch = _batch({c: ("채권형", 5 if i < 25 else 3) for i, c in enumerate(codes)})
    rows = [(c, 1 + (i % 5), None) for i, c in enumerate(codes)]
    doc = build_agreement(_experts(rows), batch, LABELS, resamples=0)
    worst = doc["overall"]["largest_disagreements"]["engine"]
    assert len(worst) == 20
    assert [abs(w["difference"]) for w in worst[:5]] == [4, 4, 4, 4, 4]
    assert all(w["difference"] != 0 for w in worst)
    assert doc["overall"]["engine"]["kappa_ci95"] is None and doc["overall"]["inter_analyst"] is None
    assert worst[0]["metrics"] is None and worst[0]["detail_error"]


def test_grade_nobody_received_and_identical_graders() -> None:
    batch = _batch({"A": ("채권형", 1), "B": ("채권형", 2), "C": ("채권형", 4), "D": ("채권형", 5)})
    doc = build_agreement(
        _experts([("A", 1, None), ("B", 4, None), ("C", 2, None), ("D", 5, None)]), batch, LABELS
    )
    # nobody received 3등급: κ keeps the value distances (sklearn with the full label set agrees)
    assert doc["overall"]["engine"]["kappa"] == pytest.approx(_qwk([1, 4, 2, 5], [1, 2, 4, 5]))
    assert doc["overall"]["engine"]["confusion"][2] == [0, 0, 0, 0, 0]
    same = build_agreement(
        _experts([("A", 3, None)]), _batch({"A": ("채권형", 3), "B": ("채권형", 3)}), LABELS
    )
    assert same["overall"]["engine"]["kappa"] is None and "계산 불가" in same["summary_ko"]


def test_codes_that_lost_leading_zeros_and_no_match_are_explained() -> None:
    batch = _batch({"000123": ("채권형", 2), "004567": ("채권형", 3), "KR5A": ("채권형", 3)})
    doc = build_agreement(_experts([("123", 2, None), ("4567", 3, None), ("kr5a", 3, None)]), batch, LABELS)
    assert doc["counts"]["matched_funds"] == 0 and doc["counts"]["expert_only"] == 3
    assert any("대소문자" in n and "kr5a → KR5A" in n for n in doc["notes"])
    assert any("앞자리 0" in n and "123 → 000123" in n for n in doc["notes"])
    assert any("함께 가진 펀드가 없습니다" in n for n in doc["notes"])
    assert schema_problems(doc, agreement_schema()) == []


def test_heat_maps_label_grades_in_hangul_or_english() -> None:
    batch = _batch({"A": ("채권형", 1), "B": ("국내주식형", 2)}, model={"A": 2, "B": None})
    doc = build_agreement(_experts([("A", 1, None), ("B", 3, None)]), batch, LABELS, by_type=True)
    fig = confusion_figure(doc, hangul=True)
    panels = [ax for ax in fig.axes if ax.get_xlabel()]
    assert [ax.get_xlabel() for ax in panels] == ["엔진 등급", "모델 등급"]
    assert [t.get_text() for t in panels[0].get_xticklabels()] == LABELS
    assert panels[0].get_ylabel() == "전문가 등급"
    cells = {t.get_text() for t in panels[0].texts}
    assert cells == {"0", "1"}
    english = confusion_figure(doc, hangul=False)
    assert [t.get_text() for t in english.axes[0].get_xticklabels()] == ["G1", "G2", "G3", "G4", "G5"]
    per_type = by_type_figure(doc, hangul=True)
    assert sorted(ax.get_title().split(":")[0] for ax in per_type.axes if ax.get_visible()) == [
        "국내주식형",
        "채권형",
    ]
    assert by_type_figure(build_agreement(_experts([("A", 1, None)]), batch, LABELS), hangul=True) is None
