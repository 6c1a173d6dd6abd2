"""The local judge with the offline ``tiny`` model: its scores are noise, so these tests check the plumbing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from arith_pack import ArithmeticPack
from transformers import TrainerState

from evaluator.core.outputs import read_jsonl
from evaluator.core.schemas import load_schema, schema_problems
from evaluator.training.judges import build_judge_reward
from evaluator.training.judges.local import LocalJudge

TASK = "Tom has 3 apples and buys 4 more. How many apples?"
ANSWERS = ["3 + 4 = 7. The answer is 7.", "The answer is 6.", "I think 12.", "4 + 3 = 7, so 7."]


def batch(answers: list[str]) -> dict[str, Any]:
    n = len(answers)
    return {
        "prompts": [[{"role": "user", "content": TASK}] for _ in answers],
        "completions": [[{"role": "assistant", "content": a}] for a in answers],
        "answer": ["7"] * n,
        "id": list(range(n)),
        "trainer_state": TrainerState(global_step=1),
    }


def rows_of(out: Path) -> list[dict[str, Any]]:
    rows = read_jsonl(out / "judge_evaluations.jsonl")
    schema = load_schema("evaluator.training.judges", "judge_evaluation.schema.json")
    assert [schema_problems(r, schema) for r in rows] == [[] for _ in rows]
    return rows


@pytest.mark.slow
def test_noise_is_asked_again_in_batches_then_gives_none(tiny_model_dir: Path, tmp_path: Path) -> None:
    spec = {"kind": "local", "model": "tiny", "max_new_tokens": 8, "batch_size": 3, "max_parse_retries": 1}
    judge = build_judge_reward(spec, ArithmeticPack(), tmp_path)
    backend = judge.backend
    assert isinstance(backend, LocalJudge) and backend.tokenizer.padding_side == "left"
    assert not backend.model.training and not any(p.requires_grad for p in backend.model.parameters())
    metrics: dict[str, float] = {}
    try:
        rewards = judge(**batch(ANSWERS), log_metric=metrics.__setitem__)
    finally:
        judge.close()
    assert rewards == [None] * 4
    assert backend.batches == 4  # two rounds (ask, re-ask) of ceil(4 / 3) generate calls
    rows = rows_of(tmp_path)
    assert [r["sample_id"] for r in rows] == [0, 1, 2, 3]
    for row in rows:
        assert (row["attempts"], row["retries"], len(row["parse_errors"])) == (2, 1, 2)
        assert row["error"].startswith("unreadable judgement after 2 replies") and isinstance(
            row["raw_output"], str
        )
        assert row["judge"] == {"kind": "local", "model": "tiny"} and row["latency_s"] > 0
    stats = judge.stats()
    assert (stats["calls"], stats["requests"], stats["failures"], stats["none_returned"]) == (4, 8, 4, 4)
    assert metrics["judge/failures"] == 4 and metrics["judge/none_frac"] == 1.0
    assert backend.model is None  # closed: the model is released, its size stays on record for the summary
    assert judge.memory_bytes >= 4 * 50_000  # float32 weights of a ~0.1 M-parameter model


@pytest.mark.slow
def test_prefill_reads_a_score_from_the_judge_and_feeds_the_reward(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    spec = {"kind": "local", "model": "tiny", "max_new_tokens": 6, "batch_size": 4, "prefill": True}
    judge = build_judge_reward(spec, ArithmeticPack(), tmp_path)
    n_params = sum(p.numel() for p in judge.backend.model.parameters())
    try:
        rewards = judge(**batch(ANSWERS))
        again = judge(**batch(ANSWERS))
    finally:
        judge.close()
    assert all(r in {0.0, 0.2, 0.4, 0.6, 0.8, 1.0} for r in rewards) and again == rewards
    assert judge.backend.batches == 1  # one generate for the group; the repeat came from the cache
    rows = rows_of(tmp_path)
    for row, reward in zip(rows[:4], rewards, strict=True):
        assert (
            row["raw_output"].startswith('{"score": ') and row["attempts"] == 1 and row["parse_errors"] == []
        )
        assert row["score"] / 5 == pytest.approx(reward) and row["error"] is None
    assert [r["cached"] for r in rows] == [False] * 4 + [True] * 4
    assert 4 * n_params <= judge.memory_bytes < 4.4 * n_params  # float32 weights plus small buffers


@pytest.mark.slow
def test_a_4bit_judge_is_smaller_and_still_judges(tiny_model_dir: Path, tmp_path: Path) -> None:
    import bitsandbytes as bnb

    spec = {"kind": "local", "model": "tiny", "max_new_tokens": 4, "prefill": True}
    full = build_judge_reward(spec, ArithmeticPack(), tmp_path / "full")
    four = build_judge_reward({**spec, "quantize": "4bit"}, ArithmeticPack(), tmp_path / "four")
    try:
        assert any(isinstance(m, bnb.nn.Linear4bit) for m in four.backend.model.modules())
        rewards = four(**batch(ANSWERS[:2]))
    finally:
        full.close()
        four.close()
    assert four.memory_bytes < 0.6 * full.memory_bytes
    assert all(r in {0.0, 0.2, 0.4, 0.6, 0.8, 1.0} for r in rewards)
