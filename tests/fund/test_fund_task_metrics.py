"""The fund pack's declared metrics (reports and ``compare`` give each a CI) and the GRPO reward audit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fund_rationales as w
import pytest

from evaluator.domains.fund.task.audit import audit_rows, fund_code_of, zero_reason
from evaluator.domains.fund.task.rewards import build_reward_functions, load_facts
from evaluator.domains.registry import get_pack
from evaluator.evaluation.compare import compare_reports
from evaluator.evaluation.report import finalize_report
from evaluator.evaluation.scoring import score_rows

PACK = get_pack("fund")
SOURCE = "sample?funds=40&seed=11"
NAMES = ("grade_exact", "within_one", "abs_grade_error", "schema_valid", "reasoning_quality", "total_reward")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return PACK.dataset(SOURCE, "all").to_list()[:12]


def _with(row: dict[str, Any], **changes: Any) -> str:
    doc = json.loads(PACK.reference_solution(row))
    doc.update(changes)
    return json.dumps(doc, ensure_ascii=False)


def _answers(rows: list[dict[str, Any]]) -> list[str]:
    """Reference, one band off, two bands off, prose around the JSON, garbage — repeated over the rows."""
    out = []
    for i, row in enumerate(rows):
        g = row["grade"]
        kind = i % 5
        if kind == 0:
            out.append(PACK.reference_solution(row))
        elif kind == 1:
            out.append(_with(row, grade=g + 1 if g < 5 else g - 1))
        elif kind == 2:
            out.append(_with(row, grade=g + 2 if g < 4 else g - 2))
        elif kind == 3:
            out.append("평가 결과입니다: " + PACK.reference_solution(row))
        else:
            out.append("3등급")
    return out


def test_the_pack_declares_its_metrics_with_one_headline() -> None:
    metrics = {m.name: m for m in PACK.metrics()}
    assert tuple(metrics) == NAMES
    assert [m.name for m in PACK.metrics() if m.headline] == ["grade_exact"]
    assert not metrics["abs_grade_error"].higher_is_better
    assert {n for n, m in metrics.items() if m.binary} == {"grade_exact", "within_one", "schema_valid"}


def test_metric_values_follow_their_definitions(rows: list[dict[str, Any]]) -> None:
    """Independent arithmetic: invalid counts as wrong, the error only over readable grades, the total as TRL sums it."""
    answers = _answers(rows)
    _, samples = score_rows(PACK, rows, answers, "json", "strict")
    weights = {"json_format": 10, "grade_accuracy": 50, "reasoning_quality": 30, "consistency": 10}
    rewards = build_reward_functions()
    for row, text, sample in zip(rows, answers, samples, strict=True):
        got, kind = sample["metrics"], rows.index(row) % 5
        off = {0: 0, 1: 1, 2: 2}.get(kind)
        assert got["grade_exact"] == float(off == 0)
        assert got["within_one"] == float(off is not None and off <= 1)
        assert got.get("abs_grade_error") == (None if off is None else float(off))
        assert got["schema_valid"] == float(kind in (0, 1, 2))
        column = {"grade": [row["grade"]], "facts": [row["facts"]]}
        scores = {n: fn([text], **column)[0] for n, fn in rewards.items()}
        assert got["reasoning_quality"] == pytest.approx(scores["reasoning_quality"])
        assert got["total_reward"] == pytest.approx(sum(weights[n] * (scores[n] or 0) for n in weights))
    assert samples[0]["metrics"]["total_reward"] > 95  # the reference earns (almost) everything


def test_reports_and_compare_give_every_declared_metric_a_ci(rows: list[dict[str, Any]]) -> None:
    refs = [PACK.reference_solution(r) for r in rows]
    worse = _answers(rows)
    reports = []
    for texts in (worse, refs):
        summary, _ = score_rows(PACK, rows, texts, "json", "strict")
        reports.append(finalize_report(
            summary, kind="evaluation", identity={"model": "m"}, generation=None, timing={"seconds": 0.0}, samples_file=None
        ))
    for name in NAMES:
        entry = reports[0]["metrics"][name]
        assert entry["ci95"] is not None and entry["ci95"][0] <= entry["value"] <= entry["ci95"][1]
    references = sum(1 for i in range(len(rows)) if i % 5 == 0)  # only the reference answers are exact
    assert reports[0]["metrics"]["grade_exact"]["value"] == pytest.approx(references / len(rows))
    comparison = compare_reports(reports[0], reports[1], labels=("worse", "reference"))
    for name in NAMES:
        assert name in comparison["metrics"] and len(comparison["metrics"][name]["ci95"]) == 2
    assert comparison["metrics"]["grade_exact"]["delta"] > 0
    assert comparison["metrics"]["abs_grade_error"]["delta"] < 0


def test_zero_reasons_name_the_rule(rows: list[dict[str, Any]]) -> None:
    row = rows[0]
    facts = load_facts(row["facts"])
    ref = PACK.reference_solution(row)
    assert zero_reason("grade_accuracy", "답: " + ref, row) == "not_strict"
    assert zero_reason("reasoning_quality", "답: " + ref, row) == "not_strict"
    assert zero_reason("json_format", "그냥 글", row) == "no_json"
    assert zero_reason("reasoning_quality", _with(row, rationale_ko=w.english(facts)), row) == "not_korean"
    assert zero_reason("reasoning_quality", _with(row, rationale_ko=w.injected(0)(facts)), row) == "injection"
    assert zero_reason("reasoning_quality", _with(row, rationale_ko=w.metric_lines(facts)), row) in ("copying", "figure_dump")
    assert zero_reason("grade_accuracy", _with(row, grade=row["grade"] + 2 if row["grade"] < 4 else 1), row) == "two_bands_off"


def test_the_audit_counts_per_step_and_finds_groups_without_signal(rows: list[dict[str, Any]]) -> None:
    by_code = {r["fund_code"]: r for r in rows}
    a, b = rows[0], rows[1]
    prompt_a, prompt_b = a["prompt"][-1]["content"], b["prompt"][-1]["content"]
    assert fund_code_of(prompt_a, by_code) == a["fund_code"]
    rewards = build_reward_functions()

    def record(step: int, prompt: str, row: dict[str, Any], text: str, advantage: float) -> dict[str, Any]:
        column = {"grade": [row["grade"]], "facts": [row["facts"]]}
        scores = {n: fn([text], **column)[0] for n, fn in rewards.items()}
        return {"step": step, "prompt": prompt, "completion": text, "rewards": scores, "advantage": advantage}

    ref_a = PACK.reference_solution(a)
    records = [
        record(1, prompt_a, a, ref_a, 0.0),
        record(1, prompt_a, a, ref_a, 0.0),  # a group with no spread
        record(1, prompt_b, b, "답: " + PACK.reference_solution(b), -1.0),
        record(1, prompt_b, b, PACK.reference_solution(b), 1.0),
        record(2, prompt_a, a, "nothing", 0.0),
    ]
    audit = audit_rows(records, by_code)
    first, second = audit
    assert first["step"] == 1 and first["completions"] == 4 and first["groups"] == 2
    assert first["groups_without_signal"] == 1
    assert first["zeroed_share"]["grade_accuracy"] == {"not_strict": 0.25}
    assert first["anti_gaming_share"]["reasoning_quality"] == 0.25
    assert second["zeroed_share"]["json_format"] == {"no_json": 1.0} and second["reward_means"]["json_format"] == 0.0


@pytest.mark.slow
def test_fund_demo_quick_runs_end_to_end_with_a_verdict(tmp_path: Path) -> None:
    from conftest import run_cli

    out = tmp_path / "demo"
    result = run_cli("demo", "--fund", "--quick", "--out", str(out))
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "fund_demo_summary.json").read_text())
    assert summary["verdict"].startswith(("GRPO gain shown", "no gain shown"))
    assert summary["verdict"] in " ".join(result.output.split()) or "gain shown" in result.output
    assert summary["eval_n"] == 6 and summary["grpo_steps"] == 1
    assert set(summary["delta_ci95"]) == {"grade_exact", "within_one", "schema_valid", "reasoning_quality", "total_reward"}
