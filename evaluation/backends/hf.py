"""The Hugging Face backend: load a model once, render chat prompts, decode many at a time with ``generate``.

``Generator`` wraps a model and tokenizer that are already in memory (a freshly trained policy can be
evaluated without reloading) or loads one by name (``tiny``, a preset, a hub id or a local path),
optionally in 4-bit and with a LoRA adapter. Prompts are sorted by length and left-padded into batches,
one ``generate`` call per batch; results come back in the caller's order.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluator.core.generation import GenerationSettings
from evaluator.evaluation.backends.protocol import GenerationError, Generations, OnBatch, Prompt
from evaluator.models.chat_format import ChatFormat, refuses_system_role
from evaluator.models.loading import disable_cpu_4bit_repack, load_model, resolve_model_path


def adapter_tokenizer_dir(adapter: str | os.PathLike[str] | None) -> Path | None:
    """The adapter folder when it carries its own tokenizer (the trainer saves one beside the weights)."""
    if adapter is None:
        return None
    folder = Path(adapter)
    return folder if (folder / "tokenizer_config.json").exists() else None


def check_adapter(adapter: str | os.PathLike[str] | None) -> None:
    if adapter is not None and not (Path(adapter) / "adapter_config.json").exists():
        raise GenerationError(f"{adapter} is not a LoRA adapter folder (no adapter_config.json in it)")


class Generator:
    """Generate completions with a Hugging Face model; reusable across many ``generate`` calls."""

    backend = "hf"

    def __init__(self, model: Any, tokenizer: Any, *, info: Mapping[str, Any] | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        if getattr(tokenizer, "pad_token", None) is None:
            tokenizer.pad_token = tokenizer.eos_token
        # Before any eval-mode forward: keeps bitsandbytes from repacking 4-bit weights on CPU.
        if _has_4bit_layers(model):
            disable_cpu_4bit_repack(model)
        self.info: dict[str, Any] = dict(info or {})

    # ---- loading ------------------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        model: str,
        *,
        adapter: str | os.PathLike[str] | None = None,
        quantize: str | None = None,
        device: str | None = None,
    ) -> Generator:
        """Load ``model`` (and a LoRA ``adapter``) for inference (:func:`~evaluator.evaluation.backends.load_generator`
        chooses between this and vLLM)."""
        check_adapter(adapter)
        t0 = time.perf_counter()
        mdl, tok, precision = load_model(model, quantize=quantize, device=device, for_training=False)
        if adapter is not None:
            from peft import PeftModel

            mdl = PeftModel.from_pretrained(mdl, str(adapter))
            tok_dir = adapter_tokenizer_dir(adapter)
            if tok_dir is not None:
                from transformers import AutoTokenizer

                tok = AutoTokenizer.from_pretrained(str(tok_dir))
        mdl.eval()  # after load_model applied the 4-bit CPU workaround
        info = {
            "model": model,
            "model_path": resolve_model_path(model)[0],
            "adapter": str(adapter) if adapter else None,
            "quantize": "4bit" if precision.quantize_4bit else "none",
            "device": precision.device,
            "dtype": precision.dtype_name,
            "load_seconds": round(time.perf_counter() - t0, 3),
        }
        return cls(mdl, tok, info=info)

    # ---- prompts ------------------------------------------------------------------------------
    def chat_format(self, chat_template_kwargs: Mapping[str, Any] | None = None) -> ChatFormat:
        """How this tokenizer renders prompts: system folding (decided by its template) and these arguments."""
        return ChatFormat(refuses_system_role(self.tokenizer), dict(chat_template_kwargs or {}))

    def render(self, prompt: Prompt, chat_template_kwargs: Mapping[str, Any] | None = None) -> str:
        """The exact text the model sees: the chat template with the assistant turn opened.

        A template that refuses the system role gets the system text folded into the first user turn.
        """
        return self.chat_format(chat_template_kwargs).render(self.tokenizer, prompt)

    def eos_token_ids(self) -> list[int]:
        """Every token that ends a completion: the model's generation eos ids plus the tokenizer's."""
        ids: list[int] = []
        gen_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        for value in (gen_eos, self.tokenizer.eos_token_id):
            for tid in value if isinstance(value, list | tuple) else [value]:
                if tid is not None and int(tid) not in ids:
                    ids.append(int(tid))
        return ids

    def config(
        self, generation: GenerationSettings, chat_template_kwargs: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The resolved generation settings, as a report records them."""
        return {
            "backend": self.backend,
            **generation.record(),
            "padding_side": "left",
            "eos_token_ids": self.eos_token_ids(),
            "pad_token_id": self.tokenizer.pad_token_id,
            **self.chat_format(chat_template_kwargs).record(),
        }

    # ---- generation ---------------------------------------------------------------------------
    def generate(
        self,
        prompts: Sequence[Prompt],
        generation: GenerationSettings = GenerationSettings(),
        *,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        on_batch: OnBatch | None = None,
    ) -> Generations:
        """``generation.samples`` completions for every prompt; greedy when its temperature is 0.

        A batch that fails (e.g. out of memory) is retried one prompt at a time; a prompt that still
        fails gets empty completions and an entry in ``errors`` instead of ending the run.
        ``on_batch(indices, texts)`` sees each finished batch (for progress or partial saves).
        """
        generation.check()
        texts = [self.render(p, chat_template_kwargs) for p in prompts]
        return self._decode(texts, generation, on_batch)

    def _decode(self, texts: list[str], generation: GenerationSettings, on_batch: OnBatch | None) -> Generations:
        """Rendered prompts → completions, longest prompts first, ``generation.batch_size`` at a time."""
        import torch

        lengths = [len(self.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: (-lengths[i], i))
        out_texts: list[list[str]] = [[] for _ in texts]
        out_tokens: list[list[int]] = [[] for _ in texts]
        errors: dict[int, str] = {}
        gen_kwargs = self._gen_kwargs(generation)

        was_training = bool(getattr(self.model, "training", False))
        old_side = getattr(self.tokenizer, "padding_side", "right")
        self.tokenizer.padding_side = "left"
        self.model.eval()
        devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
        try:
            with torch.random.fork_rng(devices=devices):  # sampling leaves the caller's random state alone
                torch.manual_seed(generation.seed)
                t0 = time.perf_counter()
                size = generation.batch_size
                for start in range(0, len(order), size):
                    batch = order[start : start + size]
                    for idx, (done, counts) in self._run_batch(batch, texts, gen_kwargs, errors).items():
                        out_texts[idx], out_tokens[idx] = done, counts
                    if on_batch is not None:
                        on_batch(batch, [out_texts[i] for i in batch])
                seconds = time.perf_counter() - t0
        finally:
            self.tokenizer.padding_side = old_side
            if was_training:
                self.model.train()
        return Generations(out_texts, out_tokens, seconds, errors)

    def _gen_kwargs(self, generation: GenerationSettings) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_new_tokens": generation.max_new_tokens,
            "num_return_sequences": generation.samples,
            "eos_token_id": self.eos_token_ids(),
            "pad_token_id": self.tokenizer.pad_token_id,
            "use_cache": True,
        }
        if generation.greedy:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            kwargs.update(
                do_sample=True,
                temperature=float(generation.temperature),
                top_p=float(generation.top_p),
                top_k=int(generation.top_k),
            )
        return kwargs

    def _run_batch(
        self, batch: list[int], texts: list[str], gen_kwargs: dict[str, Any], errors: dict[int, str]
    ) -> dict[int, tuple[list[str], list[int]]]:
        try:
            return self._generate_batch(batch, texts, gen_kwargs)
        except RuntimeError as exc:
            _free_cuda()
            if len(batch) == 1:
                errors[batch[0]] = f"generation failed: {exc}"
                n = int(gen_kwargs["num_return_sequences"])
                return {batch[0]: ([""] * n, [0] * n)}
            results: dict[int, tuple[list[str], list[int]]] = {}
            for idx in batch:
                results.update(self._run_batch([idx], texts, gen_kwargs, errors))
            return results

    def _generate_batch(
        self, batch: list[int], texts: list[str], gen_kwargs: dict[str, Any]
    ) -> dict[int, tuple[list[str], list[int]]]:
        import torch

        enc = self.tokenizer(
            [texts[i] for i in batch], return_tensors="pt", padding=True, add_special_tokens=False
        )
        device = _model_device(self.model)
        enc = {k: v.to(device) for k, v in enc.items()}
        with torch.inference_mode():
            out = self.model.generate(**enc, **gen_kwargs)
        new = out[:, enc["input_ids"].shape[1] :].tolist()
        n = int(gen_kwargs["num_return_sequences"])
        eos = set(gen_kwargs["eos_token_id"])
        results: dict[int, tuple[list[str], list[int]]] = {}
        for pos, idx in enumerate(batch):
            done, counts = [], []
            for row in new[pos * n : (pos + 1) * n]:
                cut = next((j for j, t in enumerate(row) if t in eos), None)
                kept = row if cut is None else row[:cut]
                done.append(self.tokenizer.decode(kept, skip_special_tokens=True))
                counts.append(len(row) if cut is None else cut + 1)
            results[idx] = (done, counts)
        return results


def _has_4bit_layers(model: Any) -> bool:
    """Whether any layer is a bitsandbytes ``Linear4bit`` (checked by name: importing bnb costs seconds)."""
    modules = getattr(model, "modules", None)
    return callable(modules) and any(type(m).__name__ == "Linear4bit" for m in modules())


def _model_device(model: Any) -> Any:
    device = getattr(model, "device", None)
    if device is not None:
        return device
    return next(model.parameters()).device


def _free_cuda() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass
