"""Which model generates and how completions are decoded: plain values for the evaluation harness, its backends,
training's held-out checks and every command that runs a model.

``GenerationSettings`` and ``ModelRef`` are declared once, with each field's help text, and cross every boundary
as they are: ``eval`` and the packs' own commands build their flags from them, the harness hands them to the
backend (Hugging Face or vLLM), and a report records their resolved form. They live at the bottom (no torch, no
project import) so packs can name them too.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

BACKENDS = ("hf", "vllm")
"""Generation backends: Hugging Face ``generate`` (anywhere) and vLLM (CUDA with the vllm extra)."""


def _g(default: Any, help: str) -> Any:
    """A generation field: its default and the help text its command-line flag shows."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class GenerationSettings:
    """Samples per prompt and how each is decoded; greedy when ``temperature`` is 0."""

    samples: int = _g(1, "Samples per prompt (K); pass@k and maj@k need K > 1.")
    temperature: float = _g(0.0, "0 = greedy; sampling needs > 0.")
    top_p: float = _g(1.0, "Nucleus sampling (when temperature > 0).")
    top_k: int = _g(0, "Top-k sampling, 0 = off (when temperature > 0).")
    batch_size: int = _g(16, "Prompts per generate call.")
    max_new_tokens: int = _g(256, "Longest completion, in tokens.")
    seed: int = _g(0, "Seed for sampling and bootstrap intervals.")

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0

    def replace(self, **changes: Any) -> GenerationSettings:
        return dataclasses.replace(self, **changes)

    def check(self) -> None:
        """Refuse settings that cannot mean what the user wants, before any model is loaded."""
        n = self.samples
        if n < 1:
            raise ValueError(f"samples per prompt must be at least 1, got {n}")
        if n > 1 and self.greedy:
            raise ValueError(
                f"{n} samples per prompt with greedy decoding would be {n} copies of one answer; "
                "set a temperature above 0 (e.g. 0.6) to sample"
            )
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")
        if self.batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {self.batch_size}")

    def record(self) -> dict[str, Any]:
        """The settings as decoding uses them (greedy zeroes the sampling knobs), in a report's order."""
        greedy = self.greedy
        return {
            "do_sample": not greedy,
            "samples": self.samples,
            "temperature": 0.0 if greedy else float(self.temperature),
            "top_p": 1.0 if greedy else float(self.top_p),
            "top_k": 0 if greedy else int(self.top_k),
            "max_new_tokens": int(self.max_new_tokens),
            "batch_size": int(self.batch_size),
            "seed": int(self.seed),
        }


@dataclass(frozen=True)
class ModelRef:
    """A model to load by name (``tiny``, a preset, a hub id or a local path), with a LoRA adapter and how."""

    model: str = field(metadata={"help": "Preset, tiny, hub id or local path."})
    adapter: str | os.PathLike[str] | None = _g(None, "LoRA adapter folder (e.g. RUN/final).")
    quantize: str | None = _g(None, "4bit or none (default: 4bit on CUDA, none on CPU).")
    device: str | None = _g(None, "Device to load on (default: CUDA when available).")
    backend: str = _g("hf", "hf (anywhere) or vllm (CUDA with vllm installed).")

    def check(self) -> None:
        """A bad backend fails now, before any model loads (whether the model exists is the loader's to say)."""
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")
