"""vLLM rollouts: the run's ``--use-vllm`` flags mapped onto TRL 1.16 GRPOConfig's own vLLM options.

TRL does the work (``trl.generation.vllm_generation``): in colocate mode it starts vLLM inside each training
process with ``gpu_memory_utilization`` of the card and, when the student holds bitsandbytes ``Linear4bit``
layers, ``quantization="bitsandbytes"``; in server mode it connects to ``trl vllm-serve`` and pushes the
(adapter-merged) weights after each optimizer step. This module only maps and checks options.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from typing import Any

from packaging.version import Version

from evaluator.training.config import TrainConfig, TrainingError
from evaluator.training.config.scale import vllm_mode

VLLM_MIN, VLLM_MAX = Version("0.22.0"), Version("0.31.0")
"""The vLLM releases TRL 1.16 accepts (``trl.import_utils.is_vllm_available``)."""
INSTALL_HINT = (
    "install the vllm extra on a CUDA machine: pip install 'evaluator[vllm]' (vLLM 0.22–0.31, the window TRL "
    "1.16 accepts; each vLLM release pins its own torch, so install it first and let it choose torch — "
    "see docs/operators/gpus.md, 'vLLM rollouts')"
)


class VLLMUnavailable(TrainingError):
    """``--use-vllm`` was asked for where vLLM cannot run."""


def vllm_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """The GRPOConfig fields for this run (TRL's names; unset options keep TRL's defaults)."""
    if not cfg.use_vllm:
        return {"use_vllm": False}
    kw: dict[str, Any] = {"use_vllm": True, "vllm_mode": vllm_mode(cfg)}
    if kw["vllm_mode"] == "colocate":
        if cfg.vllm_gpu_memory_utilization is not None:
            kw["vllm_gpu_memory_utilization"] = float(cfg.vllm_gpu_memory_utilization)
        kw["vllm_enable_sleep_mode"] = bool(cfg.vllm_enable_sleep_mode)
    else:
        if cfg.vllm_server_host is not None:
            kw["vllm_server_host"] = cfg.vllm_server_host
        if cfg.vllm_server_port is not None:
            kw["vllm_server_port"] = int(cfg.vllm_server_port)
    return kw


def vllm_resolved(cfg: TrainConfig, quantize_4bit: bool) -> dict[str, Any] | None:
    """What run_config.yaml records: mode, utilisation and how TRL will load the student into vLLM."""
    if not cfg.use_vllm:
        return None
    from trl import GRPOConfig

    mode = vllm_mode(cfg)
    default_util = GRPOConfig.__dataclass_fields__["vllm_gpu_memory_utilization"].default
    return {
        "mode": mode,
        "gpu_memory_utilization": (cfg.vllm_gpu_memory_utilization or default_util) if mode == "colocate" else None,
        # TRL passes quantization="bitsandbytes" when the student has Linear4bit layers (colocate mode)
        "quantization": "bitsandbytes" if quantize_4bit and mode == "colocate" else None,
        "sleep_mode": bool(cfg.vllm_enable_sleep_mode),
    }


def installed_vllm() -> Version | None:
    if importlib.util.find_spec("vllm") is None:
        return None
    try:
        return Version(Version(importlib.metadata.version("vllm")).base_version)
    except importlib.metadata.PackageNotFoundError:
        return None


def require_vllm(cfg: TrainConfig, cuda: bool | None = None) -> None:
    """Before anything loads: vLLM installed, in TRL's window, and a GPU to run it on."""
    if not cfg.use_vllm:
        return
    version = installed_vllm()
    if version is None:
        raise VLLMUnavailable(f"--use-vllm needs vLLM, which is not installed here: {INSTALL_HINT}")
    if not VLLM_MIN <= version <= VLLM_MAX:
        raise VLLMUnavailable(f"vLLM {version} is installed but TRL 1.16 works with 0.22–0.31 only: {INSTALL_HINT}")
    if cuda is None:
        import torch

        cuda = torch.cuda.is_available()
    if not cuda:
        raise VLLMUnavailable("--use-vllm needs a CUDA GPU; on CPU leave it off (rollouts use HF generate)")
