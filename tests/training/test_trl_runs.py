"""Real tiny GRPO steps with TRL fields reached through `--trl`: the value arrives in TRL's config, and the clip
range changes the weights once a generation batch feeds more than one optimisation step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import run_cli

pytestmark = pytest.mark.slow


def test_trl_flag_reaches_the_trainer_and_the_resolved_config(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "train", "--domain", "gsm8k", "--model", "tiny", "--data", "synthetic", "--max-steps", "1",
        "--max-completion-length", "8", "--output-dir", str(out),
        "--trl", "mask_truncated_completions=true", "--trl", "top_k=7",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load((out / "run_config.yaml").read_text(encoding="utf-8"))
    assert doc["trl"] == {"mask_truncated_completions": True, "top_k": 7}
    assert doc["resolved"]["trl"] == {"mask_truncated_completions": True, "top_k": 7}  # read back from TRL's object
    # every 8-token completion is cut, so with the mask on TRL drops them all from the loss
    assert (out / "final" / "adapter_config.json").exists()


def _adapter(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path / "final" / "adapter_model.safetensors"))


def _train(model: Path, out: Path, epsilon: float, iterations: int) -> dict:
    from evaluator.training.config import TrainConfig
    from evaluator.training.grpo import train

    cfg = TrainConfig(
        domain="gsm8k", model=str(model), data="synthetic", max_steps=2, max_completion_length=24,
        num_generations=4, per_device_train_batch_size=4, learning_rate=5e-2, epsilon=epsilon, seed=3,
        save_steps=1000, output_dir=str(out), lora_dropout=0.0, trl={"num_iterations": iterations},
    )  # fmt: skip
    summary = train(cfg, progress=False)
    return summary


def test_epsilon_changes_weights_only_when_clipping_can_act(tiny_warm_model: Path, tmp_path: Path) -> None:
    import torch

    runs: dict = {}
    clipped: dict = {}
    for eps in (0.2, 1e-6):
        for iterations in (1, 2):
            out = tmp_path / f"eps{eps}-it{iterations}"
            _train(tiny_warm_model, out, eps, iterations)
            runs[eps, iterations] = _adapter(out)
            rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
            clipped[eps, iterations] = max(r.get("clip_ratio/region_mean", 0.0) for r in rows)
            assert any(r.get("reward_std", 0) > 0 for r in rows)  # the warm model's groups differ: there is a signal
    same = runs[0.2, 1]
    assert all(torch.equal(same[k], runs[1e-6, 1][k]) for k in same)  # one step per batch: the ratio is 1
    differs = [k for k in same if not torch.equal(runs[0.2, 2][k], runs[1e-6, 2][k])]
    assert differs, "with num_iterations=2 the clip range must change the update"
    assert clipped[1e-6, 1] == 0 and clipped[1e-6, 2] > 0  # TRL's own clip counter agrees
