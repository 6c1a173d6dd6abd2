"""A judge model loaded beside the student (same device, optionally 4-bit), judging a group per batched generate.

Generation is greedy unless a temperature is set, without gradients, left-padded, through the judge
tokenizer's chat template, rendered by the shared rule (:mod:`evaluator.models.chat_format`): Qwen3's thinking is
switched off (a judge must answer within its token budget) and a template that refuses the system role
gets the judge's instructions folded into the user turn.
``prefill`` starts the answer with ``{"score": `` and lets the first generated token be only a digit of
the scale, the next only the end of the number: with small judges this turns "no parsable answer" into
a score read from the model's own next-token preference among the scale's digits; the feedback follows.
"""

from __future__ import annotations

import time
from typing import Any

from evaluator.models.chat_format import chat_format
from evaluator.models.loading import load_model
from evaluator.training.judges.config import JudgeSpec
from evaluator.training.judges.outcome import JudgeOutcome
from evaluator.training.judges.parse import JudgeParseError, parse_judgement
from evaluator.training.judges.prompt import PREFILL, SCALE, reask_messages


def single_token_ids(tokenizer: Any, texts: list[str]) -> list[int]:
    """Ids of those ``texts`` that the tokenizer encodes as exactly one token."""
    ids: list[int] = []
    for text in texts:
        enc = tokenizer.encode(text, add_special_tokens=False)
        if len(enc) == 1 and int(enc[0]) not in ids:
            ids.append(int(enc[0]))
    return ids


def scale_token_ids(tokenizer: Any) -> list[int]:
    """Token ids that are exactly one digit of the scale (those a prefilled answer may start with)."""
    return single_token_ids(tokenizer, [str(d) for d in range(SCALE[0], SCALE[1] + 1)])


def module_bytes(model: Any) -> int:
    """Bytes held by a model's parameters and buffers (4-bit weights count as their packed bytes)."""
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    return int(total + sum(b.numel() * b.element_size() for b in model.buffers()))


def _score_first(steps: list[list[int]], prompt_len: int) -> Any:
    """A logits processor that restricts generated token ``k`` to ``steps[k]`` and leaves later ones free."""
    import torch
    from transformers import LogitsProcessor

    class ScoreFirst(LogitsProcessor):
        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
            k = input_ids.shape[1] - prompt_len
            if k >= len(steps) or not steps[k]:
                return scores
            mask = torch.full_like(scores, float("-inf"))
            mask[:, steps[k]] = 0.0
            return scores + mask

    return ScoreFirst()


class LocalJudge:
    """A transformers causal LM used as judge; ``judge`` never raises (failures become outcome errors)."""

    def __init__(self, spec: JudgeSpec, *, model: Any = None, tokenizer: Any = None) -> None:
        self.spec = spec
        self.model_id = spec.model
        if model is None or tokenizer is None:
            model, tokenizer, _ = load_model(
                spec.model, quantize=spec.quantize, for_training=False, role="judge model", flag="the judge's model:"
            )
        model.eval()
        model.requires_grad_(False)
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.model, self.tokenizer = model, tokenizer
        self.chat_format = chat_format(tokenizer)  # a judge has no style: one that does not think
        self.memory_bytes = module_bytes(model)
        self.max_positions = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        self._constraint: list[list[int]] = []
        if spec.prefill:  # one digit of the scale, then the end of the number
            digits, after = scale_token_ids(tokenizer), single_token_ids(tokenizer, [",", "}", ", ", " }"])
            self._constraint = [digits, after] if digits else []
        self.batches = 0
        """Generate calls made (a test and a run summary can see that a group was judged in batches)."""

    def render(self, messages: list[dict[str, str]]) -> str:
        """The prompt text the judge sees, ending with the assistant turn (and the prefill when on)."""
        text = self.chat_format.render(self.tokenizer, messages)
        return text + (PREFILL if self.spec.prefill else "")

    def judge(self, prompts: list[list[dict[str, str]]]) -> list[JudgeOutcome]:
        """One outcome per prompt: generate in batches, then re-ask only the unreadable ones (bounded)."""
        outcomes = [JudgeOutcome() for _ in prompts]
        convos = list(prompts)
        pending = list(range(len(prompts)))
        for round_ in range(self.spec.max_parse_retries + 1):
            if not pending:
                break
            if round_:
                for i in pending:
                    outcomes[i].retries += 1
            replies = self._generate([convos[i] for i in pending], [outcomes[i] for i in pending])
            still: list[int] = []
            for i, text in zip(pending, replies, strict=True):
                out = outcomes[i]
                if text is None:  # generation itself failed: error already recorded, no re-ask
                    continue
                out.raw_output = text
                try:
                    out.judgement = parse_judgement(text)
                    out.error = None
                except JudgeParseError as exc:
                    out.parse_errors.append(str(exc))
                    out.error = (
                        f"unreadable judgement after {round_ + 1} repl{'y' if round_ == 0 else 'ies'}: {exc}"
                    )
                    convos[i] = reask_messages(convos[i], text, str(exc))
                    still.append(i)
            pending = still
        return outcomes

    def _generate(self, convos: list[list[dict[str, str]]], outs: list[JudgeOutcome]) -> list[str | None]:
        """Reply text per conversation (None where it could not be generated), ``batch_size`` at a time."""
        replies: list[str | None] = [None] * len(convos)
        texts = [self.render(c) for c in convos]
        runnable: list[int] = []
        lengths: dict[int, int] = {}
        for i, text in enumerate(texts):
            n = lengths[i] = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            if self.max_positions and n + self.spec.max_new_tokens > self.max_positions:
                outs[i].error = (
                    f"judge prompt is {n} tokens; with max_new_tokens={self.spec.max_new_tokens} it "
                    f"exceeds the judge model's {self.max_positions} positions"
                )
            else:
                runnable.append(i)
        size = self.spec.batch_size
        for start in range(0, len(runnable), size):
            chunk = runnable[start : start + size]
            t0 = time.perf_counter()
            try:
                generated = self._generate_batch([texts[i] for i in chunk])
            except Exception as exc:  # out of memory, a bad template…: this batch fails, training goes on
                self._free_cuda()
                generated = [None] * len(chunk)
                for i in chunk:
                    outs[i].error = f"judge generation failed: {type(exc).__name__}: {exc}"[:500]
            elapsed = time.perf_counter() - t0
            for i, text in zip(chunk, generated, strict=True):
                outs[i].attempts += 1
                outs[i].latency_s += elapsed
                if text is not None:  # prompt + reply tokens; nothing leaves the machine (bytes_sent stays 0)
                    outs[i].tokens += lengths[i] + len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
                replies[i] = (PREFILL + text) if (text is not None and self.spec.prefill) else text
        return replies

    def _generate_batch(self, texts: list[str]) -> list[str]:
        import torch

        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(self.model.device) for k, v in enc.items()}
        prompt_len = enc["input_ids"].shape[1]
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.spec.max_new_tokens,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if self.spec.temperature > 0:
            kwargs.update(do_sample=True, temperature=self.spec.temperature)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if self._constraint:
            kwargs["logits_processor"] = [_score_first(self._constraint, prompt_len)]
        self.batches += 1
        with torch.no_grad():
            out = self.model.generate(**enc, **kwargs)
        return self.tokenizer.batch_decode(out[:, prompt_len:], skip_special_tokens=True)

    @staticmethod
    def _free_cuda() -> None:
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except Exception:
            pass

    def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        self.model = None
        self._free_cuda()
