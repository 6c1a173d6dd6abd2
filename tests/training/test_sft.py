"""Supervised cold start through the same model/LoRA machinery as GRPO, and GRPO continuing from it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml
from conftest import run_cli

pytestmark = pytest.mark.slow


def test_sft_then_grpo_init_from(tmp_path: Path, tiny_model_dir: Path) -> None:
    import torch
    from safetensors.torch import load_file

    sft_dir = tmp_path / "sft"
    result = run_cli(
        "sft",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic",
        "--max-steps",
        "12",
        "--learning-rate",
        "3e-3",
        "--max-seq-length",
        "256",
        "--output-dir",
        str(sft_dir),
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (sft_dir / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in rows if r.get("loss") is not None]
    assert len(losses) == 12
    rates = [r["learning_rate"] for r in rows if r.get("loss") is not None]
    assert all(b < a for a, b in itertools.pairwise(rates))  # the default schedule decays linearly
    # Imitating reference solutions must lower the loss of a random model quickly.
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3
    summary = json.loads((sft_dir / "run_summary.json").read_text())
    assert summary["kind"] == "sft" and summary["global_step"] == 12
    sft_state = load_file(str(sft_dir / "final" / "adapter_model.safetensors"))

    grpo_dir = tmp_path / "grpo"
    result = run_cli(
        "train",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic",
        "--max-steps",
        "1",
        "--max-completion-length",
        "16",
        "--init-from",
        str(sft_dir),
        "--output-dir",
        str(grpo_dir),
    )
    assert result.exit_code == 0, result.output
    grpo_state = load_file(str(grpo_dir / "final" / "adapter_model.safetensors"))
    assert grpo_state.keys() == sft_state.keys()
    # GRPO started from the SFT adapter (same tensors up to one small step), not from a fresh LoRA (B = 0).
    lora_b = [k for k in sft_state if "lora_B" in k]
    assert all(torch.count_nonzero(sft_state[k]) > 0 for k in lora_b)
    drift = max((grpo_state[k] - sft_state[k]).abs().max().item() for k in sft_state)
    scale = max(sft_state[k].abs().max().item() for k in sft_state)
    assert drift < 0.5 * scale


def test_sft_reference_rendering_strips_calculator_annotations(tmp_path: Path) -> None:
    from evaluator.domains.registry import get_pack

    pack = get_pack("gsm8k")
    row = {
        "id": "x",
        "question": "Tom has 3 bags of 4 apples. How many apples?",
        "answer": "12",
        "solution": "He has 3*4=<<3*4=12>>12 apples.",
        "style": "xml",
    }
    text = pack.reference_solution(row, style="xml")
    assert "<<" not in text and ">>" not in text
    assert pack.extract(text, style="xml", mode="strict") == "12"
    assert pack.grade(text, row, style="xml").correct


def test_sft_refuses_pack_without_reference_solutions(tmp_path: Path) -> None:
    from evaluator.domains.registry import register, unregister

    register("noref", "test_sft:NoReferencePack")
    try:
        result = run_cli(
            "sft",
            "--domain",
            "noref",
            "--model",
            "tiny",
            "--max-steps",
            "1",
            "--output-dir",
            str(tmp_path / "f"),
        )
    finally:
        unregister("noref")
    assert result.exit_code == 2
    assert "no reference solutions" in result.output


def _make_noref_pack():
    from datasets import Dataset

    from evaluator.domains.base import DomainPack

    class NoReferencePack(DomainPack):
        name = "noref"
        styles = ("plain",)

        def rubric(self):
            return {"rewards": {"exact": {"weight": 1.0}}}

        def reward_functions(self):
            return {"exact": lambda completions, **kw: [0.0 for _ in completions]}

        def dataset(self, source, split, *, style=None, language="en", limit=None, seed=0):
            return Dataset.from_list(
                [{"id": "1", "prompt": [{"role": "user", "content": "hi"}], "answer": "x", "style": "plain"}]
            )

        def extract(self, text, *, style, mode="strict"):
            return text or None

        def is_correct(self, extracted, row):
            return extracted == row["answer"]

    return NoReferencePack


NoReferencePack = _make_noref_pack()


def test_sft_init_from_continues_full_weights(tmp_path: Path, tiny_warm_model: Path) -> None:
    """Continuing SFT from a full-weight run starts where that run ended, not from random weights."""
    out = tmp_path / "cont"
    result = run_cli(
        "sft",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic:steps=1",
        "--limit",
        "64",
        "--no-lora",
        "--init-from",
        str(tiny_warm_model),
        "--max-steps",
        "2",
        "--learning-rate",
        "1e-3",
        "--lr-scheduler",
        "constant",
        "--per-device-batch",
        "8",
        "--output-dir",
        str(out),
    )
    assert result.exit_code == 0, result.output
    cfg = yaml.safe_load((out / "run_config.yaml").read_text())
    assert cfg["init_from"] == str(tiny_warm_model)
    assert cfg["lr_scheduler_type"] == "constant"
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["learning_rate"] for r in rows if r.get("loss") is not None] == [1e-3, 1e-3]
    first = rows[0]["loss"]
    assert first < 4.0  # a random tiny model starts near ln(vocab) ≈ 6.9


def test_unknown_lr_scheduler_is_a_config_error() -> None:
    from evaluator.training.config import ConfigError, load_config

    assert load_config(None, {"lr_scheduler_type": "cosine"}).lr_scheduler_type == "cosine"
    with pytest.raises(ConfigError, match="lr_scheduler_type must be one of"):
        load_config(None, {"lr_scheduler_type": "cosin"})
