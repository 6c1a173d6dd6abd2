"""Held-out evaluation inside real GRPO runs: eval rows, the best adapter by accuracy, TensorBoard, 4-bit gradients."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.slow


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_eval_rows_best_adapter_by_accuracy_and_tensorboard(tmp_path: Path, tiny_warm_model: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    result = run_cli(
        "train",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic:steps=1",
        "--init-from",
        str(tiny_warm_model),
        "--max-completion-length",
        "24",
        "--max-steps",
        "4",
        "--learning-rate",
        "1e-3",
        "--eval-every",
        "2",
        "--eval-limit",
        "10",
        "--report-to",
        "tensorboard",
        "--run-name",
        "held-out-test",
        "--output-dir",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert "held-out accuracy:" in result.output

    rows = _rows(out / "metrics.jsonl")
    assert [r["step"] for r in rows] == [0, 1, 2, 3, 4]
    evals = [r for r in rows if "eval/accuracy" in r]
    assert [r["step"] for r in evals] == [0, 2, 4]  # the starting weights, then every 2 steps at logging points
    assert "reward" not in rows[0]
    for r in evals:
        assert r["eval/n"] == 10
        assert r["eval/accuracy_ci_low"] <= r["eval/accuracy"] <= r["eval/accuracy_ci_high"]
        assert r["eval/format_rate_ci_low"] <= r["eval/format_rate"] <= r["eval/format_rate_ci_high"]
        assert r["step"] == 0 or "reward" in r  # the same row as the step's training metrics

    best = json.loads((out / "best_adapter" / "best.json").read_text())
    top = max(r["eval/accuracy"] for r in evals)
    assert best["metric"] == "eval/accuracy" and best["value"] == top
    assert best["step"] == min(r["step"] for r in evals if r["eval/accuracy"] == top)
    assert "held-out accuracy" in (out / "best_adapter" / "README.md").read_text()

    # One grader, two callers: `evaluator eval` of the saved best adapter gives the in-training figures.
    graded = run_cli(
        "eval",
        "--domain",
        "gsm8k",
        "--model",
        str(tiny_warm_model),
        "--adapter",
        str(out / "best_adapter"),
        "--data",
        "synthetic:steps=1",
        "--split",
        "test",
        "--limit",
        "10",
        "--max-new-tokens",
        "24",
        "--out",
        str(tmp_path / "eval"),
    )
    assert graded.exit_code == 0, graded.output
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    at_best = next(r for r in evals if r["step"] == best["step"])
    assert report["accuracy"]["strict"]["value"] == at_best["eval/accuracy"]
    assert report["format_rate"]["value"] == at_best["eval/format_rate"]

    summary = json.loads((out / "run_summary.json").read_text())
    assert [p["step"] for p in summary["held_out"]["points"]] == [0, 2, 4]
    assert summary["steps_this_session"] == 4
    assert {e["step"] for e in summary["held_out"]["collapse_events"]} <= {2, 4}
    assert summary["best"]["metric"] == "eval/accuracy"

    # TensorBoard, offline: event files with the reward and the held-out scalars at their steps.
    event_files = list((out / "runs").rglob("events.out.tfevents.*"))
    assert event_files
    acc = EventAccumulator(str(event_files[0].parent))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert "train/reward" in tags and "train/eval/accuracy" in tags and "train/eval/format_rate" in tags
    assert [e.step for e in acc.Scalars("train/reward")] == [1, 2, 3, 4]
    tb_acc = {e.step: e.value for e in acc.Scalars("train/eval/accuracy")}
    assert tb_acc == pytest.approx({r["step"]: r["eval/accuracy"] for r in evals})


def test_without_eval_best_json_says_it_is_chosen_by_reward(tiny_grpo_run: Path) -> None:
    best = json.loads((tiny_grpo_run / "best_adapter" / "best.json").read_text())
    assert best["metric"] == "reward" and best["value"] == best["reward"]
    assert "no held-out evaluation" in best["note"]


def _lora_grads(model, batch) -> dict[str, object]:
    import torch

    model.zero_grad()
    torch.manual_seed(0)
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def test_4bit_lora_gradients_are_unchanged_by_an_in_training_eval(tiny_warm_model: Path) -> None:
    """The bitsandbytes CPU pitfall: an eval-mode, no-grad forward must not corrupt later LoRA gradients."""
    import torch

    from evaluator.core.generation import GenerationSettings
    from evaluator.domains.registry import get_pack
    from evaluator.evaluation.policy import grade_policy
    from evaluator.training.config import TrainConfig
    from evaluator.training.held_out import HeldOutEval
    from evaluator.training.run_setup import load_policy

    cfg = TrainConfig(model=str(tiny_warm_model), quantize="4bit", lora=True, lora_dropout=0.0)
    policy = load_policy(cfg)
    model, tok = policy.model, policy.tokenizer
    batch = tok(["<reasoning>2 + 3 = 5</reasoning><answer>5</answer>"], return_tensors="pt")
    reference = _lora_grads(model, batch)
    assert any(torch.count_nonzero(g) > 0 for g in reference.values())

    pack = get_pack("gsm8k")
    held_out = HeldOutEval.build(
        pack, grade_policy, data="synthetic:steps=1", split="test", limit=4, style=None, language="en",
        generation=GenerationSettings(max_new_tokens=8, batch_size=32),
    )  # fmt: skip
    figures = held_out.run(model, tok)
    assert figures["eval/n"] == 4 and model.training  # train mode is back for the next step
    after = _lora_grads(model, batch)
    for name, grad in reference.items():
        assert torch.allclose(grad, after[name], atol=1e-6), name


def test_destructive_learning_rate_run_and_the_guard_agree_with_a_replay(
    tmp_path: Path, tiny_warm_model: Path
) -> None:
    """lr 5e-2 on the warm tiny model, evaluated every step with --stop-on-collapse.

    Whether this small run collapses depends on the start; what must hold either way: the events in
    run_summary.json are exactly what the guard decides when replayed over the logged rows, and a fired
    guard stopped the run at that step with the best adapter from before the fall.
    """
    from evaluator.training.collapse import CollapseGuard, format_signal

    out = tmp_path / "hot"
    result = run_cli(
        "train",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic:steps=1",
        "--init-from",
        str(tiny_warm_model),
        "--max-completion-length",
        "24",
        "--max-steps",
        "6",
        "--learning-rate",
        "5e-2",
        "--eval-every",
        "1",
        "--eval-limit",
        "12",
        "--stop-on-collapse",
        "--output-dir",
        str(out),
    )
    assert result.exit_code == 0, result.output
    rows = [r for r in _rows(out / "metrics.jsonl") if "eval/accuracy" in r]
    guard = CollapseGuard(0.10)
    replay = [e for r in rows if (e := guard.update(r["step"], r["eval/accuracy"], format_signal(r)))]
    summary = json.loads((out / "run_summary.json").read_text())
    events = summary["held_out"]["collapse_events"]
    assert [(e["step"], e["best_step"]) for e in events] == [(e["step"], e["best_step"]) for e in replay]
    best = json.loads((out / "best_adapter" / "best.json").read_text())
    if events:
        assert summary["stopped_for_collapse"] and summary["global_step"] == events[0]["step"]
        assert best["step"] == events[0]["best_step"] and "collapse guard" in result.output
        assert next(r for r in rows if r["step"] == events[0]["step"])["collapse/warning"] == 1.0
    else:
        assert not summary["stopped_for_collapse"] and summary["global_step"] == 6
