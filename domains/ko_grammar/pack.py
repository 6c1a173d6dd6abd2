"""The ko-grammar pack: Korean orthography correction in the style of 국립국어원 AI 말평 (어문 규범 교정).

A model reads a 선택형 (choose) or 교정형 (correct) question and answers ``"{문장}"이/가 옳다. {이유}``.
Rewards: ``format``, ``exact_match`` and ``rouge1`` (:mod:`.rewards`). Metrics add an optional batched
``bertscore`` and the headline ``final`` = (exact match + mean of the reason metrics present) / 2 — contest-like,
not the official score: the contest also uses BLEURT, which is left out.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from evaluator.domains.base import DomainPack, Metric, PackError, RewardFn, Score, Verdict
from evaluator.domains.ko_grammar.answer import normalize_sentence, parse_answer
from evaluator.domains.ko_grammar.cli import METRIC_OPTIONS
from evaluator.domains.ko_grammar.metrics import bert_scorer, final_score, reason_tokenizer, rouge1
from evaluator.domains.ko_grammar.rewards import build_reward_functions
from evaluator.domains.ko_grammar.sources import load_items

PACKAGE = "evaluator.domains.ko_grammar"
CORPUS_ITEMS = 12
SYSTEM_PROMPT = (
    "당신은 한국어 어문 규범(한글 맞춤법, 표준어 규정, 띄어쓰기, 외래어 표기법) 전문가입니다. "
    "질문의 문장에서 올바른 표기를 고르거나 틀린 부분을 고친 뒤, 반드시 다음 형식으로만 답하세요.\n"
    '"올바른 문장"이 옳다. 이유\n'
    "따옴표 안 문장의 마지막 글자에 받침이 있으면 '이', 없으면 '가'를 씁니다. 이유에는 근거가 되는 규범을 밝히세요."
)
FORMAT = Metric("format", "Share of answers in the \"문장\"이/가 옳다. 이유 format with agreeing 이/가.", binary=True)
EXACT = Metric("exact_match", "Quoted sentence equal to the gold sentence (whitespace-normalised).", binary=True)
ROUGE = Metric("rouge1", "ROUGE-1 F1 of the reason over Korean morphemes (Kiwi; whitespace without it).")
BERT = Metric("bertscore", "BERTScore F1 of the reason with the local encoder given (no baseline rescaling).")
FINAL = Metric(
    "final",
    "Contest-like final: (exact_match + mean of the reason metrics present) / 2; no BLEURT, so not the official score.",
    headline=True,
)


@cache
def load_rubric() -> dict[str, Any]:
    doc = json.loads(resources.files(PACKAGE).joinpath("rubric.json").read_text(encoding="utf-8"))
    if doc.get("default_style") not in doc.get("styles", []):
        raise PackError("ko-grammar rubric: default_style must be one of its styles")
    return doc


def reason_of(text: str, mode: str) -> str:
    """The reason under an extraction mode (strict: only an answer in the format's position)."""
    parsed = parse_answer(text, strict=True)
    if parsed.sentence is None and mode == "flexible":
        parsed = parse_answer(text, strict=False)
    return parsed.reason if parsed.sentence is not None else ""


class KoGrammarPack(DomainPack):
    """Korean orthography correction: 선택형/교정형 questions, answers with the sentence first and a reason."""

    name = "ko-grammar"
    description = "Korean orthography correction (어문 규범 교정): \"문장\"이/가 옳다. 이유 — EM, ROUGE-1, optional BERTScore."
    styles = ("contest",)
    languages = ("ko",)
    data_help = "synthetic, or a contest-layout .jsonl/.json file (or a folder with one per split)"
    primary_reward = "exact_match"
    metric_options = METRIC_OPTIONS

    def check_metric_options(self, options: dict[str, Any]) -> None:
        model = options.get("bertscore_model")
        if options.get("bertscore_num_layers") is not None and model is None:
            raise PackError("--bertscore-layers needs --bertscore-model")
        if model is not None and not Path(model).is_dir():
            raise PackError(f"--bertscore-model {model} is not a folder (a local encoder saved with save_pretrained)")

    def rubric(self) -> dict[str, Any]:
        return copy.deepcopy(load_rubric())

    @property
    def default_style(self) -> str:
        return "contest"

    def reward_functions(self) -> dict[str, RewardFn]:
        return build_reward_functions()

    def dataset(
        self,
        source: str | None,
        split: str,
        *,
        style: str | None = None,
        language: str | None = None,
        limit: int | None = None,
        seed: int = 0,
    ) -> Any:
        """Columns ``id, prompt, question, question_type, answer, style``; ``limit`` keeps the first rows."""
        from datasets import Dataset

        chosen = self.check_style(style)
        self.check_language(language)
        if limit is not None and limit < 1:
            raise PackError(f"limit must be at least 1, got {limit}")
        items = load_items(source, split, seed)
        items = items[:limit] if limit is not None else items
        if not items:
            raise PackError(f"ko-grammar data {source or 'synthetic'} has no items in the {split} split")
        rows = [
            {
                "id": it.id,
                "prompt": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": it.question}],
                "question": it.question,
                "question_type": it.question_type,
                "answer": it.answer,
                "style": chosen,
            }
            for it in items
        ]
        return Dataset.from_list(rows)

    def extract(self, text: str, *, style: str, mode: str = "strict") -> str | None:
        self.check_style(style)
        parsed = parse_answer(text, strict=mode == "strict")
        return None if parsed.sentence is None else normalize_sentence(parsed.sentence)

    def is_correct(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        gold = parse_answer(str(row.get("answer") or "")).sentence
        return extracted is not None and gold is not None and normalize_sentence(extracted) == normalize_sentence(gold)

    def gold_from_field(self, value: Any) -> str:
        """A gold answer must itself follow the format (its sentence and reason are what is compared)."""
        parsed = parse_answer(str(value or ""))
        if not parsed.ok:
            raise ValueError('a ko-grammar answer is "문장"이/가 옳다. 이유 (' + "; ".join(parsed.problems) + ")")
        return str(value)

    def normalize_answer(self, value: Any) -> Any:
        return None if value is None else normalize_sentence(str(value))

    def grade(
        self, completion: str, row: Mapping[str, Any], *, style: str | None = None, extract: str = "strict"
    ) -> Verdict:
        """The shared grader; its Score holds format, exact match, ROUGE-1 and the contest-like final."""
        verdict = super().grade(completion, row, style=style, extract=extract)
        gold = parse_answer(str(row.get("answer") or ""))
        parsed = parse_answer(completion, strict=True)
        values = {
            "format": 1.0 if parsed.ok else 0.0,
            "exact_match": 1.0 if verdict.correct else 0.0,
            "rouge1": rouge1(reason_of(completion, extract), gold.reason),
        }
        values["final"] = final_score(values)
        score = Score(
            value=values,
            answer=verdict.extracted,
            explanation="; ".join(parsed.problems) or None,
            metadata={"question_type": row.get("question_type")},
        )
        details = {"problems": list(parsed.problems), "question_type": row.get("question_type")}
        return Verdict(verdict.extracted, verdict.correct, parsed.ok, verdict.scores, details, score)

    def metrics(self) -> tuple[Metric, ...]:
        reason = (ROUGE, BERT) if self.metric_config.get("bertscore_model") else (ROUGE,)
        return (FINAL, EXACT, *reason, FORMAT)

    def complete_metrics(
        self, rows: Sequence[Mapping[str, Any]], completions: Sequence[str], values: Sequence[dict[str, float]]
    ) -> list[dict[str, float]]:
        """BERTScore of every reason in batches (one forward per batch), then the final score again."""
        out = [dict(v) for v in values]
        path = self.metric_config.get("bertscore_model")
        if not path:
            return out
        scorer = bert_scorer(str(path), self.metric_config.get("bertscore_num_layers"))
        extract = "flexible"
        cands = [reason_of(c, extract) for c in completions]
        refs = [parse_answer(str(r.get("answer") or "")).reason for r in rows]
        for v, f1 in zip(out, scorer.score(cands, refs), strict=True):
            v["bertscore"] = f1
            v["final"] = final_score(v)
        return out

    def metric_notes(self) -> list[str]:
        notes = [
            "final is contest-like, not the official score: the contest also uses BLEURT, which is left out",
            f"rouge1 tokenizes reasons with {reason_tokenizer().name}",
        ]
        if not self.metric_config.get("bertscore_model"):
            notes.append("bertscore skipped: no --bertscore-model given; final uses rouge1 as the reason metric")
        return notes

    def summarize(self, rows: Sequence[Mapping[str, Any]], verdicts: Sequence[Verdict]) -> dict[str, Any]:
        """Exact-match rate per question type (선택형, 교정형, …)."""
        by: dict[str, list[bool]] = {}
        for row, v in zip(rows, verdicts, strict=True):
            by.setdefault(str(row.get("question_type") or "?"), []).append(v.correct)
        return {"exact_match_by_type": {k: {"n": len(x), "rate": round(sum(x) / len(x), 4)} for k, x in by.items()}}

    def reference_solution(self, row: Mapping[str, Any], *, style: str | None = None) -> str | None:
        self.check_style(style or row.get("style"))
        answer = row.get("answer")
        return str(answer) if answer else None

    def tokenizer_corpus(self, limit: int = 400) -> list[str]:
        """The system prompt and one item per rule entry's 교정형 question (offline, deterministic).

        Kept small, like the fund pack's: the tiny tokenizer's vocabulary is shared by every pack, and a large
        Korean corpus would take the merges the other packs' text needs."""
        texts = [SYSTEM_PROMPT]
        fixes = [it for it in load_items("synthetic", "all") if it.id.endswith("-fix")]
        for item in sorted(fixes, key=lambda it: it.id)[: min(limit, CORPUS_ITEMS)]:
            texts += [item.question, item.answer]
        return texts
