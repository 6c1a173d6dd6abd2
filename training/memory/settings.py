"""What the memory estimate reads and writes: the run settings that decide memory, and one row of the plan.

Kept apart from the estimate so the phase formulas (:mod:`phases`), the vLLM terms and the plan all name the same
few types without importing each other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

GIB = 1024**3
CUDA_CONTEXT_BYTES = int(0.5 * GIB)
ALLOCATOR_SLACK = 0.10
DEFAULT_PROMPT_LENGTH = 256
JUDGE_PROMPT_EXTRA = 384
"""Tokens a judge prompt adds around the question and completion (instructions, rubric, scale)."""


class PlanError(ValueError):
    """The settings describe a run the trainer would refuse."""


@dataclass(frozen=True)
class JudgeSettings:
    """A judge model loaded on the same GPU as the student (the ``local`` judge kind)."""

    model: str
    quantize: str = "4bit"
    batch_size: int = 8
    max_new_tokens: int = 256


@dataclass(frozen=True)
class PlanSettings:
    """The run settings that decide memory. Defaults match ``evaluator train`` on a CUDA GPU."""

    per_device_batch: int = 4
    grad_accum: int = 1
    num_generations: int = 4
    prompt_length: int = DEFAULT_PROMPT_LENGTH
    completion_length: int = 256
    lora: bool = True
    lora_rank: int = 16
    lora_target: str = "all-linear"
    quantize: str = "4bit"
    gradient_checkpointing: bool = True
    optim: str = "paged_adamw_8bit"
    device: str = "cuda"
    compute_dtype: str = "bfloat16"
    beta: float = 0.0
    judge: JudgeSettings | None = None
    vllm_gpu_memory_utilization: float = 0.0
    """vLLM colocate mode's share of the GPU (0 = no vLLM on the training GPU)."""
    gpu_total_bytes: int | None = None
    """The card's total memory, needed to size the vLLM share."""

    @property
    def compute_bytes(self) -> int:
        return 4 if self.compute_dtype == "float32" else 2

    @property
    def generation_batch(self) -> int:
        return self.per_device_batch * self.grad_accum

    def replace(self, **changes: Any) -> PlanSettings:
        return dataclasses.replace(self, **changes)

    def problems(self) -> list[str]:
        out = []
        if self.quantize not in ("4bit", "none"):
            out.append(f"quantize must be 4bit or none, not {self.quantize!r}")
        if self.quantize == "4bit" and not self.lora:
            out.append("4-bit weights cannot be trained directly: keep LoRA on with 4-bit")
        for name in (
            "per_device_batch",
            "grad_accum",
            "num_generations",
            "prompt_length",
            "completion_length",
        ):
            if getattr(self, name) < 1:
                out.append(f"{name} must be at least 1")
        if self.lora and self.lora_rank < 1:
            out.append("lora_rank must be at least 1")
        if self.num_generations >= 1 and self.generation_batch % self.num_generations:
            out.append(
                f"per-device batch × gradient accumulation ({self.per_device_batch}×{self.grad_accum}) must be "
                f"divisible by num_generations ({self.num_generations})"
            )
        return out


class Row(NamedTuple):
    """One line of the plan: what holds memory, how much, why, and in which phase."""

    name: str
    bytes: int
    note: str
    phase: str
    torch_allocated: bool = True
    """False for memory outside torch's allocator statistics (CUDA context, paged optimizer state)."""


PHASES = ("persistent", "load", "generation", "judging", "training")


def gib(n: int | float) -> str:
    return f"{n / GIB:.2f}"
