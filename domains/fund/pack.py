"""The fund domain pack: its rubric is the rating methodology the deterministic engine grades with.

The GRPO task: a model reads one fund's figures, its peer context and the rubric (a Korean prompt) and
answers with a JSON evaluation (grade, score, criterion judgements, a Korean rationale citing figures);
four rewards verify it against the engine. Data: :mod:`.task`; prompts: :mod:`.prompts`; reading an
answer: :mod:`.answer`; checks: :mod:`.verify`; rewards: :mod:`.rewards`; the ideal answer: :mod:`.reference`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from evaluator.domains.base import DomainPack, Metric, PackError, PackPlot, RewardFn, Verdict, completion_text
from evaluator.domains.fund.history import looks_like_backtest, plan_backtest
from evaluator.domains.fund.reports import looks_like_batch, plan_fund_batch
from evaluator.domains.fund.rubric import default_rubric
from evaluator.domains.fund.task import (
    METRICS,
    SYSTEM_PROMPT,
    build_reward_functions,
    extract_grade,
    fund_score,
    gold_grade,
    load_facts,
    load_rows,
    read_answer,
    reference_json,
    scale_grades,
    scale_problems,
)

PACKAGE = "evaluator.domains.fund"
LANGUAGES = ("ko", "en")


@cache
def builtin_judge_levels() -> dict[str, str]:
    """Korean/English descriptions of the 0–5 judge scale shipped with the pack (``judge_levels.json``)."""
    text = resources.files(PACKAGE).joinpath("judge_levels.json").read_text(encoding="utf-8")
    levels = json.loads(text)
    if sorted(levels) != [str(i) for i in range(6)]:
        raise ValueError("judge_levels.json must describe levels 0 to 5")
    return {str(k): str(v) for k, v in levels.items()}


class FundPack(DomainPack):
    """Korean fund evaluation: peer groups by 유형, 1등급 (best) … 5등급, JSON evaluations."""

    name = "fund"
    description = "Korean fund evaluation: a methodology rubric, a vectorised rating engine (1등급 best … 5등급), JSON reports."
    styles = ("json",)
    primary_reward = "grade_accuracy"
    languages = LANGUAGES
    data_help = "sample[?funds=N&seed=S] or a NAV file"

    def rubric(self) -> dict[str, Any]:
        """The validated fund rubric, the same one ``evaluate_universe`` uses by default."""
        return default_rubric()

    @property
    def default_style(self) -> str:
        return "json"  # read on every grade; skip copying the rubric

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
        """Columns ``id, prompt, style, fund_code, fund_name, fund_type, grade, answer, score,
        peer_percentile, facts`` (facts: the engine's figures as a JSON string).

        Prompts are Korean whatever ``language`` says (the product's evaluations are Korean). ``seed``
        does not change the data: the sample universe's seed is part of ``source`` (``sample?seed=7``),
        so training and evaluation see the same funds.
        """
        from datasets import Dataset

        chosen = self.check_style(style)
        self.check_language(language)  # the prompts are Korean in either case
        if limit is not None and limit < 1:
            raise PackError(f"limit must be at least 1, got {limit}")
        rows = load_rows(source, split)
        rows = rows[:limit] if limit is not None else rows
        for row in rows:
            row["style"] = chosen
        return Dataset.from_list(rows)

    def extract(self, text: str, *, style: str, mode: str = "strict") -> str | None:
        self.check_style(style)
        grade = extract_grade(text, mode)
        return None if grade is None else str(grade)

    def normalize_answer(self, value: Any) -> str | None:
        return None if value is None else str(value).strip()

    def is_correct(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        gold = gold_grade(row.get("grade"), row.get("answer"))
        if extracted is None or gold is None:
            return False
        try:
            return int(extracted) == gold
        except (TypeError, ValueError):
            return False

    def gold_from_field(self, value: Any) -> str:
        """The grade of an answer field in a predictions file (``3`` or ``"3등급"``)."""
        grade = gold_grade(value)
        if grade is None:
            raise ValueError("a fund answer is a grade from 1 to 10 (3등급, 가3등급 or ★★★)")
        return str(grade)

    def grade(
        self, completion: str, row: Mapping[str, Any], *, style: str | None = None, extract: str = "strict"
    ) -> Verdict:
        """The shared grader, plus what an analyst needs to read the verdict: schema validity and problems."""
        verdict = super().grade(completion, row, style=style, extract=extract)
        answer = read_answer(completion_text(completion))
        facts = row.get("facts")
        beyond = scale_problems(answer.obj, scale_grades(load_facts(facts)) if isinstance(facts, str) else 5)
        details = {
            "schema_valid": answer.schema_valid and not beyond,
            "framing": answer.framing,
            "engine_grade": gold_grade(row.get("grade"), row.get("answer")),
            "stated_grade": answer.grade("flexible"),
            "problems": [*answer.problems, *beyond][:5],
        }
        partial = Verdict(verdict.extracted, verdict.correct, verdict.format_ok, verdict.scores, details)
        score = fund_score(partial, details["engine_grade"], self.default_weights(), answer.problems)
        return Verdict(verdict.extracted, verdict.correct, verdict.format_ok, verdict.scores, details, score)

    def metrics(self) -> tuple[Metric, ...]:
        """Exact grade (headline), within-one, grade error, schema validity, reasoning, total reward
        (:mod:`.grading`): each gets a bootstrap CI in reports and a paired CI in ``compare``."""
        return METRICS

    def summarize(self, rows: Sequence[Mapping[str, Any]], verdicts: Sequence[Verdict]) -> dict[str, Any]:
        """Schema-valid rate, exact and within-one-band grade accuracy, mean absolute grade error.

        Unreadable answers count as wrong in the accuracies; the mean error is over readable answers
        (``answered`` says how many there were; null when none).
        """
        if not verdicts:
            return {}
        n = len(verdicts)
        errors: list[int] = []
        for row, v in zip(rows, verdicts, strict=True):
            gold = gold_grade(row.get("grade"), row.get("answer"))
            if v.extracted is not None and gold is not None:
                errors.append(abs(int(v.extracted) - gold))
        valid = sum(bool(v.details.get("schema_valid")) for v in verdicts)
        return {
            "schema_valid_rate": round(valid / n, 4),
            "grade_exact": round(sum(e == 0 for e in errors) / n, 4),
            "within_one_band": round(sum(e <= 1 for e in errors) / n, 4),
            "mean_abs_grade_error": round(sum(errors) / len(errors), 4) if errors else None,
            "answered": len(errors),
            "answered_rate": round(len(errors) / n, 4),
        }

    def reference_solution(self, row: Mapping[str, Any], *, style: str | None = None) -> str | None:
        self.check_style(style or row.get("style"))
        facts = row.get("facts")
        return reference_json(load_facts(facts)) if isinstance(facts, str) else None

    def judge_context(self, row: Mapping[str, Any]) -> dict[str, str]:
        """Task: the prompt's facts (the user turn); reference: the engine's evaluation as answer JSON."""
        task = super().judge_context(row)["task"]
        reference = self.reference_solution(row) or ""
        return {"task": task, "reference": reference}

    def judge_levels(self) -> dict[str, str]:
        """The rubric's ``judge_levels`` when it has them, else the pack's Korean/English scale."""
        levels = self.rubric().get("judge_levels")
        if levels:
            return {str(k): str(v) for k, v in levels.items()}
        return dict(builtin_judge_levels())

    def plots(self) -> tuple[PackPlot, ...]:
        """Grade distribution per 유형 and risk/return of a ``fund evaluate`` batch folder; a backtest's PNGs."""
        return (
            PackPlot(
                "fund-batch",
                "a fund batch (per-fund <code>.json reports, summary.json)",
                looks_like_batch,
                plan_fund_batch,
            ),
            PackPlot("fund-backtest", "a fund backtest (backtest.json)", looks_like_backtest, plan_backtest),
        )

    def tokenizer_corpus(self, limit: int = 400) -> list[str]:
        """Prompts and reference answers of a small sample universe (deterministic, under a second)."""
        texts = [SYSTEM_PROMPT]
        for row in load_rows(CORPUS_SOURCE, "all")[: min(limit, CORPUS_ROWS)]:
            texts += [row["prompt"][-1]["content"], reference_json(load_facts(row["facts"]))]
        return texts


CORPUS_SOURCE = "sample?funds=40"
CORPUS_ROWS = 8
