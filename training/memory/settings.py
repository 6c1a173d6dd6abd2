"""What the memory estimate reads and writes: the run settings that decide memory, and one row of the plan.

Kept apart from the estimate so the phase formulas (:mod:`phases`), the vLLM terms and the plan all name the same
few types without importing each other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

from evaluator.models.hardware import hardware_defaults
from evaluator.training.config import TrainConfig

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


@dataclass
class PlanSettings(TrainConfig):
    """The run as the planner sees it: the run config itself (its batch, generations, lengths, LoRA, quantisation,
    optimizer and vLLM fields, under their own names and defaults) plus what only a plan needs. A field the run
    leaves to the hardware (``None``) is decided for ``device`` as the trainer decides it (:func:`resolve`)."""

    prompt_length: int = DEFAULT_PROMPT_LENGTH
    device: str = "cuda"
    compute_dtype: str | None = None
    """None: the device's (bfloat16 on CUDA, float32 on CPU)."""
    local_judge: JudgeSettings | None = None
    """A judge model on the training GPU (the run config's ``judge`` with ``kind: local``)."""
    gpu_total_bytes: int | None = None
    """The card's total memory, needed to size the vLLM share."""

    @property
    def compute_bytes(self) -> int:
        return 4 if self.compute_dtype == "float32" else 2

    @property
    def generation_batch(self) -> int:
        return self.per_device_train_batch_size * self.gradient_accumulation_steps

    def document(self) -> dict[str, Any]:
        """The fields that decide memory, as the plan document records them."""
        doc = {name: getattr(self, name) for name in DOCUMENT_FIELDS}
        doc["local_judge"] = dataclasses.asdict(self.local_judge) if self.local_judge else None
        return doc

    def problems(self) -> list[str]:
        out = []
        if self.quantize not in ("4bit", "none"):
            out.append(f"quantize must be 4bit or none, not {self.quantize!r}")
        if self.quantize == "4bit" and not self.lora:
            out.append("4-bit weights cannot be trained directly: keep LoRA on with 4-bit")
        for name in (
            "per_device_train_batch_size",
            "gradient_accumulation_steps",
            "num_generations",
            "prompt_length",
            "max_completion_length",
        ):
            if getattr(self, name) < 1:
                out.append(f"{name} must be at least 1")
        if self.lora and self.lora_r < 1:
            out.append("lora_r must be at least 1")
        if self.num_generations >= 1 and self.generation_batch % self.num_generations:
            out.append(
                f"per-device batch × gradient accumulation ({self.per_device_train_batch_size}×"
                f"{self.gradient_accumulation_steps}) must be divisible by num_generations ({self.num_generations})"
            )
        return out


DOCUMENT_FIELDS = (
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "prompt_length",
    "max_completion_length", "lora", "lora_r", "lora_target", "quantize", "gradient_checkpointing", "optim",
    "device", "compute_dtype", "beta", "local_judge", "use_vllm", "vllm_gpu_memory_utilization", "gpu_total_bytes",
)  # fmt: skip
"""What ``evaluator plan --json`` records of the settings (the rest of the run config does not change memory)."""


def resolve(s: PlanSettings) -> PlanSettings:
    """The hardware decisions the run leaves open (``None``), made for ``s.device`` the way the trainer makes them."""
    hw = hardware_defaults(
        s.device, quantize=s.quantize, optim=s.optim, gradient_checkpointing=s.gradient_checkpointing
    )
    return s.replace(
        device=hw.device,
        quantize=hw.quantize,
        optim=hw.optim,
        gradient_checkpointing=hw.gradient_checkpointing,
        compute_dtype=s.compute_dtype or hw.dtype_name,
        vllm_gpu_memory_utilization=vllm_utilisation(s) if hw.device == "cuda" else 0.0,  # the share vLLM takes
    )


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


def vllm_utilisation(cfg: Any) -> float:
    """The share a run's config reserves on the training GPU (0 without vLLM or in server mode)."""
    if not getattr(cfg, "use_vllm", False) or (getattr(cfg, "vllm_mode", None) or "colocate") != "colocate":
        return 0.0
    if getattr(cfg, "vllm_gpu_memory_utilization", None) is not None:
        return float(cfg.vllm_gpu_memory_utilization)
    from trl import GRPOConfig

    return float(GRPOConfig.__dataclass_fields__["vllm_gpu_memory_utilization"].default)
