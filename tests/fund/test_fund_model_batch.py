"""`evaluator fund evaluate … --model`: the model's evaluation beside the engine's grade, disagreements flagged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.reports.batch import write_reports
from evaluator.domains.fund.reports.report import report_schema, summary_schema
from evaluator.domains.fund.task.dataset import load_evaluation, parse_source
from evaluator.domains.fund.task.model_eval import fund_rows, model_evaluations
from evaluator.domains.fund.task.reference import reference_json
from evaluator.domains.registry import get_pack
from evaluator.evaluation.scoring import score_rows


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    docs = {}
    for path in folder.glob("*.json"):
        if path.name != "summary.json":
            doc = json.loads(path.read_text(encoding="utf-8"))
            docs[doc["fund_code"]] = doc
    return docs


def _valid(folder: Path) -> dict[str, Any]:
    for code, doc in _reports(folder).items():
        assert schema_problems(doc, report_schema()) == [], code
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert schema_problems(summary, summary_schema()) == []
    return summary


def test_hand_written_model_answers_are_recorded_and_disagreements_flagged(tmp_path: Path) -> None:
    evaluation = load_evaluation(parse_source("sample?funds=40"))
    codes, rows, facts = fund_rows(evaluation)
    assert len(codes) == len(rows) >= 5
    first = facts[codes[0]]
    wrong = (first["grade"] % 5) + 1  # another grade
    texts = (
        [
            [reference_json(facts[codes[0]]).replace(f'"grade": {first["grade"]}', f'"grade": {wrong}')],
            [reference_json(facts[codes[1]])],
            [
                "결과: " + reference_json(facts[codes[2]])
            ],  # right grade inside prose: readable, not schema-valid
            ["모르겠습니다"],
            [""],
        ]
        + [[reference_json(facts[c])] for c in codes[5:]]
    )
    # graded the way `fund evaluate --model` grades: the harness's scorer, the pack's grader
    _, samples = score_rows(get_pack("fund"), rows, texts, "json", "flexible", errors={4: "generation failed: out of memory"})
    evaluations = model_evaluations(codes, samples, facts, model="my-model", adapter=None)
    outcome = write_reports(
        evaluation, tmp_path / "out", model_evaluations=evaluations, model_run={"model": "my-model"}
    )
    assert not outcome.failures
    summary = _valid(tmp_path / "out")
    reports = _reports(tmp_path / "out")

    assert reports[codes[0]]["model_evaluation"]["grade"] == wrong
    assert reports[codes[0]]["model_evaluation"]["agrees"] is False
    assert reports[codes[0]]["model_evaluation"]["grade_difference"] == wrong - first["grade"]
    assert reports[codes[1]]["model_evaluation"]["checks"]["reasoning_quality"] == 1.0
    prose = reports[codes[2]]["model_evaluation"]
    assert prose["agrees"] is True and prose["schema_valid"] is False and prose["framing"] == "flexible"
    assert reports[codes[3]]["model_evaluation"]["grade"] is None
    assert reports[codes[4]]["model_evaluation"]["error"].startswith("generation failed")
    unrated = [d for d in reports.values() if d["status"] != "ok"]
    assert unrated and all(d["model_evaluation"] is None for d in unrated)

    block = summary["model_evaluation"]
    n = len(codes)
    assert block["funds_evaluated"] == n
    assert (block["agree"], block["disagree"], block["unreadable"]) == (n - 3, 1, 2)
    assert block["schema_valid"] == n - 3
    flagged = {d["fund_code"]: d for d in block["disagreements"]}
    assert set(flagged) == {codes[0], codes[3], codes[4]}
    assert flagged[codes[0]]["reason"] == "grade_differs" and flagged[codes[3]]["model_grade"] is None
    lines = {line["fund_code"]: line for line in summary["funds"]}
    assert (
        lines[codes[0]]["model_agrees"] is False
        and lines[codes[1]]["model_grade"] == facts[codes[1]]["grade"]
    )


def test_reports_without_a_model_keep_their_old_shape(tmp_path: Path) -> None:
    evaluation = load_evaluation(parse_source("sample?funds=40"))
    write_reports(evaluation, tmp_path / "plain")
    summary = _valid(tmp_path / "plain")
    assert "model_evaluation" not in summary
    assert all("model_evaluation" not in d for d in _reports(tmp_path / "plain").values())


def test_bad_model_flags_fail_cleanly_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "never"
    result = run_cli("fund", "evaluate", "--sample", "--out", str(out), "--adapter", str(tmp_path))
    assert result.exit_code == 2 and "--adapter needs --model" in result.output
    result = run_cli(
        "fund", "evaluate", "--sample", "--out", str(out), "--model", "tiny", "--adapter", str(tmp_path)
    )
    assert result.exit_code == 2 and "not a LoRA adapter folder" in result.output
    assert not out.exists()


@pytest.mark.slow
def test_fund_evaluate_with_the_tiny_model_adds_model_evaluations(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "reports"
    result = run_cli(
        "fund", "evaluate", "--sample", "--sample-funds", "30", "--model", "tiny",
        "--max-new-tokens", "8", "--batch-size", "4", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = _valid(out)
    reports = _reports(out)
    rated = [d for d in reports.values() if d["status"] == "ok"]
    assert rated
    for doc in rated:
        model = doc["model_evaluation"]
        assert isinstance(model["schema_valid"], bool)
        assert model["grade"] is None or 1 <= model["grade"] <= 5
        assert model["engine_grade"] == doc["grade"] and model["model"] == "tiny"
    for doc in reports.values():
        if doc["status"] != "ok":
            assert doc["model_evaluation"] is None
    block = summary["model_evaluation"]
    assert block["funds_evaluated"] == len(rated)
    assert block["agree"] + block["disagree"] + block["unreadable"] == len(rated)
    assert len(block["disagreements"]) == block["disagree"] + block["unreadable"]
    assert block["generation"]["max_new_tokens"] == 8 and block["generation"]["batch_size"] == 4


def test_model_evaluation_is_the_pack_graders_verdict() -> None:
    """One grader: the checks and grade in a fund's model_evaluation are exactly what pack.grade says."""
    evaluation = load_evaluation(parse_source("sample?funds=40"))
    codes, rows, facts = fund_rows(evaluation)
    pack = get_pack("fund")
    texts = [reference_json(facts[codes[0]]), "등급: 2등급, 근거 없음", '{"grade": 9}']
    _, samples = score_rows(pack, rows[:3], texts, "json", "flexible")
    evaluations = model_evaluations(codes[:3], samples, facts, model="m")
    for code, row, text in zip(codes[:3], rows[:3], texts, strict=True):
        verdict = pack.grade(text, row, style="json", extract="flexible")
        got = evaluations[code]
        assert got["checks"] == {k: float(v or 0.0) for k, v in verdict.scores.items()}
        assert got["grade"] == (None if verdict.extracted is None else int(verdict.extracted))
        assert got["schema_valid"] == verdict.details["schema_valid"]


def test_split_flag_is_checked_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "never"
    result = run_cli("fund", "evaluate", "--sample", "--out", str(out), "--split", "test")
    assert result.exit_code == 2 and "give --model too" in result.output
    result = run_cli("fund", "evaluate", "--sample", "--out", str(out), "--model", "tiny", "--split", "dev")
    assert result.exit_code == 2 and "--split must be one of train, test, all" in result.output
    assert not out.exists()


@pytest.mark.slow
def test_fund_evaluate_split_test_grades_only_held_out_funds(tiny_model_dir: Path, tmp_path: Path) -> None:
    """``--split test``: the model answers exactly the rated funds whose code hashes to the task's test split."""
    from evaluator.domains.fund.task.dataset import split_of

    out = tmp_path / "reports"
    result = run_cli(
        "fund", "evaluate", "--sample", "--sample-funds", "40", "--model", "tiny", "--split", "test",
        "--max-new-tokens", "4", "--batch-size", "8", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = _valid(out)
    reports = _reports(out)
    held_out = {c for c, d in reports.items() if d["status"] == "ok" and split_of(d["fund_code"]) == "test"}
    assert held_out and len(held_out) < sum(d["status"] == "ok" for d in reports.values())
    answered = {c for c, d in reports.items() if d["model_evaluation"] is not None}
    assert answered == held_out
    block = summary["model_evaluation"]
    assert block["split"] == "test" and block["funds_evaluated"] == len(held_out)
