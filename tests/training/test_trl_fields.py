"""TRL's config classes reachable through `trl:` / `--trl KEY=VALUE`, checked against the installed TRL before
anything loads; settings that would do nothing are warned (no model is trained here)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run_cli

from evaluator.app.config_options import parse_pairs
from evaluator.training.config import ConfigError, SFTRunConfig, TrainConfig, load_config
from evaluator.training.config.help import help_text
from evaluator.training.trl_checks import build_args, check_run, idle_settings
from evaluator.training.trl_fields import _prose_choices, checked_overrides, schema

TRL_163_LOSSES = {"grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo"}


def test_allowed_values_are_read_from_the_installed_trl() -> None:
    grpo = schema("grpo")
    assert set(grpo["loss_type"].choices) == TRL_163_LOSSES
    assert set(grpo["scale_rewards"].choices) == {"group", "batch", "none"}
    assert set(grpo["multi_objective_aggregation"].choices) == {"sum_then_normalize", "normalize_then_sum"}
    assert set(grpo["vllm_mode"].choices) == {"server", "colocate"}
    assert set(grpo["importance_sampling_level"].choices) == {"token", "sequence"}  # "`'token'` or `'sequence'`"
    assert grpo["vllm_server_host"].choices is None and grpo["project"].choices is None
    assert {"adamw_torch", "paged_adamw_8bit", "sgd"} <= set(grpo["optim"].choices)  # an Enum type
    assert "cosine" in grpo["lr_scheduler_type"].choices
    assert set(schema("sft")["loss_type"].choices) >= {"nll", "dft"}
    assert "normalize_advantages" in schema("rloo") and "normalize_advantages" not in grpo
    assert grpo["num_iterations"].choices is None and grpo["mask_truncated_completions"].default is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Supported values are 'a', 'b_c', and 'd'. Uses `x='y'` elsewhere.", ("a", "b_c", "d")),
        ("Possible values are `'nll'` (plain) and `'dft'` (see https://x.org/1.2).", ("nll", "dft")),
        ("Must be one of `'server'` or `'colocate'`. `'server'`: …", ("server", "colocate")),
        ("Supported values are: `True` or `on'` (default): … `'half'`: … `False` or `'off'`: none.", ("half", "off", "on")),
        ("Controls whether ratios are computed at the `'token'` or `'sequence'` level.", ()),
        ("Supported values are 'only'.", ()),
        ("", ()),
    ],
)
def test_values_listed_in_help_prose(text: str, expected: tuple[str, ...]) -> None:
    assert set(_prose_choices(text)) == set(expected)


def test_help_lists_every_trl_loss() -> None:
    field = TrainConfig.__dataclass_fields__["loss_type"]
    text = help_text(field)
    assert all(loss in text for loss in TRL_163_LOSSES), text
    assert "{trl_choices}" not in help_text(field, with_trl=False)


def cfg(**over: object) -> TrainConfig:
    return TrainConfig(model="tiny", output_dir="unused", **over)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("trl", "needle"),
    [
        ({"foo": 1}, "trl.foo: TRL GRPOConfig has no field 'foo'"),
        ({"num_iterations": "x"}, "trl.num_iterations: expected a whole number, got 'x'"),
        ({"num_iterations": 1.5}, "trl.num_iterations: expected a whole number"),
        ({"mask_truncated_completions": "yes"}, "trl.mask_truncated_completions: expected true or false"),
        ({"importance_sampling_level": 3}, "trl.importance_sampling_level: expected text"),
        ({"multi_objective_aggregation": "avg"}, "'avg' is not one of TRL GRPOConfig's values: sum_then_normalize"),
        ({"loss_type": "grpo"}, "trl.loss_type: the run sets this itself; set it with --loss-type"),
        ({"learning_rate": 1e-5}, "set it with --learning-rate"),
        ({"reward_weights": [1.0]}, "--reward-weight"),
        ({"bf16": True}, "decided by the device"),
        ({"push_to_hub": True}, "never pushes to the Hugging Face hub"),
        ({"reward_clip_range": [0, 1]}, "(a field of RLOOConfig)"),
        ({"epsilon": None}, "trl.epsilon: the run sets this itself"),
        ({"top_k": None}, "trl.top_k: must be set (got null)"),
        ({"delta": None, "top_k": 5}, None),
    ],
)
def test_trl_keys_are_checked_against_the_class(trl: dict, needle: str | None) -> None:
    if needle is None:
        assert checked_overrides(cfg(trl=trl), "grpo") == trl
        return
    with pytest.raises(ConfigError) as err:
        checked_overrides(cfg(trl=trl), "grpo")
    assert needle in str(err.value)


def test_values_are_coerced_as_trl_takes_them() -> None:
    got = checked_overrides(
        cfg(trl={"min_p": "1e-2", "weight_decay": 0, "generation_kwargs": {"no_repeat_ngram_size": 3},
                 "warmup_steps": 2.0, "sync_ref_model": False}),
        "grpo",
    )  # fmt: skip
    assert got == {"min_p": 0.01, "weight_decay": 0.0, "generation_kwargs": {"no_repeat_ngram_size": 3},
                   "warmup_steps": 2, "sync_ref_model": False}  # fmt: skip
    assert checked_overrides(cfg(algorithm="rloo", trl={"reward_clip_range": [-1, 1]}), "rloo") == {
        "reward_clip_range": (-1, 1)
    }


def test_flag_pairs_read_yaml_values_and_merge_over_the_yaml(tmp_path: Path) -> None:
    assert parse_pairs("--trl", ["a=true", "b=2", "c=[1, 2]", "d=x=y", "e="]) == {
        "a": True, "b": 2, "c": [1, 2], "d": "x=y", "e": ""
    }  # fmt: skip
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_pairs("--trl", ["novalue"])
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"model": "tiny", "trl": {"top_k": 5, "num_iterations": 2}}), encoding="utf-8")
    loaded = load_config(path, {"trl": {"num_iterations": 3, "min_p": 0.1}})
    assert loaded.trl == {"top_k": 5, "num_iterations": 3, "min_p": 0.1}
    with pytest.raises(ConfigError, match="trl: expected a mapping"):
        load_config(None, {"trl": "num_iterations=2"})


def test_declared_fields_take_trl_choices_and_the_whole_object_is_built() -> None:
    for field, value in (("loss_type", "dapoo"), ("scale_rewards", "sometimes"), ("optim", "adamw_bogus")):
        with pytest.raises(ConfigError) as err:
            build_args(cfg(**{field: value}))
        text = str(err.value)
        assert text.startswith(f"{field}: {value!r} is not one of TRL GRPOConfig's values"), text
    for loss in TRL_163_LOSSES - {"luspo"}:
        assert build_args(cfg(loss_type=loss)).loss_type == loss
    # a rule TRL checks in its own __post_init__ comes back as one ConfigError naming TRL
    with pytest.raises(ConfigError, match="TRL GRPOConfig refuses this run config"):
        build_args(cfg(trl={"generation_batch_size": 6}))
    args = build_args(cfg(trl={"num_iterations": 2, "mask_truncated_completions": True}))
    assert (args.num_iterations, args.mask_truncated_completions, args.optim) == (2, True, "adamw_torch")
    sft = build_args(SFTRunConfig(model="tiny", trl={"packing": True, "loss_type": "dft"}))
    assert type(sft).__name__ == "SFTConfig" and (sft.packing, sft.loss_type) == (True, "dft")  # SFT's own loss_type
    with pytest.raises(ConfigError, match="set it with --max-seq-length"):
        build_args(SFTRunConfig(model="tiny", trl={"max_length": 64}))


def test_settings_that_do_nothing_are_said() -> None:
    def idle(**over: object) -> list[str]:
        c = cfg(**over)
        return idle_settings(c, build_args(c))

    assert idle() == []
    [line] = idle(epsilon=0.1, epsilon_high=0.3)
    assert line.startswith("epsilon, epsilon_high: with one optimisation step") and "num_iterations=2" in line
    assert idle(epsilon=0.1, trl={"num_iterations": 2}) == []
    assert idle(epsilon=0.1, trl={"steps_per_generation": 2}) == []
    assert "delta" in idle(trl={"delta": 2.0})[0]
    assert "has no clipping" in idle(loss_type="sapo", epsilon_high=0.28)[0]
    assert idle(loss_type="cispo", epsilon=0.1)[0].startswith("epsilon: loss_type cispo caps the ratio")
    assert "beta is 0" in idle(trl={"sync_ref_model": True})[0]
    assert idle(beta=0.04, trl={"sync_ref_model": True}) == []
    assert "only by loss_type vespo" in idle(trl={"vespo_k_pos": 3.0})[0]
    rloo = idle(algorithm="rloo", loss_type="grpo", scale_rewards="none")
    assert [line.split(":")[0] for line in rloo] == ["loss_type", "scale_rewards"]
    _, warnings = check_run(cfg(epsilon=0.1))
    assert len(warnings) == 1


def test_bad_value_is_refused_before_anything_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluator.training.grpo as grpo
    import evaluator.training.sft as sft

    def must_not_load(*_: object, **__: object) -> None:
        raise AssertionError("the model was loaded before the config was checked")

    monkeypatch.setattr(grpo, "load_policy", must_not_load)
    monkeypatch.setattr(sft, "load_policy", must_not_load)
    for bad in ({"loss_type": "dapoo"}, {"trl": {"num_iterations": "x"}}):
        out = tmp_path / "run"
        with pytest.raises(ConfigError):
            grpo.train(cfg(**bad).replace(output_dir=str(out)), progress=False)
        assert not out.exists()
    with pytest.raises(ConfigError, match=r"trl\.packing: expected true or false"):
        sft.sft(SFTRunConfig(model="tiny", output_dir=str(tmp_path / "s"), trl={"packing": "maybe"}), progress=False)
    assert not (tmp_path / "s").exists()


def _refusal(tmp_path: Path, *flags: str) -> tuple[subprocess.CompletedProcess, float, set[str]]:
    """The CLI run in its own process with ``-X importtime``: (result, seconds, top-level modules imported)."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evaluator.app.cli", *flags],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    imported = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in proc.stderr.splitlines() if line.startswith("import time:")}
    proc.stderr = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("import time:"))
    return proc, seconds, imported


def test_cli_refuses_dapoo_fast_with_one_message_and_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    flags = ("train", "--model", "tiny", "--loss-type", "dapoo", "--output-dir", str(out))
    for _attempt in range(2):  # the first may read TRL's schema; the second finds it cached
        proc, seconds, imported = _refusal(tmp_path, *flags)
        text = " ".join((proc.stdout + proc.stderr).split())
        assert proc.returncode == 2, text
        assert "loss_type: 'dapoo' is not one of TRL GRPOConfig's values: grpo, dr_grpo, dapo" in text
        assert "cispo" in text and "Traceback" not in text and text.count("error:") == 1
        assert not out.exists()
    assert not {"torch", "transformers", "trl", "peft"} & imported  # nothing that could load a model ran
    assert seconds < 20  # ~0.4 s on an idle machine (benchmarks/bad_config_refusal.py); loose for a busy one
    proc, _, imported = _refusal(tmp_path, "sft", "--model", "tiny", "--trl", "packing=maybe", "--output-dir", str(out))
    assert proc.returncode == 2 and "trl.packing: expected true or false, got 'maybe'" in " ".join(proc.stderr.split())
    assert not out.exists()


def test_schema_cache_is_the_installed_trl_and_survives_damage() -> None:
    from evaluator.training.trl_fields import _cache_path, _from_trl

    schema.cache_clear()
    fresh = _from_trl("grpo")
    assert schema("grpo") == fresh  # written now, or read back from an earlier run of this session
    path = _cache_path("grpo")
    assert path is not None and path.is_file()
    schema.cache_clear()
    assert schema("grpo") == fresh  # read from the file
    path.write_text("{not json", encoding="utf-8")
    schema.cache_clear()
    assert schema("grpo") == fresh and path.read_text(encoding="utf-8").startswith("{")
    schema.cache_clear()


def test_experiment_dry_run_checks_every_arm_with_trl(tmp_path: Path) -> None:
    base = {"domain": "gsm8k", "model": "tiny", "data": "synthetic", "max_steps": 2}
    doc = {"name": "t", "base": base, "seeds": [0], "baseline": "a",
           "arms": {"a": {}, "b": {"loss_type": "dapoo"}, "c": {"trl": {"num_iterations": "x"}},
                    "d": {"epsilon": 0.1}}}  # fmt: skip
    spec = tmp_path / "exp.yaml"
    spec.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = run_cli("experiment", "run", str(spec), "--out", str(tmp_path / "exp"), "--dry-run")
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "arms.b: loss_type: 'dapoo' is not one of" in text and "arms.c: trl.num_iterations: expected a whole" in text
    assert not (tmp_path / "exp").exists()
    doc["arms"] = {"a": {}, "d": {"epsilon": 0.1}, "e": {"epsilon": 0.1, "trl": {"num_iterations": 2}}}
    spec.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = run_cli("experiment", "run", str(spec), "--out", str(tmp_path / "exp"), "--dry-run")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "arms.d: epsilon: with one optimisation step" in text and "arms.e:" not in text.split("new")[0]


def test_help_of_the_command_line_lists_trl_values() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "evaluator.app.cli", "train", "--help"], capture_output=True, text=True, timeout=120,
        cwd=REPO, env={**os.environ, "COLUMNS": "400"},
    )  # fmt: skip
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "one of TRL's: grpo, dr_grpo, dapo, bnpo, cispo, sapo, luspo, vespo" in text
    assert "--trl" in text


def test_project_rules_read_the_trl_fields_they_depend_on() -> None:
    base = {"model": "tiny", "per_device_train_batch_size": 2, "num_generations": 4}
    with pytest.raises(ConfigError, match=r"gradient_accumulation_steps \(2×1\) must be divisible by num_generations"):
        load_config(None, base)
    ok = load_config(None, {**base, "trl": {"steps_per_generation": 2}})  # TRL generates 2×2 = 4 at once
    assert build_args(ok).generation_batch_size == 4
    with pytest.raises(ConfigError, match=r"trl\.generation_batch_size \(6\) must be divisible"):
        load_config(None, {**base, "trl": {"generation_batch_size": 6}})
    with pytest.raises(ConfigError, match="lr_scheduler_kwargs"):
        load_config(None, {"model": "tiny", "lr_scheduler_type": "cosine_with_min_lr"})
    cfg_ = load_config(None, {"model": "tiny", "lr_scheduler_type": "cosine_with_min_lr",
                              "trl": {"lr_scheduler_kwargs": {"min_lr": 1e-7}}})  # fmt: skip
    assert build_args(cfg_).lr_scheduler_kwargs == {"min_lr": 1e-7}
