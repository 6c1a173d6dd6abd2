"""End-to-end GRPO runs of the offline tiny model: artifacts, learning signal, resume, 4-bit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import run_cli

pytestmark = pytest.mark.slow

REWARDS = ("correctness", "int", "strict_format", "soft_format", "xmlcount")


def _train(out: Path, *extra: str):
    return run_cli(
        "train",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic",
        "--max-completion-length",
        "24",
        "--output-dir",
        str(out),
        *extra,
    )


def _lora_state(adapter: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(adapter / "adapter_model.safetensors"))


def _assert_run_artifacts(out: Path, steps: int, base_dir: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    final = out / "final"
    assert (final / "adapter_config.json").exists()
    state = _lora_state(final)
    lora_b = [v for k, v in state.items() if "lora_B" in k]
    assert lora_b, "adapter holds no LoRA B matrices"
    # LoRA B starts at zero: any non-zero entry proves the optimizer moved the adapter.
    assert any(torch.count_nonzero(v) > 0 for v in lora_b)

    base = AutoModelForCausalLM.from_pretrained(base_dir)
    model = PeftModel.from_pretrained(base, str(final))
    loaded = {k: v for k, v in model.state_dict().items() if "lora_B" in k}
    assert len(loaded) == len(lora_b)

    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, steps + 1))
    assert min(r["frac_reward_zero_std"] for r in rows) < 1.0  # some group had a reward spread to learn from
    for row in rows:
        for name in REWARDS:
            assert f"rewards/{name}/mean" in row
        for key in (
            "reward",
            "reward_std",
            "frac_reward_zero_std",
            "completions/mean_length",
            "loss",
            "step_time",
        ):
            assert key in row

    best = json.loads((out / "best_adapter" / "best.json").read_text())
    assert best["reward"] == max(r["reward"] for r in rows)
    assert (out / "best_adapter" / "adapter_model.safetensors").exists()

    cfg = yaml.safe_load((out / "run_config.yaml").read_text())
    assert cfg["domain"] == "gsm8k" and cfg["model"] == "tiny"
    assert cfg["resolved"]["device"] == "cpu" and cfg["resolved"]["rewards"]["correctness"] == 2.0

    completions = [json.loads(line) for line in (out / "completions.jsonl").read_text().splitlines()]
    assert completions and set(completions[0]["rewards"]) >= set(REWARDS)
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["global_step"] == steps


def test_random_model_gets_no_learning_signal(tmp_path: Path, tiny_model_dir: Path) -> None:
    """The documented failure mode: a random model scores 0 everywhere, so GRPO advantages are all 0."""
    out = tmp_path / "cold"
    result = _train(out, "--max-steps", "2")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["frac_reward_zero_std"] for r in rows] == [1.0, 1.0]
    assert (out / "final" / "adapter_config.json").exists() and (out / "best_adapter").is_dir()
    health = json.loads((out / "run_summary.json").read_text())["health"]  # never a plain "done"
    # a random model never ends an answer: the cap comes first, and the groups had no spread either
    assert health["verdict"] == "clipped" and health["flags"] == ["clipped", "no_signal"]
    assert health["numbers"]["frac_reward_zero_std_mean"] == 1.0
    assert "done" not in result.output and "finished, not learning (clipped)" in result.output
    assert "run health: clipped" in result.output


def test_train_writes_adapter_metrics_best_and_resumes(tmp_path: Path, tiny_warm_model: Path) -> None:
    out = tmp_path / "run"
    result = _train(out, "--max-steps", "3", "--init-from", str(tiny_warm_model))
    assert result.exit_code == 0, result.output
    _assert_run_artifacts(out, 3, tiny_warm_model)
    assert (out / "checkpoint-3" / "trainer_state.json").exists()
    first = _lora_state(out / "final")

    again = _train(out, "--max-steps", "3")
    assert again.exit_code == 2 and "--resume" in again.output  # never silently mixes two runs

    resumed = _train(out, "--max-steps", "5", "--resume", "--init-from", str(tiny_warm_model))
    assert resumed.exit_code == 0, resumed.output
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5]
    assert (out / "checkpoint-5").exists()
    state = json.loads((out / "checkpoint-5" / "trainer_state.json").read_text())
    assert state["global_step"] == 5
    assert any(not (first[k] == v).all() for k, v in _lora_state(out / "final").items())


def test_train_4bit_nf4_lora(tmp_path: Path, tiny_warm_model: Path) -> None:
    out = tmp_path / "run4"
    result = _train(out, "--max-steps", "3", "--quantize", "4bit", "--init-from", str(tiny_warm_model))
    assert result.exit_code == 0, result.output
    _assert_run_artifacts(out, 3, tiny_warm_model)
    cfg = yaml.safe_load((out / "run_config.yaml").read_text())
    assert cfg["resolved"]["quantize"] == "4bit"


def test_resume_without_checkpoint_and_bad_config_are_clear_errors(tmp_path: Path) -> None:
    result = _train(tmp_path / "empty", "--max-steps", "1", "--resume")
    assert result.exit_code == 2 and "no checkpoint-N" in result.output
    result = _train(tmp_path / "x", "--max-steps", "1", "--num-generations", "3")
    assert result.exit_code == 2 and "divisible by num_generations" in result.output
    cfg = tmp_path / "run.yaml"
    cfg.write_text("learning_rte: 0.1\n")
    result = run_cli("train", "--config", str(cfg), "--output-dir", str(tmp_path / "y"))
    assert result.exit_code == 2 and "learning_rte" in result.output
    result = _train(tmp_path / "z", "--max-steps", "1", "--reward-weight", "bogus=1")
    assert result.exit_code == 2 and "bogus" in result.output


def test_4bit_gradients_survive_an_eval_forward(tiny_model_dir: Path) -> None:
    """The bitsandbytes CPU repack pitfall: a no-grad eval forward must not corrupt later LoRA gradients."""
    import torch
    from peft import LoraConfig, get_peft_model

    from evaluator.models.loading import load_model

    def lora_grads(eval_first: bool) -> dict[str, torch.Tensor]:
        model, tok, _ = load_model(str(tiny_model_dir), quantize="4bit")
        batch = tok(["What is 12 plus 30? The answer is 42."], return_tensors="pt")
        if eval_first:
            model.eval()
            with torch.no_grad():
                model.generate(**batch, max_new_tokens=4, do_sample=False)
        model.train()
        torch.manual_seed(0)
        peft_model = get_peft_model(
            model, LoraConfig(r=4, target_modules="all-linear", init_lora_weights="gaussian")
        )
        loss = peft_model(**batch, labels=batch["input_ids"]).loss
        loss.backward()
        return {n: p.grad.clone() for n, p in peft_model.named_parameters() if p.grad is not None}

    clean, after_eval = lora_grads(False), lora_grads(True)
    assert clean.keys() == after_eval.keys() and len(clean) > 10
    for name, grad in clean.items():
        torch.testing.assert_close(after_eval[name], grad, rtol=1e-4, atol=1e-6, msg=name)
