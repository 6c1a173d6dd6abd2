"""The fund pack as a GRPO task: data from the engine, splits by fund, prompts, reading, reference, judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.core.schemas import schema_problems
from evaluator.domains.base import PackError, Verdict
from evaluator.domains.fund.data.sample import generate_sample, write_sample
from evaluator.domains.fund.task.answer import evaluation_schema
from evaluator.domains.fund.task.citations import sentences
from evaluator.domains.fund.task.dataset import load_evaluation, parse_source, split_of
from evaluator.domains.fund.task.rewards import load_facts
from evaluator.domains.registry import get_pack

PACK = get_pack("fund")


@pytest.fixture(scope="module")
def train_rows() -> list[dict[str, Any]]:
    return PACK.dataset(None, "train").to_list()


@pytest.fixture(scope="module")
def test_rows() -> list[dict[str, Any]]:
    return PACK.dataset(None, "test").to_list()


def test_rows_are_the_rated_funds_split_by_fund_with_none_in_both(
    train_rows: list[dict[str, Any]], test_rows: list[dict[str, Any]]
) -> None:
    evaluation = load_evaluation(parse_source(None))
    rated = {f.fund_code for f in evaluation.funds if f.status == "ok"}
    train, test = {r["fund_code"] for r in train_rows}, {r["fund_code"] for r in test_rows}
    assert train.isdisjoint(test)
    assert train | test == rated
    assert 0.65 < len(train) / len(rated) < 0.95  # about 80 / 20
    assert all(split_of(code) == "train" for code in train) and all(split_of(c) == "test" for c in test)
    by_code = {f.fund_code: f for f in evaluation.funds}
    for row in test_rows:
        fund = by_code[row["fund_code"]]
        assert row["grade"] == fund.grade and row["answer"] == str(fund.grade)
        assert row["score"] == pytest.approx(fund.score, abs=1e-4)
        assert load_facts(row["facts"])["grade"] == fund.grade


def test_columns_are_arrow_friendly_and_the_prompt_is_korean_chat(test_rows: list[dict[str, Any]]) -> None:
    dataset = PACK.dataset(None, "test", limit=5)
    assert len(dataset) == 5
    assert {"id", "prompt", "style", "fund_code", "grade", "score", "facts"} <= set(dataset.column_names)
    row = test_rows[0]
    facts = load_facts(row["facts"])
    system, user = row["prompt"]
    assert system["role"] == "system" and user["role"] == "user" and "JSON" in system["content"]
    content = user["content"]
    assert row["fund_code"] in content and facts["type"] in content
    for needle in ("연환산 수익률", "백분위", "등급 기준", "rationale_ko", "1등급 상위 10%"):
        assert needle in content
    ret = facts["metrics"][facts["main_period"]]["annualized_return"]["value"]
    assert f"{ret * 100:.2f}%" in content
    assert f"{facts['grade']}등급입니다" not in content  # the prompt never gives the answer away
    assert len(content) < 2500  # compact enough for small models


def test_the_prompt_example_has_the_answer_shape(test_rows: list[dict[str, Any]]) -> None:
    content = test_rows[0]["prompt"][1]["content"]
    example = json.loads(content.splitlines()[-1])
    assert schema_problems(example, evaluation_schema()) == []
    assert set(example["criteria"]) == {c["id"] for c in PACK.rubric()["criteria"]}


def test_a_nav_file_source_with_a_sibling_benchmark_gives_the_same_split(tmp_path: Path) -> None:
    nav, bench = write_sample(generate_sample(funds=40), tmp_path / "navs.csv")
    assert bench.name == "navs.benchmark.csv"
    rows = PACK.dataset(str(nav), "all").to_list()
    assert rows and all(split_of(r["fund_code"]) in ("train", "test") for r in rows)
    facts = load_facts(rows[0]["facts"])
    assert "information_ratio" in facts["metrics"][facts["main_period"]]  # the benchmark was found
    test_codes = {r["fund_code"] for r in PACK.dataset(str(nav), "test").to_list()}
    assert test_codes == {r["fund_code"] for r in rows if split_of(r["fund_code"]) == "test"}


@pytest.mark.parametrize(
    ("source", "split", "message"),
    [
        ("/no/such/navs.csv", "train", "neither 'sample' nor an existing NAV file"),
        ("sample?fundz=40", "train", "unknown fund data option(s) fundz"),
        ("sample?funds=forty", "train", "must be a whole number"),
        ("sample?funds=5", "train", "at least 20 funds"),
        (None, "validation", "splits train, test, all"),
    ],
)
def test_bad_sources_and_splits_are_clear_errors(source: str | None, split: str, message: str) -> None:
    with pytest.raises(PackError, match=message.replace("(", r"\(").replace(")", r"\)")):
        PACK.dataset(source, split)


def test_extract_reads_strict_and_flexible_grades() -> None:
    answer = '{"grade": 4, "score": 30.1, "criteria": {}, "rationale_ko": "수익률이 낮습니다"}'
    assert PACK.extract(answer, style="json") == "4"
    assert PACK.extract("```json\n" + answer + "\n```", style="json") == "4"
    assert PACK.extract("결론: " + answer, style="json") is None
    assert PACK.extract("결론: " + answer, style="json", mode="flexible") == "4"
    assert PACK.extract('{"grade": "2등급"}', style="json", mode="flexible") == "2"
    assert PACK.extract("종합하면 이 펀드는 5등급입니다.", style="json", mode="flexible") == "5"
    assert PACK.extract("등급을 정할 수 없습니다.", style="json", mode="flexible") is None
    with pytest.raises(PackError):
        PACK.extract(answer, style="xml")


def test_summarize_reports_the_fund_figures(test_rows: list[dict[str, Any]]) -> None:
    row = next(r for r in test_rows if r["grade"] == 3)
    facts = load_facts(row["facts"])
    exact = PACK.reference_solution(row)
    off_one = exact.replace('"grade": 3', '"grade": 4')
    off_two = exact.replace('"grade": 3', '"grade": 1')
    unreadable = "평가할 수 없습니다."
    verdicts = [PACK.grade(t, row) for t in (exact, off_one, off_two, unreadable)]
    assert isinstance(verdicts[0], Verdict) and verdicts[0].correct and facts["grade"] == 3
    summary = PACK.summarize([row] * 4, verdicts)
    assert summary["schema_valid_rate"] == 0.75
    assert summary["grade_exact"] == 0.25 and summary["within_one_band"] == 0.5
    assert summary["mean_abs_grade_error"] == pytest.approx(1.0)
    assert summary["answered"] == 3
    assert PACK.summarize([row], [PACK.grade(unreadable, row)])["mean_abs_grade_error"] is None


def test_reference_solution_is_a_schema_valid_answer_citing_real_figures(
    train_rows: list[dict[str, Any]],
) -> None:
    for row in train_rows[:20]:
        doc = json.loads(PACK.reference_solution(row))
        facts = load_facts(row["facts"])
        assert schema_problems(doc, evaluation_schema()) == []
        assert doc["grade"] == row["grade"] and abs(doc["score"] - row["score"]) < 0.06
        top, size, rank = facts["peer_percentile"], facts["peer_group_size"], facts["rank"]
        if top <= 50:
            assert f"상위 {top:.1f}%에 해당해" in doc["rationale_ko"]
        else:  # the lower half reads from the bottom: the share of the group at or below the fund
            assert f"하위 {100.0 * (size - rank + 1) / size:.1f}%에 해당해" in doc["rationale_ko"]
            assert "상위" not in doc["rationale_ko"]
        assert len([s for s in sentences(doc["rationale_ko"]) if s.strip()]) == 3  # the prompt asks for 2–3
    assert PACK.reference_solution({"style": "json"}) is None


def test_sft_warm_start_pairs_prompts_with_reference_answers() -> None:
    from evaluator.training.config import load_config
    from evaluator.training.sft import sft_dataset

    cfg = load_config(None, {"domain": "fund", "data": "sample?funds=40", "limit": 4})
    data = sft_dataset(PACK, cfg, "json")
    assert len(data) == 4
    for row in data:
        completion = row["completion"][0]["content"]
        assert json.loads(completion)["grade"] == row["grade"]


def test_judge_context_and_levels_feed_the_judge_prompt(test_rows: list[dict[str, Any]]) -> None:
    from evaluator.training.judges.prompt import build_judge_messages

    row = test_rows[0]
    context = PACK.judge_context(row)
    assert row["fund_code"] in context["task"] and "등급 기준" in context["task"]
    assert json.loads(context["reference"])["grade"] == row["grade"]
    levels = PACK.judge_levels()
    assert sorted(levels) == [str(i) for i in range(6)]
    assert all(any("가" <= ch <= "힣" for ch in text) and " / " in text for text in levels.values())
    messages = build_judge_messages(context, levels, '{"grade": 1}', PACK.description)
    assert levels["5"] in messages[-1]["content"] and row["fund_code"] in messages[-1]["content"]


def test_tokenizer_corpus_is_deterministic_korean_fund_text() -> None:
    first, second = PACK.tokenizer_corpus(400), PACK.tokenizer_corpus(400)
    assert first == second and 3 <= len(first) <= 20
    assert any("연환산 수익률" in t for t in first)
    assert any(t.startswith('{"grade"') for t in first)
    assert len(PACK.tokenizer_corpus(2)) < len(first)


def test_pack_reports_its_rewards_with_the_planned_weights() -> None:
    assert PACK.default_weights() == {
        "json_format": 10.0,
        "grade_accuracy": 50.0,
        "reasoning_quality": 30.0,
        "consistency": 10.0,
    }
    assert list(PACK.reward_functions()) == list(PACK.default_weights())
    assert PACK.primary_reward == "grade_accuracy"


def test_existing_completions_are_scored_from_a_predictions_file(
    test_rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    from evaluator.evaluation.predictions import score_predictions

    row = test_rows[0]
    reference = PACK.reference_solution(row)
    wrong = reference.replace(f'"grade": {row["grade"]}', f'"grade": {row["grade"] % 5 + 1}')
    lines = [
        {"answer": row["grade"], "facts": row["facts"], "completion": reference},
        {"answer": f"{row['grade']}등급", "completion": wrong},
        {"answer": "A+", "completion": reference},
    ]
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    report, samples = score_predictions(PACK, path)
    assert report["n_items"] == 2 and report["n_invalid_lines"] == 1
    assert report["accuracy"]["strict"]["value"] == 0.5
    assert samples[0]["scores"]["reasoning_quality"] == 1.0
    assert samples[1]["scores"]["reasoning_quality"] is None  # no facts on that line
    assert samples[1]["scores"]["grade_accuracy"] in (0.0, 0.5)
    assert report["domain_metrics"]["schema_valid_rate"] == 1.0


def test_summary_ko_says_하위_for_the_lower_half_and_상위_for_the_upper() -> None:
    from evaluator.domains.fund.reports.report import build_report

    evaluation = load_evaluation(parse_source("sample?funds=40"))
    rated = [f for f in evaluation.funds if f.status == "ok"]
    last = max(rated, key=lambda f: f.peer_percentile)
    first = min(rated, key=lambda f: f.peer_percentile)
    n = last.peer_group_size
    assert last.peer_percentile == pytest.approx(100.0)
    summary = build_report(last, evaluation.rubric)["summary_ko"]
    assert f"{n}개 펀드 중 하위 {100.0 / n:.1f}%로 5등급" in summary and "상위 100.0%" not in summary
    top = build_report(first, evaluation.rubric)["summary_ko"]
    assert f"펀드 중 상위 {first.peer_percentile:.1f}%로 1등급" in top


def test_reference_compares_with_the_percentile_when_the_peer_average_is_missing(
    train_rows: list[dict[str, Any]],
) -> None:
    from evaluator.domains.fund.task.reasoning import reasoning_breakdown
    from evaluator.domains.fund.task.reference import reference_answer

    for row in train_rows[:10]:
        facts = json.loads(row["facts"])
        for period_cells in facts["metrics"].values():
            for cell in period_cells.values():
                cell["peer_mean"] = None
        doc = reference_answer(facts)
        assert "평균" not in doc["rationale_ko"] and "백분위" in doc["rationale_ko"]
        assert reasoning_breakdown(doc, facts)["score"] >= 0.95, doc["rationale_ko"]


def test_a_nav_file_with_distributions_is_graded_on_total_returns_as_fund_evaluate_does(
    tmp_path: Path,
) -> None:
    """The GRPO task's engine run reads the 분배금 column like `fund evaluate`: settling funds are graded on
    total returns, not left `not_rated` as unadjusted resets."""
    from evaluator.domains.fund.data.loaders import load_universe
    from evaluator.domains.fund.engine.evaluate import evaluate_loaded

    nav, bench = write_sample(generate_sample(funds=60, realistic=True), tmp_path / "navs.csv")
    task = load_evaluation(parse_source(str(nav)))
    direct = evaluate_loaded(load_universe(nav, benchmark=bench))
    assert [(f.fund_code, f.status, f.grade) for f in task.funds] == [
        (f.fund_code, f.status, f.grade) for f in direct.funds
    ]
    adjusted = [f for f in task.funds if f.return_basis != "raw" and f.status == "ok"]
    assert adjusted, "the realistic sample's settling funds are rated on total returns"
