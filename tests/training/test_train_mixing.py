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


def test_each_packs_reward_weights_are_put_on_one_scale() -> None:
    cfg = load_config(None, {"domain": "gsm8k,fund", "mix": [0.5, 0.5], "limit": 6, "seed": 1,
                             "reward_weights": {"fund.consistency": 0.0}})  # fmt: skip
    names, funcs, weights = mixed_rewards(cfg)
    got = dict(zip(names, weights, strict=True))
    for pack in ("gsm8k", "fund"):
        assert sum(w for n, w in got.items() if n.startswith(pack + ".")) == pytest.approx(1.0)
    raw = get_pack("gsm8k").default_weights()
    assert got["gsm8k.correctness"] == pytest.approx(raw["correctness"] / sum(raw.values()))  # proportions kept
    fund = get_pack("fund").default_weights()
    assert got["fund.grade_accuracy"] == pytest.approx(fund["grade_accuracy"] / (sum(fund.values()) - fund["consistency"]))
    assert got["fund.consistency"] == 0.0
    # the reference solutions of both packs now earn rewards on the same 0..1 scale
    prompts, kwargs = _batch(cfg)
    scores = [f(prompts=prompts, **kwargs) for f in funcs]
    totals = [sum(w * (s[i] or 0.0) for w, s in zip(weights, scores, strict=True)) for i in range(len(prompts))]
    assert all(0.0 <= t <= 1.0 + 1e-9 for t in totals)
    assert min(totals[3:]) > 0.3 and min(totals[:3]) > 0.3  # neither pack's reference earns 25× the other's


def test_mix_weights_are_stated_as_normalised() -> None:
    from evaluator.training.mixing import mix_record

    record = mix_record(load_config(None, {"domain": "gsm8k,fund", "mix": [2, 1]}))
    assert record["probabilities"] == {"gsm8k": pytest.approx(2 / 3), "fund": pytest.approx(1 / 3)}
    assert record["given"] == [2.0, 1.0] and record["normalised"] is True
    assert mix_record(load_config(None, {"domain": "gsm8k,fund", "mix": [0.25, 0.75]}))["normalised"] is False


def test_per_pack_held_out_means_the_packs_equally() -> None:
    from evaluator.core.generation import GenerationSettings
    from evaluator.training.held_out import HeldOutEval, PerPackHeldOut

    def report(acc: float, fmt: float, n: int) -> dict:
        return {"accuracy": {"strict": {"value": acc, "ci95": [0, 1]}}, "format_rate": {"value": fmt, "ci95": None},
                "n_items": n}  # fmt: skip

    reports = {"gsm8k": report(0.9, 1.0, 40), "fund": report(0.1, 0.5, 2)}

    def grader(pack, model, tokenizer, rows, **_):  # the harness's document shape, per pack
        return reports[pack.name]

    gen = GenerationSettings()
    parts = {name: HeldOutEval(get_pack(name), grader, [{}] * reports[name]["n_items"], None, "en", gen)
             for name in ("gsm8k", "fund")}  # fmt: skip
    out = PerPackHeldOut(parts).run(model=None, tokenizer=None)
    assert out["eval/gsm8k/accuracy"] == 0.9 and out["eval/fund/accuracy"] == 0.1
    assert out["eval/accuracy"] == pytest.approx(0.5)  # not 0.88 (row-weighted): every pack counts the same
    assert out["eval/format_rate"] == pytest.approx(0.75) and out["eval/n"] == 42.0


@pytest.mark.slow
def test_mixed_run_grades_each_pack_and_records_the_mix(tiny_model_dir, tmp_path) -> None:
    import yaml
    from conftest import run_cli

    out = tmp_path / "mx"
    result = run_cli("train", "--domain", "gsm8k,fund", "--mix", "2,1", "--model", "tiny", "--eval-every", "2",
                     "--eval-limit", "2", "--max-steps", "2", "--max-completion-length", "8", "--output-dir", str(out))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    graded = [r for r in rows if "eval/accuracy" in r]
    assert [r["eval/gsm8k/n"] for r in graded] == [2.0, 2.0] and all(r["eval/fund/n"] == 2.0 for r in graded)
    for r in graded:
        assert r["eval/accuracy"] == pytest.approx((r["eval/gsm8k/accuracy"] + r["eval/fund/accuracy"]) / 2)
    assert json.loads((out / "best_adapter" / "best.json").read_text(encoding="utf-8"))["metric"] == "eval/accuracy"
    resolved = yaml.safe_load((out / "run_config.yaml").read_text(encoding="utf-8"))["resolved"]
    assert resolved["mix"]["probabilities"] == {"gsm8k": pytest.approx(2 / 3), "fund": pytest.approx(1 / 3)}
    assert sum(v for k, v in resolved["rewards"].items() if k.startswith("fund.")) == pytest.approx(1.0)
