"""The hardware defaults of a run, decided in one place: what ``None`` means for quantize, optimizer, precision
and gradient checkpointing on a device.

CUDA: NF4 4-bit, paged 8-bit AdamW, bf16 where the card supports it (else fp16 compute), checkpointing on.
CPU: no quantisation, plain AdamW, fp32, checkpointing off. Loading, training, the memory planner and the
multi-process launcher all ask this function, so they cannot disagree about a run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunHardware:
    device: str
    dtype_name: str
    bf16: bool
    quantize: str
    optim: str
    gradient_checkpointing: bool


def hardware_defaults(
    device: str,
    *,
    bf16_supported: bool = True,
    quantize: str | None = None,
    optim: str | None = None,
    gradient_checkpointing: bool | None = None,
) -> RunHardware:
    """The run's settings on ``device`` ("cuda" or "cpu"): what is set stays, ``None`` becomes the default."""
    cuda = device == "cuda"
    q = (quantize or ("4bit" if cuda else "none")).lower()
    if q not in ("4bit", "none"):
        raise ValueError(f"--quantize must be 4bit or none, not {quantize!r}")
    bf16 = cuda and bf16_supported
    return RunHardware(
        device="cuda" if cuda else "cpu",
        dtype_name="bfloat16" if bf16 else ("float16" if cuda else "float32"),
        bf16=bf16,
        quantize=q,
        optim=optim or ("paged_adamw_8bit" if cuda else "adamw_torch"),
        gradient_checkpointing=gradient_checkpointing if gradient_checkpointing is not None else cuda,
    )
