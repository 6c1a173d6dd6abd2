"""`evaluator plan` as users run it: the table, the verdict, fixes, JSON that matches its schema, clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from conftest import run_cli

from evaluator.core.schemas import load_schema, schema_problems
from evaluator.training.memory.plan import GIB

SCHEMA = load_schema("evaluator.training.memory", "memory_plan.schema.json")


def plan_json(*args: str) -> dict:
    result = run_cli("plan", *args, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert schema_problems(doc, SCHEMA) == []
    return doc


def test_small_model_fits_and_the_table_names_every_part() -> None:
    result = run_cli("plan", "--model", "qwen3-0.6b", "--gpu-mem", "24")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for part in (
        "Base weights, 4-bit NF4",
        "LoRA parameters",
        "Optimizer states",
        "Activations",
        "Logits (fused LM head)",
        "Generation KV cache",
        "CUDA context",
    ):
        assert part in out
    assert "Fits:" in out and "Does not fit" not in out


def test_issue_example_gemma2_with_a_judge_on_48_gib() -> None:
    """The users' case: a 9B Gemma2 student plus an 8B judge on one 48 GB card."""
    doc = plan_json(
        "--model",
        "atomicgpt-gemma2-9b",
        "--gpu-mem",
        "48",
        "--num-generations",
        "4",
        "--max-completion-length",
        "512",
        "--per-device-batch",
        "1",
        "--lora-rank",
        "16",
        "--quantize",
        "4bit",
        "--judge",
        "qwen3-8b",
        "--judge-quantize",
        "4bit",
    )
    names = [r["name"] for r in doc["rows"]]
    assert "Judge model weights (qwen3-8b)" in names and "Judge KV cache" in names
    assert doc["settings"]["gradient_accumulation_steps"] == 4  # chosen so that 1 × 4 divides by 4 generations
    assert any("gradient accumulation set to 4" in n for n in doc["notes"])
    assert doc["fits"] is (doc["total_bytes"] <= 48 * GIB)
    assert doc["architecture"]["vocab_size"] == 256000


def test_too_big_run_gets_fixes_in_checklist_order() -> None:
    too_big = (
        "--model",
        "qwen3-8b",
        "--gpu-mem",
        "20",
        "--per-device-batch",
        "8",
        "--max-completion-length",
        "1024",
        "--no-gradient-checkpointing",
    )
    result = run_cli("plan", *too_big)
    assert result.exit_code == 0, result.output
    assert "Does not fit" in result.stdout and "Cheapest changes" in result.stdout
    doc = plan_json(*too_big)
    assert doc["fits"] is False and doc["fixes"]
    assert doc["fixes"][0]["change"].startswith("per-device batch 8 →")
    assert doc["fixes"][-1]["fits"] is True
    assert doc["fixes"][-1]["total_bytes"] <= 20 * GIB < doc["total_bytes"]


def test_config_file_is_read_and_flags_override_it(tmp_path: Path) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "model": "qwen3-1.7b",
                "per_device_train_batch_size": 8,
                "gradient_accumulation_steps": 2,
                "max_completion_length": 384,
                "judge": {"kind": "local", "model": "qwen3-0.6b", "quantize": "none"},
            }
        ),
        encoding="utf-8",
    )
    doc = plan_json("--config", str(cfg), "--per-device-batch", "4")
    s = doc["settings"]
    assert (s["per_device_train_batch_size"], s["gradient_accumulation_steps"], s["max_completion_length"]) == (
        4, 2, 384
    )
    assert doc["model"] == "qwen3-1.7b"
    assert s["local_judge"] == {"model": "qwen3-0.6b", "quantize": "none", "batch_size": 8, "max_new_tokens": 256}
    assert "gpu_bytes" not in doc  # no --gpu-mem: no verdict


def test_local_folder_with_config_json(tmp_path: Path) -> None:
    from transformers import Qwen3Config

    Qwen3Config(
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        vocab_size=1000,
    ).save_pretrained(tmp_path)
    doc = plan_json("--model", str(tmp_path), "--gpu-mem", "8")
    assert doc["architecture"]["num_hidden_layers"] == 4 and doc["fits"] is True


def test_bad_input_is_one_clear_paragraph() -> None:
    cases = [
        (["--model", "org/unknown-model", "--gpu-mem", "24"], "planner works offline"),
        (["--model", "qwen3-0.6b", "--gpu-mem", "-4"], "positive number"),
        (
            ["--model", "qwen3-0.6b", "--per-device-batch", "1", "--grad-accum", "3"],
            "divisible by num_generations",
        ),
        (["--model", "qwen3-0.6b", "--quantize", "8bit"], "4bit or none"),
        (["--gpu-mem", "24"], "pass --model"),
    ]
    for args, words in cases:
        result = run_cli("plan", *args)
        assert result.exit_code == 2, (args, result.output)
        assert words in " ".join(result.stderr.split())  # wherever the terminal wrapped the line
        assert "Traceback" not in result.output
