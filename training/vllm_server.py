"""``evaluator vllm-serve``: TRL's ``trl vllm-serve`` for server-mode rollouts, on the model a run resolves.

The server takes no adapter option: during training TRL merges the adapter and pushes the weights to the
server after each optimizer step, so the server starts from the plain base model the run names.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from evaluator.models.loading import model_source
from evaluator.training.config import TrainingError


@dataclass(frozen=True)
class ServeOptions:
    model: str
    host: str = "127.0.0.1"
    port: int = 8000
    gpu_memory_utilization: float = 0.9
    tensor_parallel_size: int = 1
    max_model_len: int | None = None

    def check(self) -> None:
        if not 0 < self.gpu_memory_utilization <= 1:
            raise TrainingError(f"--gpu-memory-utilization must be in (0, 1], not {self.gpu_memory_utilization}")
        if not 0 < self.port < 65536:
            raise TrainingError(f"--port must be 1–65535, not {self.port}")
        if self.tensor_parallel_size < 1:
            raise TrainingError(f"--tensor-parallel-size must be ≥ 1, not {self.tensor_parallel_size}")


def resolved_model_path(model: str) -> str:
    """The folder (or hub id) that vLLM should load: presets, ``tiny`` and cached hub ids resolved locally."""
    src, _ = model_source(model)
    return src.path


def serve_command(opts: ServeOptions) -> list[str]:
    """``trl vllm-serve`` (TRL's CLI module) with the resolved model and TRL's own argument names."""
    opts.check()
    cmd = [
        sys.executable, "-m", "trl.cli.main", "vllm-serve",
        "--model", resolved_model_path(opts.model),
        "--host", opts.host,
        "--port", str(opts.port),
        "--gpu_memory_utilization", str(opts.gpu_memory_utilization),
        "--tensor_parallel_size", str(opts.tensor_parallel_size),
    ]
    if opts.max_model_len is not None:
        cmd += ["--max_model_len", str(opts.max_model_len)]
    return cmd
