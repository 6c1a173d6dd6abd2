"""``score_rows`` with several samples per item: pass@k, maj@k and per-item correctness, by hand."""

from __future__ import annotations

import pytest

from evaluator.core.schemas import schema_problems
from evaluator.domains.registry import get_pack
from evaluator.evaluation.report import finalize_report, report_schema
from evaluator.evaluation.scoring import score_rows

R = "<reasoning>\nworking\n</reasoning>\n"


def tag(x: str) -> str:
    return R + f"<answer>{x}</answer>"


ROWS = [
    {"id": f"q{i}", "question": f"question {i}", "answer": str(gold), "style": "xml"}
    for i, gold in enumerate((18, 7, 40))
]
COMPLETIONS = [
    # q0: 2 of 4 right; the majority answer (18, twice, written two ways) is right
    [tag("18"), tag("17"), tag("$18.00"), tag("5")],
    # q1: 1 of 4 right (the first sample); majority says 3 → wrong; one bare number (flexible only)
    [tag("7"), tag("3"), tag("3"), "7"],
    # q2: none right under strict; flexible reads the bare 40s and the majority becomes right
    ["40", "40", tag("4"), tag("17 or 40")],
]


@pytest.fixture(scope="module")
def scored() -> tuple[dict, list[dict]]:
    return score_rows(get_pack("gsm8k"), ROWS, COMPLETIONS, extract="strict", seed=3)


def test_samples_come_out_row_by_row(scored) -> None:
    _, samples = scored
    assert [(s["id"], s["sample"]) for s in samples] == [(f"q{i}", j) for i in range(3) for j in range(4)]
    assert [s["correct_strict"] for s in samples[:4]] == [True, False, True, False]
    assert [s["correct_flexible"] for s in samples[8:]] == [True, True, False, False]


def test_accuracy_is_the_mean_over_all_samples(scored) -> None:
    summary, _ = scored
    assert summary["n_items"] == 3 and summary["n_samples"] == 4 and summary["n_completions"] == 12
    assert summary["accuracy"]["strict"]["n_correct"] == 3
    assert summary["accuracy"]["strict"]["value"] == pytest.approx((2 / 4 + 1 / 4 + 0) / 3)
    assert summary["accuracy"]["flexible"]["value"] == pytest.approx((2 / 4 + 2 / 4 + 2 / 4) / 3)


def test_pass_at_k_by_hand(scored) -> None:
    summary, _ = scored
    strict = summary["pass_at_k"]["strict"]
    assert set(strict) == {"1", "2", "4"} and summary["pass_at_k"]["k"] == 4
    assert strict["1"]["value"] == pytest.approx(summary["accuracy"]["strict"]["value"])
    # pass@2 = 1 - C(n-c, 2)/C(4, 2): q0 1-1/6, q1 1-3/6, q2 0
    assert strict["2"]["value"] == pytest.approx(((1 - 1 / 6) + (1 - 3 / 6) + 0) / 3)
    assert strict["4"]["value"] == pytest.approx(2 / 3)
    assert summary["pass_at_k"]["flexible"]["4"]["value"] == pytest.approx(1.0)


def test_maj_at_k_votes_on_numbers_not_spellings(scored) -> None:
    summary, _ = scored
    # strict: q0 votes 18 (18 and $18.00 read as one number) → right; q1 votes 3 → wrong; q2 votes 4 → wrong
    assert summary["maj_at_k"]["strict"]["value"] == pytest.approx(1 / 3)
    # flexible: q1 is a 2-2 tie between 7 and 3, first seen (7) wins → right; q2 votes 40 → right
    assert summary["maj_at_k"]["flexible"]["value"] == pytest.approx(1.0)


def test_items_carry_first_sample_verdicts_and_counts(scored) -> None:
    summary, _ = scored
    items = {it["id"]: it for it in summary["items"]}
    assert items["q1"]["correct_strict"] is True and items["q1"]["n_correct_strict"] == 1
    assert items["q2"]["correct_strict"] is False and items["q2"]["correct_flexible"] is True
    assert items["q0"]["key"] != items["q1"]["key"]


def test_summary_makes_a_valid_report(scored) -> None:
    summary, _ = scored
    report = finalize_report(
        summary, kind="score", identity={}, generation=None, timing={"seconds": 0.1}, samples_file=None
    )
    assert schema_problems(report, report_schema()) == []
    assert len(report["identity"]["items_sha256"]) == 16
    broken = dict(report, accuracy={"strict": {"value": 1.5, "ci95": None, "n_correct": 1}})
    assert schema_problems(broken, report_schema())


def test_a_grader_crash_is_one_wrong_item_not_a_failed_run() -> None:
    pack = get_pack("gsm8k")
    rows = [dict(ROWS[0]), {"id": "bad", "question": "q", "answer": "1", "style": "xml"}]
    summary, samples = score_rows(pack, rows, [[tag("18")], [object()]], extract="flexible")  # type: ignore[list-item]
    assert samples[0]["correct"] is True
    assert samples[1]["correct"] is False and "grading failed" in samples[1]["error"]
    assert summary["n_errors"] == 1 and summary["errors"][0]["id"] == "bad"
