"""Config checks for the scale-out options (several processes, vLLM rollouts): pure functions of the config,
no hardware needed; the launcher and the vLLM mapping import them from here."""

from __future__ import annotations

from pathlib import Path

import yaml

from evaluator.training.config.declaration import TrainConfig
from evaluator.training.config.errors import ConfigError

CONFIG_DIR = Path(__file__).resolve().parents[1] / "launch_configs"
LAUNCH_CONFIGS = {"ddp": "ddp.yaml", "fsdp": "fsdp.yaml", "zero2": "zero2.yaml", "zero3": "zero3.yaml"}
VLLM_MODES = ("colocate", "server")


def resolve_launch_config(name: str | None) -> Path:
    """A shipped config by name (ddp, fsdp, zero2, zero3; default ddp) or the user's own YAML file."""
    key = (name or "ddp").strip()
    if key.lower() in LAUNCH_CONFIGS:
        return CONFIG_DIR / LAUNCH_CONFIGS[key.lower()]
    path = Path(key).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"--launch-config {name!r} is neither one of {', '.join(LAUNCH_CONFIGS)} nor an existing "
            "accelerate config file"
        )
    return path


def launch_kind(path: Path) -> str:
    """``ddp``, ``fsdp``, ``zero2``, ``zero3`` … read from the accelerate config's own fields."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"--launch-config {path} is not a readable YAML file: {exc}") from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"--launch-config {path} must hold an accelerate config mapping")
    kind = str(doc.get("distributed_type", "MULTI_GPU")).upper()
    if kind == "DEEPSPEED":
        return f"zero{(doc.get('deepspeed_config') or {}).get('zero_stage', 2)}"
    return {"FSDP": "fsdp", "MULTI_GPU": "ddp", "MULTI_CPU": "ddp", "NO": "ddp"}.get(kind, kind.lower())


def validate_launch(cfg: TrainConfig) -> None:
    """Process count and the config file."""
    if not isinstance(cfg.num_processes, int) or cfg.num_processes < 1:
        raise ConfigError(f"num_processes must be a whole number ≥ 1, not {cfg.num_processes!r}")
    if cfg.launch_config is not None:
        if cfg.num_processes == 1:
            raise ConfigError("--launch-config needs --num-processes 2 or more")
        launch_kind(resolve_launch_config(cfg.launch_config))


def vllm_mode(cfg: TrainConfig) -> str:
    return cfg.vllm_mode or "colocate"


def validate_vllm(cfg: TrainConfig) -> None:
    """Config-level checks: known mode, utilisation in (0, 1] and for colocate only, server flags for server."""
    given = {
        "--vllm-mode": cfg.vllm_mode,
        "--vllm-server-host": cfg.vllm_server_host,
        "--vllm-server-port": cfg.vllm_server_port,
        "--vllm-gpu-memory-utilization": cfg.vllm_gpu_memory_utilization,
        "--vllm-sleep-mode": cfg.vllm_enable_sleep_mode or None,
    }
    if not cfg.use_vllm:
        named = [flag for flag, value in given.items() if value is not None]
        if named:
            raise ConfigError(f"{', '.join(named)} only applies with --use-vllm")
        return
    mode = vllm_mode(cfg)
    if mode not in VLLM_MODES:
        raise ConfigError(f"vllm_mode must be colocate or server, not {cfg.vllm_mode!r}")
    util = cfg.vllm_gpu_memory_utilization
    if util is not None:
        if mode != "colocate":
            raise ConfigError(
                "--vllm-gpu-memory-utilization applies to colocate mode only; in server mode pass it to "
                "`evaluator vllm-serve --gpu-memory-utilization` instead"
            )
        if isinstance(util, bool) or not isinstance(util, (int, float)) or not 0 < util <= 1:
            raise ConfigError(f"vllm_gpu_memory_utilization must be a fraction in (0, 1], not {util!r}")
    if mode == "colocate":
        if cfg.vllm_server_host is not None or cfg.vllm_server_port is not None:
            raise ConfigError("--vllm-server-host/--vllm-server-port apply to --vllm-mode server only")
    else:
        if cfg.vllm_enable_sleep_mode:
            raise ConfigError("--vllm-sleep-mode applies to colocate mode only (the server has its own card)")
        port = cfg.vllm_server_port
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise ConfigError(f"vllm_server_port must be a TCP port 1–65535, not {port!r}")
