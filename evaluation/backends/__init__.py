"""Generation backends: Hugging Face ``generate`` (``hf``, everywhere) and vLLM (``vllm``, CUDA and the extra),
one protocol (:mod:`protocol`) below both; :func:`load_generator` picks one by name."""

from __future__ import annotations

import os

from evaluator.core.generation import BACKENDS
from evaluator.evaluation.backends.hf import Generator
from evaluator.evaluation.backends.protocol import (
    Backend,
    GenerationError,
    Generations,
    OnBatch,
    Prompt,
)
from evaluator.evaluation.backends.vllm import VLLMGenerator

__all__ = [
    "BACKENDS", "Backend", "GenerationError", "Generations", "Generator", "OnBatch", "Prompt", "VLLMGenerator",
    "load_generator",
]  # fmt: skip


def load_generator(
    model: str,
    *,
    adapter: str | os.PathLike[str] | None = None,
    quantize: str | None = None,
    device: str | None = None,
    backend: str = "hf",
    seed: int = 0,
) -> Backend:
    """Load ``model`` (and a LoRA ``adapter``) for inference with the chosen backend."""
    if backend not in BACKENDS:
        raise GenerationError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "vllm":
        return VLLMGenerator.start(model, adapter=adapter, quantize=quantize, seed=seed)
    return Generator.load(model, adapter=adapter, quantize=quantize, device=device)
