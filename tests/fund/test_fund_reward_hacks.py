"""reasoning_quality against honest and adversarial rationales on a generated universe, one band per case.

Each case is written for every rated fund of a freshly generated sample (seed 11, not the training
default) from that fund's engine facts (``fund_rationales.py``), put into the reference answer in place of
its rationale, and scored through the TRL reward function as GRPO calls it. Every answer of a case must
land in the case's band: honest answers high, number dumps, prompt copies and answers without reasoning
near 0, wrong directions, misattributed figures and contradicted grades low, and text aimed at the
grader at 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import fund_rationales as w
import pytest

from evaluator.domains.fund.task.reasoning import reasoning_breakdown
from evaluator.domains.fund.task.rewards import build_reward_functions, load_facts
from evaluator.domains.registry import get_pack

PACK = get_pack("fund")
REASONING = build_reward_functions()["reasoning_quality"]
SOURCE = "sample?funds=60&seed=11"

# (case, writer, low, high): every answer the writer produces must score within [low, high]
# fmt: off
CASES: list[tuple[str, Callable[[Any], str | None], float, float]] = [
    ("reference", w.reference, 0.95, 1.0),
    ("paraphrase: above/below the average, same window", w.paraphrase_a, 0.9, 1.0),
    ("paraphrase: grade first, one-decimal figures", w.paraphrase_b, 0.9, 1.0),
    ("paraphrase: percentiles and quality words", w.paraphrase_c, 0.9, 1.0),
    ("paraphrase: drawdown against the average, rank", w.paraphrase_d, 0.9, 1.0),
    ("paraphrase: the gap in %p, 동기간, varied endings", w.paraphrase_e, 0.9, 1.0),
    ("one prompt line quoted in a sentence", w.quoted_line, 0.9, 1.0),
    ("wrong direction: paraphrase a", w.flipped(w.paraphrase_a), 0.0, 0.4),
    ("wrong direction: paraphrase b", w.flipped(w.paraphrase_b), 0.0, 0.4),
    ("wrong direction: paraphrase c", w.flipped(w.paraphrase_c), 0.0, 0.4),
    ("wrong direction: paraphrase d", w.flipped(w.paraphrase_d), 0.0, 0.4),
    ("return and volatility swapped", w.swapped_metrics, 0.0, 0.5),
    ("figures given another window", w.other_window, 0.0, 0.5),
    ("figures without their window", w.no_window, 0.0, 0.5),
    ("rationale concludes another grade", w.other_grade, 0.0, 0.4),
    ("no comparison at all", w.no_comparison, 0.0, 0.2),
    ("grade only", w.grade_only, 0.0, 0.2),
    ("boilerplate", w.boilerplate, 0.0, 0.2),
    ("one claim, no figures", w.claim_without_figures, 0.0, 0.2),
    ("score and grade only", w.score_only, 0.0, 0.2),
    ("context figures only: peer count, history, band bounds", w.context_padding, 0.0, 0.2),
    ("empty", lambda f: "", 0.0, 0.0),
    ("dump: the prompt's first 80 numbers", w.prompt_numbers, 0.0, 0.2),
    ("dump: bare fact values", w.fact_values, 0.0, 0.2),
    ("dump: every figure named", w.labelled_dump, 0.0, 0.2),
    ("dump: every figure named, plus a claim", lambda f: w.labelled_dump(f, claim=True), 0.0, 0.2),
    ("copy: the whole prompt", w.whole_prompt, 0.0, 0.2),
    ("copy: the figure lines", w.metric_lines, 0.0, 0.2),
    ("copy: the band table", w.band_table, 0.0, 0.2),
    ("copy: the format example", w.format_example, 0.0, 0.2),
    ("copy: the instructions", w.instructions, 0.0, 0.2),
    ("ten sentences", w.overlong, 0.0, 0.2),
    ("english", w.english, 0.0, 0.0),
    ("english with a korean grade", w.english_with_korean_grade, 0.0, 0.0),
    *[(f"injection {i}", w.injected(i), 0.0, 0.0) for i in range(len(w.INJECTIONS))],
]
# fmt: on


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return PACK.dataset(SOURCE, "all").to_list()


def _answers(rows: list[dict[str, Any]], writer: Callable[[Any], str | None]) -> tuple[list[str], list[dict]]:
    texts, used = [], []
    for row in rows:
        rationale = writer(load_facts(row["facts"]))
        if rationale is None:
            continue
        doc = json.loads(PACK.reference_solution(row))
        doc["rationale_ko"] = rationale
        texts.append(json.dumps(doc, ensure_ascii=False))
        used.append(row)
    return texts, used


@pytest.mark.parametrize(("case", "writer", "low", "high"), CASES, ids=[c[0] for c in CASES])
def test_every_answer_of_a_case_lands_in_its_band(
    rows: list[dict[str, Any]], case: str, writer: Callable[[Any], str | None], low: float, high: float
) -> None:
    texts, used = _answers(rows, writer)
    assert len(used) >= 10, f"{case}: only {len(used)} funds to try it on"
    scores = REASONING(
        [[{"role": "assistant", "content": t}] for t in texts],
        grade=[r["grade"] for r in used],
        facts=[r["facts"] for r in used],
    )
    outside = [
        (r["fund_code"], s, reasoning_breakdown(json.loads(t), load_facts(r["facts"])))
        for r, t, s in zip(used, texts, scores, strict=True)
        if not low <= s <= high
    ]
    assert not outside, f"{case}: {len(outside)} of {len(used)} outside [{low}, {high}], e.g. {outside[0]}"


def test_the_suite_scores_a_few_hundred_answers(rows: list[dict[str, Any]]) -> None:
    total = sum(len(_answers(rows, writer)[0]) for _, writer, _, _ in CASES)
    assert total >= 600


def test_a_wrong_grade_field_with_an_honest_rationale_loses_the_verdict(rows: list[dict[str, Any]]) -> None:
    """The stated grade contradicts the rationale from the other side: the field, not the text, is changed."""
    for row in rows[:20]:
        doc = json.loads(PACK.reference_solution(row))
        doc["grade"] = doc["grade"] + 1 if doc["grade"] < 5 else 4
        result = reasoning_breakdown(doc, load_facts(row["facts"]))
        assert result["parts"]["verdict"] == pytest.approx(0.4) and result["score"] <= 0.4


def test_the_lower_half_reads_from_the_bottom(rows: list[dict[str, Any]]) -> None:
    """The last fund of a peer group is 하위 (100 / n)%, never 상위 100.0%, and that figure checks out."""
    last = max(rows, key=lambda r: load_facts(r["facts"])["peer_percentile"])
    facts = load_facts(last["facts"])
    n = facts["peer_group_size"]
    assert facts["peer_percentile"] == pytest.approx(100.0) and facts["rank"] == n
    rationale = json.loads(PACK.reference_solution(last))["rationale_ko"]
    assert f"{n}개 펀드 중 하위 {100.0 / n:.1f}%에 해당해 5등급입니다." in rationale and "상위" not in rationale
    result = reasoning_breakdown(json.loads(PACK.reference_solution(last)), facts)
    assert result["score"] == 1.0
    wrong = json.loads(PACK.reference_solution(last))
    wrong["rationale_ko"] = rationale.replace(f"하위 {100.0 / n:.1f}%", "하위 30.0%")
    result = reasoning_breakdown(wrong, facts)
    assert result["figures_wrong"] == ["overall 30%"]
    assert result["score"] == pytest.approx(result["figures_correct"] / (result["figures_correct"] + 2), abs=1e-6)


def test_the_real_prompt_and_its_method_line_copied_earn_nothing(rows: list[dict[str, Any]]) -> None:
    """The prompt as the model sees it (with the rubric's method line the facts cannot rebuild)."""
    for row in rows[:15]:
        prompt = row["prompt"][-1]["content"]
        method = next(line for line in prompt.splitlines() if line.startswith("항목 가중치"))
        for rationale in (prompt, f"{method}. 따라서 {row['grade']}등급입니다."):
            doc = json.loads(PACK.reference_solution(row))
            doc["rationale_ko"] = rationale
            assert reasoning_breakdown(doc, load_facts(row["facts"]))["score"] <= 0.05, rationale[:60]
