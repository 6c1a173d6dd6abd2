"""The contest-like metrics: exact match on the sentence, ROUGE-1 and (optionally) BERTScore on the reason.

ROUGE-1 comes from ``rouge-score`` with our own tokenizer: its default one keeps only ``[a-z0-9]`` and so
scores every Korean text 0. Reasons are split into Kiwi morphemes (``kiwipiepy`` and its model package);
where Kiwi cannot be loaded the fallback is whitespace tokens, and reports say which one was used.

BERTScore is computed here rather than with ``bert-score``: that package picks layers and baseline files by
hub model name, while this pack takes a local encoder folder and an explicit layer and must run one forward
per batch. The computation is the published one (greedy cosine matching of contextual token embeddings,
special tokens left out, F1 of precision and recall), without idf weighting or baseline rescaling — a local
model has no baseline.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cache
from typing import Any

from evaluator.domains.ko_grammar.answer import normalize_sentence

log = logging.getLogger("evaluator.ko_grammar")
BERTSCORE_BATCH = 32


class WhitespaceTokenizer:
    """Whitespace tokens: the documented fallback when Kiwi is not available."""

    name = "whitespace"

    def tokenize(self, text: str) -> list[str]:
        return text.split()


class KiwiTokenizer:
    """Kiwi morphemes (surface forms), so '규범에' and '규범을' share the morpheme '규범'."""

    name = "kiwi"

    def __init__(self) -> None:
        from kiwipiepy import Kiwi

        self.kiwi = Kiwi()

    def tokenize(self, text: str) -> list[str]:
        return [token.form for token in self.kiwi.tokenize(text)]


@cache
def reason_tokenizer(prefer: str = "kiwi") -> Any:
    """Kiwi when it loads (the default), else whitespace; ``prefer="whitespace"`` forces the fallback."""
    if prefer == "kiwi":
        try:
            return KiwiTokenizer()
        except Exception as exc:  # no kiwipiepy or no model package: fall back, and say so in reports
            log.warning("Kiwi is not available (%s); ROUGE-1 uses whitespace tokens", exc)
    return WhitespaceTokenizer()


@cache
def _scorer(prefer: str) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], tokenizer=reason_tokenizer(prefer))


def exact_match(predicted: str | None, gold: str | None) -> float:
    """1.0 when the two sentences are equal after whitespace normalisation (spacing inside still counts)."""
    if predicted is None or gold is None:
        return 0.0
    return 1.0 if normalize_sentence(predicted) == normalize_sentence(gold) else 0.0


def rouge1(predicted: str | None, gold: str | None, prefer: str = "kiwi") -> float:
    """ROUGE-1 F1 of two reasons over Korean tokens; 0.0 when either is empty."""
    if not predicted or not gold or not predicted.strip() or not gold.strip():
        return 0.0
    return float(_scorer(prefer).score(gold, predicted)["rouge1"].fmeasure)


def final_score(values: dict[str, float]) -> float:
    """The contest-like final: (exact match + mean of the reason metrics present) / 2."""
    reason = [values[k] for k in ("rouge1", "bertscore") if k in values]
    return (values.get("exact_match", 0.0) + (sum(reason) / len(reason) if reason else 0.0)) / 2


class BertScorer:
    """BERTScore F1 with a local encoder at one explicit layer, one forward per batch of pairs."""

    def __init__(self, path: str, num_layers: int | None = None, batch_size: int = BERTSCORE_BATCH) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path)
        self.model.eval()
        depth = int(getattr(self.model.config, "num_hidden_layers", 0) or 0)
        self.num_layers = depth if num_layers is None else int(num_layers)
        if not 1 <= self.num_layers <= depth:
            raise ValueError(f"--bertscore-layers must be between 1 and {depth} for {path}, not {num_layers}")
        self.batch_size = batch_size
        self.forwards = 0

    def _embed(self, texts: list[str]) -> tuple[Any, Any]:
        import torch

        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt",
                             return_special_tokens_mask=True)
        special = enc.pop("special_tokens_mask")
        with torch.no_grad():
            out = self.model(**enc, output_hidden_states=True)
        self.forwards += 1
        hidden = torch.nn.functional.normalize(out.hidden_states[self.num_layers], dim=-1)
        mask = enc["attention_mask"].bool() & ~special.bool()
        return hidden, mask

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """F1 per pair; an empty candidate or reference scores 0."""
        import torch

        out: list[float] = []
        for start in range(0, len(candidates), self.batch_size):
            cands = [c or "" for c in candidates[start : start + self.batch_size]]
            refs = [r or "" for r in references[start : start + self.batch_size]]
            hidden, mask = self._embed(cands + refs)  # one forward for the whole batch of pairs
            n = len(cands)
            for i in range(n):
                c, r = hidden[i][mask[i]], hidden[n + i][mask[n + i]]
                if not cands[i].strip() or not refs[i].strip() or len(c) == 0 or len(r) == 0:
                    out.append(0.0)
                    continue
                sim = c @ r.T
                precision = sim.max(dim=1).values.mean()
                recall = sim.max(dim=0).values.mean()
                f1 = 2 * precision * recall / (precision + recall) if float(precision + recall) > 0 else torch.tensor(0.0)
                out.append(float(f1))
        return out


@cache
def bert_scorer(path: str, num_layers: int | None) -> BertScorer:
    return BertScorer(path, num_layers)
