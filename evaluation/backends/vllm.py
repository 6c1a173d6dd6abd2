"""The optional vLLM backend: same interface as :class:`~evaluator.evaluation.backends.hf.Generator`.

Used only when vLLM is importable and a CUDA GPU is present; everything else runs on the ``hf`` backend.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluator.core.generation import GenerationSettings
from evaluator.evaluation.backends.hf import Generator, check_adapter
from evaluator.evaluation.backends.protocol import GenerationError, Generations, OnBatch
from evaluator.models.loading import model_source


def vllm_available() -> bool:
    """True when ``vllm`` imports and a CUDA device is visible."""
    try:
        import torch
        import vllm  # noqa: F401
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


class VLLMGenerator(Generator):
    """Generate with vLLM's continuous batching; a LoRA adapter is applied per request."""

    backend = "vllm"

    def __init__(
        self, llm: Any, tokenizer: Any, *, lora_request: Any = None, info: Mapping[str, Any] | None = None
    ):
        self.model = llm
        self.tokenizer = tokenizer
        self.lora_request = lora_request
        self.info = dict(info or {})

    @classmethod
    def start(
        cls, model: str, *, adapter: str | os.PathLike[str] | None = None, quantize: str | None = None, seed: int = 0
    ) -> VLLMGenerator:
        """vLLM's engine for ``model`` (``load_generator(..., backend="vllm")`` comes here)."""
        check_adapter(adapter)
        if not vllm_available():
            raise GenerationError("--backend vllm needs the vllm package and a CUDA GPU; use --backend hf")
        from vllm import LLM
        from vllm.lora.request import LoRARequest

        t0 = time.perf_counter()
        path = model_source(model)[0].path  # a missing folder or an unreachable hub: one clear message
        kwargs: dict[str, Any] = {"model": path, "seed": seed}
        if quantize == "4bit":
            kwargs["quantization"] = "bitsandbytes"
        lora = None
        if adapter is not None:
            rank = int(json.loads((Path(adapter) / "adapter_config.json").read_text()).get("r", 16))
            kwargs.update(enable_lora=True, max_lora_rank=max(8, rank))
            lora = LoRARequest("adapter", 1, str(Path(adapter).resolve()))
        llm = LLM(**kwargs)
        info = {
            "model": model,
            "model_path": path,
            "adapter": str(adapter) if adapter else None,
            "quantize": quantize or "none",
            "device": "cuda",
            "dtype": str(llm.llm_engine.model_config.dtype),
            "load_seconds": round(time.perf_counter() - t0, 3),
        }
        return cls(llm, llm.get_tokenizer(), lora_request=lora, info=info)

    def eos_token_ids(self) -> list[int]:
        return [int(self.tokenizer.eos_token_id)] if self.tokenizer.eos_token_id is not None else []

    def _decode(self, texts: list[str], generation: GenerationSettings, on_batch: OnBatch | None) -> Generations:
        """All prompts in one call (vLLM schedules its own batches); ``batch_size`` is not used."""
        from vllm import SamplingParams

        greedy = generation.greedy
        params = SamplingParams(
            n=generation.samples,
            temperature=0.0 if greedy else generation.temperature,
            top_p=1.0 if greedy else generation.top_p,
            top_k=-1 if greedy or generation.top_k <= 0 else generation.top_k,
            max_tokens=generation.max_new_tokens,
            seed=generation.seed,
        )
        t0 = time.perf_counter()
        outputs = self.model.generate(texts, params, lora_request=self.lora_request, use_tqdm=False)
        seconds = time.perf_counter() - t0
        out_texts = [[o.text for o in req.outputs] for req in outputs]
        out_tokens = [[len(o.token_ids) for o in req.outputs] for req in outputs]
        if on_batch is not None:
            on_batch(list(range(len(texts))), out_texts)
        return Generations(out_texts, out_tokens, seconds)
