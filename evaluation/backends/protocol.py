"""What every generation backend is and returns: the protocol the harness codes against, and its plain types.

At the bottom of the backends folder, so the harness, the Hugging Face backend and the vLLM backend all import
it and none of them imports another to learn the shape of a result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluator.core.generation import GenerationSettings
from evaluator.models.chat_format import ChatFormat

Prompt = Sequence[Mapping[str, Any]] | str
"""A conversational prompt (chat messages) or an already rendered prompt string."""

OnBatch = Callable[[list[int], list[list[str]]], None]
"""Hears each finished batch: the prompts' indices and their completions (progress, partial saves)."""


class GenerationError(RuntimeError):
    """Generation could not start (bad backend, missing adapter, no GPU for vLLM …)."""


@dataclass
class Generations:
    """Completions per prompt (``texts[i]`` holds the samples of prompt ``i``) and what they cost."""

    texts: list[list[str]]
    n_tokens: list[list[int]]
    seconds: float
    errors: dict[int, str] = field(default_factory=dict)
    """Prompt index → why it produced no completion (its samples are empty strings)."""

    @property
    def total_tokens(self) -> int:
        return sum(sum(row) for row in self.n_tokens)

    @property
    def tokens_per_second(self) -> float | None:
        return self.total_tokens / self.seconds if self.seconds > 0 else None


class Backend(Protocol):
    """A loaded model that renders prompts and decodes them in batches (``hf`` or ``vllm``)."""

    backend: str
    info: dict[str, Any]
    tokenizer: Any

    def chat_format(self, chat_template_kwargs: Mapping[str, Any] | None = None) -> ChatFormat: ...

    def render(self, prompt: Prompt, chat_template_kwargs: Mapping[str, Any] | None = None) -> str: ...

    def config(
        self, generation: GenerationSettings, chat_template_kwargs: Mapping[str, Any] | None = None
    ) -> dict[str, Any]: ...

    def generate(
        self,
        prompts: Sequence[Prompt],
        generation: GenerationSettings = ...,
        *,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        on_batch: OnBatch | None = None,
    ) -> Generations: ...
