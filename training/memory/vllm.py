"""The memory planner's vLLM terms: colocate mode reserves ``utilisation × total GPU memory`` up front.

vLLM allocates its share (a copy of the weights plus its KV cache) when TRL starts it inside the training
process, whatever the batch; the planner counts that share as persistent memory outside torch's allocator.
The HF-generate rows stay in the plan as a conservative margin (TRL still builds its logits for the loss).
"""

from __future__ import annotations

from typing import Any

from evaluator.training.memory.settings import Row, gib


def vllm_rows(s: Any) -> list[Row]:
    """Rows for a plan: the colocated vLLM reservation, when utilisation and the GPU size are known."""
    util = float(getattr(s, "vllm_gpu_memory_utilization", 0.0) or 0.0)
    total = getattr(s, "gpu_total_bytes", None)
    if util <= 0 or not total:
        return []
    return [
        Row(
            "vLLM colocate reservation",
            int(util * total),
            f"{util:g} × {gib(total)} GiB GPU: vLLM's weight copy and KV cache",
            "persistent",
            False,
        )
    ]


def vllm_notes(s: Any) -> list[str]:
    util = float(getattr(s, "vllm_gpu_memory_utilization", 0.0) or 0.0)
    if util <= 0:
        return []
    if not getattr(s, "gpu_total_bytes", None):
        return [
            f"vLLM colocate mode reserves {util:g} × the GPU's total memory; give the GPU size (--gpu-mem) "
            "to include it in the estimate"
        ]
    return [f"vLLM colocate mode reserves {util:g} of the GPU; lower --vllm-gpu-memory-utilization to free memory"]
