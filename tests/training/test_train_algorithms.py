"""RLOO's arguments from the one config, dynamic sampling's prompt stream, and JSON that stays JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evaluator.core.outputs import append_jsonl_rows, atomic_write_json, atomic_write_jsonl, dumps
from evaluator.training.algorithms import algorithm_record, trl_args
from evaluator.training.config import ConfigError, TrainConfig, load_config
from evaluator.training.prompt_stream import PromptStream, streamed_dataset


def _common(tmp_path: Path) -> dict:
    return {"output_dir": str(tmp_path), "use_cpu": True, "bf16": False, "per_device_train_batch_size": 4,
            "report_to": "none"}


def test_rloo_gets_every_mapped_field_from_the_config_not_trl_defaults(tmp_path: Path) -> None:
    from trl import RLOOConfig

    defaults = RLOOConfig(**_common(tmp_path))
    assert (defaults.beta, defaults.num_generations) == (0.05, 2)  # what a silent default would have given
    cfg = TrainConfig(algorithm="rloo", num_generations=4, temperature=0.7, max_completion_length=33)
    args = trl_args(cfg, _common(tmp_path), [1.0, 0.5], {})
    assert isinstance(args, RLOOConfig)
    assert (args.beta, args.num_generations, args.normalize_advantages) == (0.0, 4, False)
    assert (args.temperature, args.max_completion_length, args.reward_weights) == (0.7, 33, [1.0, 0.5])
    assert not hasattr(args, "loss_type") and not hasattr(args, "scale_rewards")
    record = algorithm_record(cfg)
    assert record["trainer"] == "RLOOTrainer" and record["ignored_fields"] == ["loss_type", "scale_rewards"]
    assert "PPOTrainer" in record["note"]
    kl = trl_args(cfg.replace(beta=0.04, normalize_advantages=True), _common(tmp_path), [1.0], {})
    assert (kl.beta, kl.normalize_advantages) == (0.04, True)


def test_grpo_mapping_and_config_checks(tmp_path: Path) -> None:
    from trl import GRPOConfig

    args = trl_args(TrainConfig(loss_type="grpo", scale_rewards="none"), _common(tmp_path), [1.0], {})
    assert isinstance(args, GRPOConfig) and (args.loss_type, args.scale_rewards) == ("grpo", "none")
    with pytest.raises(ConfigError, match="algorithm must be one of grpo, rloo"):
        load_config(None, {"algorithm": "ppo"})
    with pytest.raises(ConfigError, match="normalize_advantages is an RLOO setting"):
        load_config(None, {"normalize_advantages": True})
    with pytest.raises(ConfigError, match="dynamic_sampling streams prompts"):
        load_config(None, {"dynamic_sampling": 3})


def rows(n: int) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": f"q{i}"}], "answer": str(i)} for i in range(n)]


def test_prompt_stream_rests_flat_groups_for_the_cooldown_then_draws_them_again() -> None:
    stream = PromptStream(rows(4), cooldown=2, seed=0, key=lambda r: r["prompt"][0]["content"])
    it = iter(stream)
    first = [next(it)["prompt"][0]["content"] for _ in range(4)]
    assert sorted(first) == ["q0", "q1", "q2", "q3"]
    # step 1: q0's group all scored 1.0 (no signal), q1's group varied, q2's group had one abstaining reward
    stream.observe(["q0"] * 3 + ["q1"] * 3 + ["q2"] * 3, [1.0, 1.0, 1.0, 0.0, 1.0, 0.5, None, 0.0, 0.0])
    assert stream.counts["zero_spread_groups"] == 2 and stream.counts["groups"] == 3
    epoch2 = [next(it)["prompt"][0]["content"] for _ in range(2)]
    assert sorted(epoch2) == ["q1", "q3"] and stream.counts["skipped"] >= 1
    stream.observe([], [])
    stream.observe([], [])  # two steps later the cool-down is over
    later = {next(it)["prompt"][0]["content"] for _ in range(8)}  # the rest of this pass and a whole next one
    assert later == {"q0", "q1", "q2", "q3"}


def test_prompt_stream_never_stalls_when_everything_rests() -> None:
    stream = PromptStream(rows(2), cooldown=100, seed=1, key=lambda r: r["prompt"][0]["content"])
    stream.observe(["q0", "q0", "q1", "q1"], [0.0, 0.0, 1.0, 1.0])
    it = iter(stream)
    assert {next(it)["prompt"][0]["content"] for _ in range(2)} == {"q0", "q1"}
    assert stream.counts["forced"] == 1


def test_streamed_dataset_reads_the_live_stream() -> None:
    stream = PromptStream(rows(3), cooldown=5, seed=0, key=lambda r: r["prompt"][0]["content"])
    ds = streamed_dataset(stream)
    stream.observe(["q1", "q1"], [0.5, 0.5])
    seen = [r["prompt"][0]["content"] for _, r in zip(range(4), ds, strict=False)]
    assert "q1" not in seen and len(seen) == 4


def test_non_finite_numbers_are_written_as_null_everywhere(tmp_path: Path) -> None:
    doc = {"reward": float("nan"), "rewards": {"judge": np.float32("nan"), "x": [1.0, float("inf")]}, "ok": 2.5}
    expected = {"reward": None, "rewards": {"judge": None, "x": [1.0, None]}, "ok": 2.5}
    strict = {"parse_constant": lambda c: pytest.fail(f"bare {c}")}
    assert json.loads(dumps(doc), **strict) == expected
    atomic_write_json(tmp_path / "a.json", doc)
    atomic_write_jsonl(tmp_path / "b.jsonl", [doc])
    append_jsonl_rows(tmp_path / "c.jsonl", [doc, {"n": math.nan}])
    assert json.loads((tmp_path / "a.json").read_text(), **strict) == expected
    assert json.loads((tmp_path / "b.jsonl").read_text(), **strict) == expected
    assert [json.loads(x, **strict) for x in (tmp_path / "c.jsonl").read_text().splitlines()] == [expected, {"n": None}]
