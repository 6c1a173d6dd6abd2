"""Out-of-memory handling: plan before a CUDA run, and a short actionable message instead of a traceback."""

from __future__ import annotations

from typing import Any

from evaluator.training.config import TrainConfig
from evaluator.training.memory.plan import OOM_ADVICE, warn_if_too_big


def oom_advice() -> str:
    return OOM_ADVICE


def is_oom(exc: BaseException) -> bool:
    """True for CUDA (or other accelerator) out-of-memory errors, whatever wraps them."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return "out of memory" in str(exc).lower() and "cuda" in str(exc).lower()


class TrainingOOM(RuntimeError):
    """The run ran out of accelerator memory; the message says what to change."""

    @classmethod
    def from_config(cls, cfg: TrainConfig) -> TrainingOOM:
        return cls(
            f"Out of GPU memory (per-device batch {cfg.per_device_train_batch_size}, "
            f"{cfg.num_generations} generations × {cfg.max_completion_length} tokens, LoRA r={cfg.lora_r}). "
            + oom_advice()
        )


def warn_if_plan_exceeds(cfg: TrainConfig, precision: Any, console: Any = None) -> str | None:
    """On CUDA, estimate peak memory first and warn (never refuse) when it exceeds free memory."""
    if precision.device != "cuda":
        return None
    try:
        import torch  # heavy: only a CUDA run gets here

        free, total = torch.cuda.mem_get_info()
        message = warn_if_too_big(cfg, free, gpu_total_bytes=total)
    except Exception as exc:  # the planner must never stop a run
        message = f"memory planner unavailable: {exc}"
    if message:
        from rich.console import Console

        (console or Console(stderr=True)).print(f"[yellow]warning:[/] {message}")
    return message
