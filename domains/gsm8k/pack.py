"""The GSM8K domain pack: grade-school math word problems with a numeric answer in a fixed format.

The same reading of a completion (:mod:`.extract`) drives the trainer's ``correctness`` reward and the
evaluation harness's verdict, so a reward and a report can never disagree.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from evaluator.core.schemas import SchemaError, load_schema, validate_or_raise
from evaluator.domains.base import DomainPack, PackError, RewardFn, Verdict
from evaluator.domains.gsm8k.extract import extract_answer
from evaluator.domains.gsm8k.numbers import answers_match, gold_text, parse_gold, strip_annotations
from evaluator.domains.gsm8k.rewards import build_reward_functions
from evaluator.domains.gsm8k.sources import load_rows
from evaluator.domains.gsm8k.styles import LANGUAGES, STYLE_NAMES, get_style

PACKAGE = "evaluator.domains.gsm8k"

__all__ = ["GSM8KPack", "load_rubric", "parse_gold", "validate_rubric"]


def validate_rubric(doc: Any) -> dict[str, Any]:
    """Check a rubric against ``rubric.schema.json`` and the rules a schema cannot state; return it."""
    validate_or_raise(doc, load_schema(PACKAGE, "rubric.schema.json"), "gsm8k rubric")
    if doc["default_style"] not in doc["styles"]:
        raise SchemaError(
            "gsm8k rubric", [f"at default_style: {doc['default_style']!r} is not one of its styles"]
        )
    return doc


@cache
def load_rubric() -> dict[str, Any]:
    text = resources.files(PACKAGE).joinpath("rubric.json").read_text(encoding="utf-8")
    return validate_rubric(json.loads(text))


class GSM8KPack(DomainPack):
    name = "gsm8k"
    description = "Grade-school math word problems (GSM8K): one numeric answer in a fixed output format."
    styles = STYLE_NAMES
    primary_reward = "correctness"
    thinking_styles = ("qwen3-think",)
    languages = LANGUAGES
    data_help = "synthetic[:steps=1-3], a hub id, a JSONL file or folder"

    def rubric(self) -> dict[str, Any]:
        return copy.deepcopy(load_rubric())

    @property
    def default_style(self) -> str:
        return str(load_rubric()["default_style"])  # read often (every grade); skip the copy

    def reward_functions(self) -> dict[str, RewardFn]:
        return build_reward_functions(self.default_style)

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
        """Columns ``id, prompt, question, answer, solution, style``; ``limit`` keeps the first rows.

        ``seed`` only matters for synthetic problems; real data keeps its published order.
        """
        from datasets import Dataset

        chosen = self.check_style(style)
        language = self.check_language(language)
        system = get_style(chosen).system_prompt(language)
        rows = [
            {
                "id": raw.id,
                "prompt": [{"role": "system", "content": system}, {"role": "user", "content": raw.question}],
                "question": raw.question,
                "answer": raw.gold,
                "solution": raw.solution,
                "style": chosen,
            }
            for raw in load_rows(source, split, limit=limit, seed=seed)
        ]
        if not rows:
            raise PackError(f"GSM8K source {source!r} ({split}) has no rows")
        return Dataset.from_list(rows)

    def extract(self, text: str, *, style: str, mode: str = "strict") -> str | None:
        return extract_answer(text, self.check_style(style), mode)

    def is_correct(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        return answers_match(extracted, gold_text(row.get("answer")))

    def gold_from_field(self, value: Any) -> str:
        """The gold number of an answer field (``… #### N`` or a bare number); ValueError when it has none."""
        return parse_gold(str(value))

    def reference_solution(self, row: Mapping[str, Any], *, style: str | None = None) -> str | None:
        if not row.get("solution") or row.get("answer") in (None, ""):
            return None
        # Rows from the loaders are already clean; rows built by hand may still carry <<a*b=c>> scratch work.
        solution = strip_annotations(str(row["solution"]))
        return get_style(self.check_style(style or row.get("style"))).render(solution, str(row["answer"]))

    def judge_context(self, row: Mapping[str, Any]) -> dict[str, str]:
        task = str(row.get("question") or super().judge_context(row)["task"])
        solution = str(row.get("solution") or "").strip()
        final = f"Final answer: {row.get('answer', '')}"
        return {"task": task, "reference": f"{solution}\n{final}" if solution else final}

    def summarize(self, rows: Sequence[Mapping[str, Any]], verdicts: Sequence[Verdict]) -> dict[str, Any]:
        """How often the model gave no readable answer at all (the harness reports accuracy itself)."""
        if not verdicts:
            return {}
        missing = sum(v.extracted is None for v in verdicts)
        return {"no_answer": missing, "no_answer_rate": round(missing / len(verdicts), 4)}

    def tokenizer_corpus(self, limit: int = 400) -> list[str]:
        """Offline text for the tiny tokenizer: synthetic problems in every style and both languages' prompts."""
        texts = [get_style(s).system_prompt(lang) for s in STYLE_NAMES for lang in LANGUAGES]
        for raw in load_rows("synthetic", "train", limit=limit, seed=0):
            texts += [raw.question, raw.answer_field]
            texts += [get_style(s).render(raw.solution, raw.gold) for s in STYLE_NAMES]
        return texts
