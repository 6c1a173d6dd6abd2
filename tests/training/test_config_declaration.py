"""The run config is declared once: every flag, the config reference page, TRL's arguments and the hardware defaults
are derived from ``TrainConfig``, and the older flag names still parse to the same fields."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.app.commands.sft import SFT_FIELDS
from evaluator.app.config_options import overrides_from_flags, parse_mapping, parse_weights
from evaluator.models.hardware import hardware_defaults
from evaluator.training.config import (
    ConfigError,
    SFTRunConfig,
    TrainConfig,
    load_config,
    trl_kwargs,
    trl_names,
)
from evaluator.training.config.help import config_table
from evaluator.training.memory.plan import PLAN_FIELDS

REPO = Path(__file__).resolve().parents[2]
FIELDS = [f.name for f in dataclasses.fields(TrainConfig)]


def parse(command: str, argv: list[str]) -> dict:
    """The values click parses for ``evaluator COMMAND argv`` (nothing runs)."""
    click_app = get_command(app)
    cmd = click_app.commands[command]  # type: ignore[attr-defined]
    ctx = cmd.make_context(command, argv)
    return dict(ctx.params)


def test_every_field_is_a_train_flag_and_sft_plan_take_theirs() -> None:
    assert set(FIELDS) <= set(parse("train", []))
    assert set(SFT_FIELDS) <= set(parse("sft", [])) and "num_generations" not in parse("sft", [])
    assert set(PLAN_FIELDS) <= set(parse("plan", [])) and {"gpu_mem", "as_json"} <= set(parse("plan", []))
    assert set(SFT_FIELDS) <= set(FIELDS) and set(PLAN_FIELDS) <= set(FIELDS)


def test_every_flag_defaults_to_unset_so_the_yaml_is_not_overridden() -> None:
    values = parse("train", [])
    assert all(values[name] in (None, ()) for name in FIELDS)  # () = a repeatable flag not given
    assert overrides_from_flags(TrainConfig, values) == {}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--per-device-batch", "8"], {"per_device_train_batch_size": 8}),
        (["--per-device-train-batch-size", "8"], {"per_device_train_batch_size": 8}),
        (["--grad-accum", "2"], {"gradient_accumulation_steps": 2}),
        (["--lr", "1e-5"], {"learning_rate": 1e-5}),
        (["--learning-rate", "1e-5"], {"learning_rate": 1e-5}),
        (["--lr-scheduler", "cosine"], {"lr_scheduler_type": "cosine"}),
        (["--epochs", "2"], {"num_train_epochs": 2.0}),
        (["--adapter", "runs/x"], {"init_from": "runs/x"}),
        (["--vllm-sleep-mode"], {"vllm_enable_sleep_mode": True}),
        (["-o", "runs/y", "--no-lora"], {"output_dir": "runs/y", "lora": False}),
        (["--resume", "--force"], {"resume": True, "force": True}),
        (["--rewards", "correctness, strict_format"], {"rewards": ["correctness", "strict_format"]}),
        (["--reward-weight", "correctness=3", "--reward-weight", "int=0.5"], {"reward_weights": {"correctness": 3.0, "int": 0.5}}),
        (["--report-to", "tensorboard,wandb"], {"report_to": ["tensorboard", "wandb"]}),
        (["--lora-dropout", "0.1", "--top-p", "0.9", "--save-total-limit", "2"], {"lora_dropout": 0.1, "top_p": 0.9, "save_total_limit": 2}),
        (["--eval-batch-size", "8", "--completions-per-log", "2", "--max-seq-length", "1024"], {"eval_batch_size": 8, "completions_per_log": 2, "max_seq_length": 1024}),
    ],
)  # fmt: skip
def test_old_and_new_flag_names_set_the_same_fields(argv: list[str], expected: dict) -> None:
    assert overrides_from_flags(TrainConfig, parse("train", argv)) == expected


def test_judge_flag_takes_yaml_text_or_a_file(tmp_path: Path) -> None:
    text = "{kind: api, base_url: 'http://127.0.0.1:9/v1', model: m, weight: 0.3}"
    got = overrides_from_flags(TrainConfig, parse("train", ["--judge", text]))
    assert got == {"judge": {"kind": "api", "base_url": "http://127.0.0.1:9/v1", "model": "m", "weight": 0.3}}
    spec = tmp_path / "judge.yaml"
    spec.write_text("kind: local\nmodel: tiny\n", encoding="utf-8")
    assert parse_mapping("--judge", str(spec)) == {"kind": "local", "model": "tiny"}
    with pytest.raises(ConfigError, match="--judge: expected a mapping"):
        parse_mapping("--judge", "just-a-word")
    with pytest.raises(ConfigError, match="--judge: not valid YAML"):
        parse_mapping("--judge", "{kind: [api")


def test_reward_weight_items_are_checked() -> None:
    assert parse_weights(["a=1,b=2.5"]) == {"a": 1.0, "b": 2.5}
    for bad in ("a", "=1", "a=x"):
        with pytest.raises(ConfigError, match="NAME=NUMBER"):
            parse_weights([bad])


def test_config_reference_page_is_the_declaration() -> None:
    page = (REPO / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    assert config_table() in page
    assert config_table().count("\n") == len(FIELDS) + 2


def test_sft_defaults_are_a_subclass_not_a_check_of_yaml_keys(tmp_path: Path) -> None:
    assert SFTRunConfig().output_dir == "runs/sft" and SFTRunConfig().learning_rate == 2e-4
    assert [f.name for f in dataclasses.fields(SFTRunConfig)] == FIELDS
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("learning_rate: 1.0e-3\n", encoding="utf-8")
    assert load_config(yaml_file, {}, SFTRunConfig).learning_rate == 1e-3
    assert load_config(yaml_file, {"learning_rate": 3e-4}, SFTRunConfig).learning_rate == 3e-4
    assert load_config(None, {}, SFTRunConfig).output_dir == "runs/sft"
    assert load_config(None, {}).output_dir != "runs/sft"


def test_every_trl_argument_we_set_exists_in_the_installed_trl() -> None:
    from transformers import TrainingArguments
    from trl import GRPOConfig, RLOOConfig, SFTConfig

    args = {f.name for f in dataclasses.fields(TrainingArguments)}
    assert set(trl_names(TrainConfig, ("args",)).values()) <= args
    assert set(trl_names(TrainConfig, ("args", "rollout")).values()) <= {f.name for f in dataclasses.fields(GRPOConfig)}
    assert set(trl_names(TrainConfig, ("args", "sft")).values()) <= {f.name for f in dataclasses.fields(SFTConfig)}
    cfg = TrainConfig(num_generations=8, per_device_train_batch_size=8, loss_type="grpo", max_seq_length=1024)
    grpo = trl_kwargs(cfg, GRPOConfig, "grpo")
    assert grpo["num_generations"] == 8 and grpo["loss_type"] == "grpo" and "max_length" not in grpo
    sft = trl_kwargs(cfg, SFTConfig, "sft")
    assert sft["max_length"] == 1024 and "loss_type" not in sft and "num_generations" not in sft
    assert set(trl_names(TrainConfig, ("rloo",)).values()) <= {f.name for f in dataclasses.fields(RLOOConfig)}
    rloo = trl_kwargs(cfg, RLOOConfig, "rloo")
    assert rloo["num_generations"] == 8 and "loss_type" not in rloo and "scale_rewards" not in rloo


def test_trl_config_is_built_from_the_declaration(tmp_path: Path) -> None:
    from trl import GRPOConfig

    from evaluator.training.grpo import grpo_args
    from evaluator.training.run_setup import LoadedPolicy

    cfg = TrainConfig(learning_rate=3e-5, epsilon_high=0.28, top_p=0.9, save_total_limit=2, seed=7)
    policy = LoadedPolicy(None, None, _cpu_precision(), "adamw_torch", False)
    args = grpo_args(cfg, tmp_path, policy, [1.0])
    assert isinstance(args, GRPOConfig)
    for name in trl_names(TrainConfig, ("args", "rollout")):
        assert getattr(args, name) == getattr(cfg, name), name


def _cpu_precision():
    from evaluator.models.loading import Precision

    return Precision(device="cpu", dtype_name="float32", bf16=False, quantize_4bit=False)


@pytest.mark.parametrize(
    ("device", "kwargs", "expected"),
    [
        ("cuda", {}, ("4bit", "paged_adamw_8bit", True, "bfloat16")),
        ("cuda", {"bf16_supported": False}, ("4bit", "paged_adamw_8bit", True, "float16")),
        ("cpu", {}, ("none", "adamw_torch", False, "float32")),
        ("cuda", {"quantize": "none", "optim": "adamw_torch", "gradient_checkpointing": False}, ("none", "adamw_torch", False, "bfloat16")),
        ("cpu", {"quantize": "4bit", "gradient_checkpointing": True}, ("4bit", "adamw_torch", True, "float32")),
    ],
)  # fmt: skip
def test_hardware_defaults_are_decided_once(device: str, kwargs: dict, expected: tuple) -> None:
    hw = hardware_defaults(device, **kwargs)
    assert (hw.quantize, hw.optim, hw.gradient_checkpointing, hw.dtype_name) == expected


def test_the_planner_uses_the_same_hardware_defaults() -> None:
    from evaluator.training.memory.plan import settings_for_train_config

    s = settings_for_train_config(TrainConfig(model="qwen3-0.6b"), device="cuda")
    hw = hardware_defaults("cuda")
    assert (s.quantize, s.optim, s.gradient_checkpointing, s.compute_dtype) == (
        hw.quantize, hw.optim, hw.gradient_checkpointing, hw.dtype_name,
    )  # fmt: skip
    cpu = settings_for_train_config(TrainConfig(model="qwen3-0.6b"), device="cpu")
    assert (cpu.quantize, cpu.optim, cpu.compute_dtype) == ("none", "adamw_torch", "float32")


def test_a_bad_flag_value_is_named() -> None:
    with pytest.raises(ConfigError, match="lora_r: must be"):
        load_config(None, overrides_from_flags(TrainConfig, parse("train", ["--lora-r", "0"])))
    result = CliRunner().invoke(app, ["train", "--lora-r", "x"])
    assert result.exit_code == 2 and "--lora-r" in result.output
