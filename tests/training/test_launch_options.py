"""Launch plumbing checked against the engines' own parsers: accelerate, torchrun, TRL's GRPOConfig."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evaluator.training.config import ConfigError, TrainConfig, load_config


def _cfg(**kw) -> TrainConfig:
    return load_config(None, {"output_dir": "/tmp/unused-run", **kw})


def test_cpu_launch_is_torchrun_with_the_child_command(tmp_path: Path) -> None:
    from torch.distributed.run import get_args_parser

    from evaluator.training.launch import launch_command

    cmd = launch_command(_cfg(num_processes=2), tmp_path / "c.yaml", cuda=False)
    assert cmd[:3] == [sys.executable, "-m", "torch.distributed.run"]
    args = get_args_parser().parse_args(cmd[3:])
    assert args.nproc_per_node == "2" and args.nnodes == "1" and args.standalone
    assert args.module and args.training_script == "evaluator.app.cli"
    assert args.training_script_args == ["train", "--config", str(tmp_path / "c.yaml")]


@pytest.mark.parametrize(("name", "kind", "dist_type"), [
    ("ddp", "ddp", "MULTI_GPU"), ("fsdp", "fsdp", "FSDP"), ("zero2", "zero2", "DEEPSPEED"), ("zero3", "zero3", "DEEPSPEED"),
])
def test_gpu_launch_is_accelerate_with_a_shipped_config(name: str, kind: str, dist_type: str, tmp_path: Path) -> None:
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.commands.launch import launch_command_parser

    from evaluator.training.config.scale import launch_kind, resolve_launch_config
    from evaluator.training.launch import launch_command

    cfg = _cfg(num_processes=4, launch_config=name)
    path = resolve_launch_config(name)
    assert path.is_file() and launch_kind(path) == kind
    loaded = load_config_from_file(str(path))  # accelerate itself reads the shipped file
    assert str(loaded.distributed_type).endswith(dist_type)
    cmd = launch_command(cfg, tmp_path / "c.yaml", cuda=True, port=29611)
    assert cmd[:3] == [sys.executable, "-m", "accelerate.commands.launch"]
    args = launch_command_parser().parse_args(cmd[3:])
    assert args.config_file == str(path) and args.num_processes == 4 and args.main_process_port == 29611
    assert args.module and args.training_script == "evaluator.app.cli"
    assert args.training_script_args == ["train", "--config", str(tmp_path / "c.yaml")]


def test_sharded_configs_are_marked_untested_until_a_gpu_run() -> None:
    from evaluator.training.config.scale import LAUNCH_CONFIGS, resolve_launch_config

    for name in LAUNCH_CONFIGS:
        assert "UNTESTED" in resolve_launch_config(name).read_text()


def test_own_config_file_and_bad_names(tmp_path: Path) -> None:
    from evaluator.training.config.scale import launch_kind, resolve_launch_config

    own = tmp_path / "mine.yaml"
    own.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\nnum_processes: 8\n")
    assert resolve_launch_config(str(own)) == own and launch_kind(own) == "zero3"
    with pytest.raises(ConfigError, match="neither one of ddp, fsdp, zero2, zero3"):
        resolve_launch_config("zero4")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="accelerate config mapping"):
        _cfg(num_processes=2, launch_config=str(bad))


@pytest.mark.parametrize(("kw", "message"), [
    ({"num_processes": 0}, "num_processes must be a whole number"),
    ({"num_processes": 1, "launch_config": "ddp"}, "needs --num-processes 2"),
])
def test_launch_config_checks(kw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _cfg(**kw)


def test_hardware_checks() -> None:
    import importlib.util

    from evaluator.training.launch import LaunchError, check_hardware

    assert check_hardware(_cfg(num_processes=2), cuda=False, gpus=0) == "ddp"
    with pytest.raises(LaunchError, match="on CPU only ddp"):
        check_hardware(_cfg(num_processes=2, launch_config="fsdp"), cuda=False, gpus=0)
    with pytest.raises(LaunchError, match="shows 2 GPU"):
        check_hardware(_cfg(num_processes=4), cuda=True, gpus=2)
    if importlib.util.find_spec("deepspeed") is None:
        with pytest.raises(LaunchError, match=r"evaluator\[deepspeed\]"):
            check_hardware(_cfg(num_processes=2, launch_config="zero3"), cuda=True, gpus=2)


def test_children_are_guarded_against_relaunching(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluator.training.launch import child_config, child_env, needs_launch

    cfg = _cfg(num_processes=2, force=True)
    monkeypatch.delenv("EVALUATOR_LAUNCHED", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert needs_launch(cfg) and not needs_launch(_cfg())
    monkeypatch.setenv("WORLD_SIZE", "2")  # already inside someone's torchrun / accelerate launch
    assert not needs_launch(cfg)
    monkeypatch.delenv("WORLD_SIZE")
    env = child_env(cfg, cuda=False)
    assert env["EVALUATOR_LAUNCHED"] == "1"
    monkeypatch.setenv("EVALUATOR_LAUNCHED", "1")
    assert not needs_launch(cfg)
    assert child_config(cfg)["force"] is False and child_config(cfg)["num_processes"] == 2


def test_device_map_and_4bit_storage_follow_the_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from evaluator.models.loading import bnb_config
    from evaluator.models.placement import cuda_device_map

    for var in ("ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED", "ACCELERATE_DEEPSPEED_ZERO_STAGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert cuda_device_map() == {"": 3}
    assert bnb_config("bfloat16").bnb_4bit_quant_storage == torch.uint8
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "2")
    assert bnb_config("bfloat16").bnb_4bit_quant_storage == torch.uint8  # ZeRO-2 does not shard weights
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "3")
    assert bnb_config("bfloat16").bnb_4bit_quant_storage == torch.bfloat16
    assert cuda_device_map() is None
    monkeypatch.delenv("ACCELERATE_USE_DEEPSPEED")
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    assert bnb_config("float16").bnb_4bit_quant_storage == torch.float16


def test_parameter_digest_sees_trainable_values_only() -> None:
    import torch

    from evaluator.training.distributed import parameter_digest

    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    assert parameter_digest(a) == parameter_digest(b)
    with torch.no_grad():
        b.bias[0] += 1e-6
    assert parameter_digest(a) != parameter_digest(b)
    b.bias.requires_grad_(False)
    a.bias.requires_grad_(False)
    assert parameter_digest(a) == parameter_digest(b)
