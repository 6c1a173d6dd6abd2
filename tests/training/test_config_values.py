"""Run configs: every value's type and range is checked at load with one message naming the field; `sft --config`
keeps the YAML's output_dir and takes SFT's own learning rate, not GRPO's."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from evaluator.app.commands.sft import resolve_config
from evaluator.training.config import SFT_DEFAULT_LR, ConfigError, TrainConfig, load_config


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ("learning_rate: fast", "learning_rate", "expected a number"),
        ("learning_rate: -1.0e-5", "learning_rate", "> 0"),
        ("learning_rate: 0", "learning_rate", "> 0"),
        ("lora_r: 8.5", "lora_r", "whole number"),
        ("lora_r: 0", "lora_r", "≥ 1"),
        ("lora: maybe", "lora", "true or false"),
        ("top_p: 1.5", "top_p", "≤ 1"),
        ("lora_dropout: 1", "lora_dropout", "< 1"),
        ("max_steps: 0", "max_steps", "-1"),
        ("num_generations: true", "num_generations", "whole number"),
        ("model: 3", "model", "expected text"),
        ("rewards: correctness", "rewards", "list of names"),
        ("reward_weights: {correctness: heavy}", "reward_weights", "numbers ≥ 0"),
        ("max_seconds: .inf", "max_seconds", "expected a number"),
        ("domain: null", "domain", "must be set"),
    ],
)
def test_a_bad_value_is_named_with_its_field(tmp_path: Path, line: str, field: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_yaml(tmp_path, line + "\n"))
    message = str(err.value)
    assert f"{field}: " in message and words in message
    assert "run.yaml" in message


def test_learning_rate_fast_is_a_clear_cli_error_not_a_traceback(tmp_path: Path) -> None:
    result = run_cli(
        "train", "--config", str(_yaml(tmp_path, "learning_rate: fast\n")), "-o", str(tmp_path / "r")
    )
    assert result.exit_code != 0
    assert "learning_rate: expected a number, got 'fast'" in result.output
    assert "Traceback" not in result.output and "TypeError" not in result.output
    assert not (tmp_path / "r").exists()


def test_yaml_exponents_without_a_dot_are_numbers(tmp_path: Path) -> None:
    cfg = load_config(
        _yaml(tmp_path, "learning_rate: 5e-6\nmax_seconds: 30\nreward_weights: {correctness: 2}\n")
    )
    assert cfg.learning_rate == 5e-6 and isinstance(cfg.learning_rate, float)
    assert cfg.reward_weights == {"correctness": 2.0}


def test_several_bad_values_are_all_named_and_unknown_keys_still_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_yaml(tmp_path, "learning_rate: fast\nlora_r: 0\n"))
    assert "learning_rate:" in str(err.value) and "lora_r:" in str(err.value)
    with pytest.raises(ConfigError, match="unknown config field"):
        load_config(_yaml(tmp_path, "learnin_rate: 1e-5\n"))


def test_language_is_checked_against_the_pack(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="language: pack 'gsm8k' has prompts in en, ko, not 'ja'"):
        load_config(None, {"language": "ja"})
    with pytest.raises(ConfigError, match="domain: unknown domain"):
        load_config(None, {"domain": "chess"})


def test_sft_keeps_the_yaml_output_dir_and_uses_sfts_learning_rate(tmp_path: Path) -> None:
    path = _yaml(tmp_path, f"output_dir: {tmp_path / 'mine'}\nmax_steps: 3\n")
    cfg = resolve_config(path, {})
    assert cfg.output_dir == str(tmp_path / "mine")
    assert cfg.learning_rate == SFT_DEFAULT_LR != TrainConfig().learning_rate


def test_sft_flags_and_yaml_learning_rate_win_over_sft_defaults(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "learning_rate: 1.0e-3\n")
    assert resolve_config(path, {}).learning_rate == 1e-3
    assert resolve_config(path, {"learning_rate": 3e-4}).learning_rate == 3e-4
    cfg = resolve_config(path, {"output_dir": str(tmp_path / "flag")})
    assert cfg.output_dir == str(tmp_path / "flag")
    plain = resolve_config(None, {})
    assert plain.output_dir == "runs/sft" and plain.learning_rate == SFT_DEFAULT_LR


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("report_to: tensorboard", ["tensorboard"]),
        ("report_to: tensorboard, wandb", ["tensorboard", "wandb"]),
        ("report_to: [tensorboard]", ["tensorboard"]),
    ],
)
def test_report_to_takes_a_list_or_one_comma_separated_text(
    tmp_path: Path, line: str, expected: list[str]
) -> None:
    assert load_config(_yaml(tmp_path, line + "\n")).report_to == expected


def test_an_unknown_tracker_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown tracker"):
        load_config(_yaml(tmp_path, "report_to: mlflow\n"))
