"""Several packs in one run: each pack's rewards score only its own rows (None elsewhere), the mixing
weights choose the rows, and a spec's ``domain: {pack: weight}`` becomes ``domain`` + ``mix``."""

from __future__ import annotations

import json

import pytest

from evaluator.app.experiments.spec import parse_spec
from evaluator.domains.registry import get_pack
from evaluator.training.config import ConfigError, TrainConfig, load_config
from evaluator.training.mixing import mixed_rewards, pack_rows, probabilities


def _batch(cfg: TrainConfig) -> tuple[list, dict]:
    rows = []
    for name in ("gsm8k", "fund"):
        pack = get_pack(name)
        for row in pack_rows(pack, cfg, "train").to_list()[:3]:
            gold = json.loads(row["payload"])
            rows.append((row, pack.reference_solution(gold, style=gold["style"])))
    completions = [[{"role": "assistant", "content": text}] for _, text in rows]
    columns = {"pack": [r["pack"] for r, _ in rows], "payload": [r["payload"] for r, _ in rows],
               "completion_ids": [[1, 2]] * len(rows), "trainer_state": None}
    return [r["prompt"] for r, _ in rows], {"completions": completions, **columns}


def test_each_pack_scores_only_its_rows() -> None:
    cfg = load_config(None, {"domain": "gsm8k,fund", "mix": [0.7, 0.3], "limit": 6, "seed": 1})
    names, funcs, weights = mixed_rewards(cfg)
    assert "gsm8k.correctness" in names and "fund.json_format" in names
    assert len(weights) == len(names) and all(w >= 0 for w in weights)
    prompts, kwargs = _batch(cfg)
    by_name = {n: f(prompts=prompts, **kwargs) for n, f in zip(names, funcs, strict=True)}
    assert by_name["gsm8k.correctness"][:3] == [pytest.approx(v) for v in by_name["gsm8k.correctness"][:3]]
    assert all(v is not None for v in by_name["gsm8k.correctness"][:3]) and by_name["gsm8k.correctness"][3:] == [None] * 3
    assert by_name["gsm8k.correctness"][:3] == [2.0, 2.0, 2.0] or all(v > 0 for v in by_name["gsm8k.correctness"][:3])
    assert by_name["fund.json_format"][:3] == [None] * 3
    assert all(v is not None and v > 0 for v in by_name["fund.json_format"][3:])


def test_mix_is_checked_and_a_spec_mapping_becomes_domain_and_mix() -> None:
    assert probabilities([1, 3]) == [0.25, 0.75]
    for over, needle in (({"domain": "gsm8k,fund"}, "mix: one weight"), ({"domain": "gsm8k,fund", "mix": [1.0]}, "mix"),
                         ({"domain": "gsm8k", "mix": [1.0]}, "needs several packs"),
                         ({"domain": "gsm8k,nope", "mix": [1, 1]}, "domain"),
                         ({"domain": "gsm8k,fund", "mix": [1, 1], "judge": {"kind": "local", "model": "tiny"}}, "judge")):
        with pytest.raises(ConfigError, match=needle):
            load_config(None, over)
    spec = parse_spec({"name": "m", "base": {"domain": {"gsm8k": 0.5, "fund": 0.5}, "max_steps": 2},
                       "seeds": [0], "baseline": "a", "arms": {"a": {}}})
    assert spec.base["domain"] == "gsm8k,fund" and spec.base["mix"] == [0.5, 0.5]
