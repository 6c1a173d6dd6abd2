"""vLLM rollouts on CPU: the GRPOConfig TRL receives, the checks, the extra's pin, the planner, vllm-serve."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
from conftest import REPO, run_cli

from evaluator.training.config import ConfigError, TrainConfig, load_config


def _cfg(**kw) -> TrainConfig:
    return load_config(None, {"output_dir": "/tmp/unused-run", **kw})


def _grpo_config(cfg: TrainConfig, tmp_path: Path):
    from evaluator.models.loading import Precision
    from evaluator.training.grpo import grpo_args
    from evaluator.training.run_setup import LoadedPolicy

    policy = LoadedPolicy(None, None, Precision("cpu", "float32", False, False), "adamw_torch", False)
    return grpo_args(cfg, tmp_path, policy, [1.0])


def test_colocate_options_reach_grpoconfig(tmp_path: Path) -> None:
    args = _grpo_config(_cfg(use_vllm=True, vllm_gpu_memory_utilization=0.45, vllm_enable_sleep_mode=True), tmp_path)
    assert type(args).__name__ == "GRPOConfig"
    assert args.use_vllm is True and args.vllm_mode == "colocate"
    assert args.vllm_gpu_memory_utilization == 0.45 and args.vllm_enable_sleep_mode is True


def test_server_options_reach_grpoconfig_and_keep_trl_defaults(tmp_path: Path) -> None:
    from trl import GRPOConfig

    args = _grpo_config(_cfg(use_vllm=True, vllm_mode="server", vllm_server_host="10.1.2.3", vllm_server_port=8123),
                        tmp_path)
    assert (args.use_vllm, args.vllm_mode, args.vllm_server_host, args.vllm_server_port) == (
        True, "server", "10.1.2.3", 8123)
    default = GRPOConfig.__dataclass_fields__["vllm_gpu_memory_utilization"].default
    assert args.vllm_gpu_memory_utilization == default and args.vllm_enable_sleep_mode is False
    plain = _grpo_config(_cfg(), tmp_path)
    assert plain.use_vllm is False


@pytest.mark.parametrize(("kw", "message"), [
    ({"vllm_mode": "server"}, "only applies with --use-vllm"),
    ({"vllm_gpu_memory_utilization": 0.5}, "only applies with --use-vllm"),
    ({"use_vllm": True, "vllm_mode": "remote"}, "colocate or server"),
    ({"use_vllm": True, "vllm_mode": "server", "vllm_gpu_memory_utilization": 0.5}, "colocate mode only"),
    ({"use_vllm": True, "vllm_gpu_memory_utilization": 0.0}, r"fraction in \(0, 1\]"),
    ({"use_vllm": True, "vllm_gpu_memory_utilization": 1.5}, r"fraction in \(0, 1\]"),
    ({"use_vllm": True, "vllm_server_port": 9000}, "server only"),
    ({"use_vllm": True, "vllm_mode": "server", "vllm_server_port": 70000}, "TCP port"),
    ({"use_vllm": True, "vllm_mode": "server", "vllm_enable_sleep_mode": True}, "colocate mode only"),
])
def test_bad_vllm_options_are_refused(kw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _cfg(**kw)


def test_4bit_student_is_recorded_as_bitsandbytes_in_colocate_mode() -> None:
    from evaluator.training.vllm_options import vllm_resolved

    assert vllm_resolved(_cfg(), True) is None
    col = vllm_resolved(_cfg(use_vllm=True), True)
    assert col["quantization"] == "bitsandbytes" and col["gpu_memory_utilization"] == 0.3
    assert vllm_resolved(_cfg(use_vllm=True), False)["quantization"] is None
    assert vllm_resolved(_cfg(use_vllm=True, vllm_mode="server"), True)["gpu_memory_utilization"] is None


def test_trl_detects_4bit_students_by_linear4bit_layers(tiny_model_dir: Path) -> None:
    """TRL sets quantization='bitsandbytes' when the student holds bnb Linear4bit layers; ours does after a 4-bit load."""
    import bitsandbytes as bnb
    import trl.generation.vllm_generation as vg

    from evaluator.models.loading import load_model

    assert "bnb.nn.Linear4bit" in Path(vg.__file__).read_text() and '"bitsandbytes"' in Path(vg.__file__).read_text()
    model, _, _ = load_model(str(tiny_model_dir), quantize="4bit", device="cpu")
    assert any(isinstance(m, bnb.nn.Linear4bit) for m in model.modules())


def test_vllm_missing_is_a_clear_cli_error(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    out = tmp_path / "run"
    result = run_cli("train", "--model", "tiny", "--use-vllm", "--max-steps", "1", "--output-dir", str(out))
    assert result.exit_code != 0
    assert "evaluator[vllm]" in " ".join(result.output.split()) and "Traceback" not in result.output
    assert not out.exists()  # refused before a run folder was made


def test_vllm_extra_is_pinned_to_trls_window() -> None:
    from packaging.requirements import Requirement

    doc = tomllib.loads((REPO / "pyproject.toml").read_text())
    (req,) = [Requirement(r) for r in doc["project"]["optional-dependencies"]["vllm"]]
    assert req.name == "vllm"
    for ok in ("0.22.0", "0.26.1", "0.31.0"):
        assert req.specifier.contains(ok)
    for bad in ("0.21.9", "0.31.1", "0.32.0", "1.0.0"):
        assert not req.specifier.contains(bad)
    assert "deepspeed" in doc["project"]["optional-dependencies"]


def test_planner_counts_the_colocated_vllm_share() -> None:
    from evaluator.training.memory.architectures import arch_for
    from evaluator.training.memory.plan import GIB, estimate, settings_for_train_config

    total = 48 * GIB
    base = estimate(arch_for("qwen3-0.6b"), settings_for_train_config(_cfg(model="qwen3-0.6b"), gpu_total_bytes=total))
    cfg = _cfg(model="qwen3-0.6b", use_vllm=True, vllm_gpu_memory_utilization=0.4)
    plan = estimate(arch_for("qwen3-0.6b"), settings_for_train_config(cfg, gpu_total_bytes=total))
    (row,) = [r for r in plan.rows if r.name.startswith("vLLM")]
    assert row.bytes == int(0.4 * total) and row.phase == "persistent"
    assert plan.total_bytes - base.total_bytes >= int(0.4 * total)
    unsized = estimate(arch_for("qwen3-0.6b"), settings_for_train_config(cfg))
    assert not [r for r in unsized.rows if r.name.startswith("vLLM")]
    assert any("--gpu-mem" in n for n in unsized.notes)
    server = settings_for_train_config(_cfg(use_vllm=True, vllm_mode="server"), gpu_total_bytes=total)
    assert server.vllm_gpu_memory_utilization == 0.0
    default = settings_for_train_config(_cfg(use_vllm=True), gpu_total_bytes=total)
    assert default.vllm_gpu_memory_utilization == 0.3  # TRL's own default


def test_vllm_serve_builds_trls_command_with_the_resolved_model(tiny_model_dir: Path) -> None:
    import shlex

    from trl import TrlParser
    from trl.scripts.vllm_serve import ScriptArguments

    result = run_cli("vllm-serve", "--model", "tiny", "--port", "8123", "--gpu-memory-utilization", "0.8", "--dry-run")
    assert result.exit_code == 0, result.output
    cmd = shlex.split(result.output.strip())
    assert cmd[1:4] == ["-m", "trl.cli.main", "vllm-serve"]
    (args,) = TrlParser(dataclass_types=[ScriptArguments]).parse_args_into_dataclasses(cmd[4:])
    assert Path(args.model) == Path(tiny_model_dir) and args.port == 8123 and args.gpu_memory_utilization == 0.8
    bad = run_cli("vllm-serve", "--model", "tiny", "--gpu-memory-utilization", "1.5", "--dry-run")
    assert bad.exit_code != 0 and "(0, 1]" in " ".join(bad.output.split())
