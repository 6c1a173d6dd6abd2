"""The contract every domain pack implements.

A pack owns everything domain-specific: its rubric (validated JSON), its datasets in TRL's
conversational prompt format, its prompt styles, its reward functions and its grader. The trainer and
the evaluation harness only ever see a :class:`DomainPack`, obtained from :mod:`evaluator.domains.registry`.

The values a grader returns (:mod:`evaluator.domains.verdicts`) and what a pack's commands receive from
the application (:class:`CommandServices`, :mod:`evaluator.domains.commands`) are declared beside it.

One grader, two callers: ``grade`` scores one completion with the *same* reward functions the trainer
optimises, so a training reward and an evaluation verdict can never disagree.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evaluator.domains.commands import MetricOption, option_flag
from evaluator.domains.verdicts import (
    ACCURACY,
    Metric,
    PackError,
    Score,
    Verdict,
    check_metrics,
    completion_text,
)

__all__ = [  # the contract's value types are declared beside it and read through this module
    "ACCURACY",
    "CommandServices",
    "DomainPack",
    "Metric",
    "MetricOption",
    "PackError",
    "PackPlot",
    "RewardFn",
    "RewardSpec",
    "Score",
    "Verdict",
    "check_metrics",
    "completion_text",
    "option_flag",
]

RewardFn = Callable[..., list[float | None]]
"""TRL-compatible reward: ``fn(completions, **dataset_columns) -> list[float | None]``."""


@dataclass(frozen=True)
class RewardSpec:
    """One row of a rubric's reward table."""

    weight: float
    description: str = ""


@dataclass(frozen=True)
class PackPlot:
    """A picture a pack draws from a folder its own commands wrote.

    ``detect(folder)`` says whether the folder holds the pack's output; ``plan(folder, out, prefix, warn)``
    returns a :class:`evaluator.core.plotting.Plan` (or raises ``NothingToPlotError``).
    """

    name: str
    description: str
    detect: Callable[[Path], bool]
    plan: Callable[..., Any]


class DomainPack(ABC):
    """Base class for domain packs. Subclasses fill in the abstract parts; the rest is shared."""

    name: str = ""
    description: str = ""
    styles: tuple[str, ...] = ()
    primary_reward: str = "correctness"
    """The reward whose score of 1.0 means "correct" in evaluation reports."""
    thinking_styles: tuple[str, ...] = ()
    """Styles meant to think in the model's own thinking mode: a chat template that reads ``enable_thinking``
    (Qwen3) gets ``True`` for these and ``False`` for every other style."""
    languages: tuple[str, ...] = ("en",)
    """Languages the pack has system prompts in (``--language``); the first is the default."""
    data_help: str = ""
    """What ``--data`` accepts for this pack (shown by ``evaluator domains list``)."""

    @abstractmethod
    def rubric(self) -> dict[str, Any]:
        """The pack's rubric, already validated against its JSON Schema."""

    @abstractmethod
    def reward_functions(self) -> dict[str, RewardFn]:
        """Named TRL reward functions. They read ``style`` and gold columns from the dataset kwargs."""

    @abstractmethod
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
        """A ``datasets.Dataset`` with ``prompt`` (chat messages), ``id``, ``style`` and gold columns.

        ``language`` picks the system prompt (None: the pack's first; see :meth:`check_language`)."""

    @abstractmethod
    def extract(self, text: str, *, style: str, mode: str = "strict") -> str | None:
        """Read the final answer from a completion (``strict``: the style's format only; ``flexible``)."""

    @abstractmethod
    def is_correct(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        """Compare an extracted answer with the row's gold answer."""

    # ---- declared hooks with defaults ---------------------------------------------------------
    def metrics(self) -> tuple[Metric, ...]:
        """The figures reports, CIs, ``compare`` and plots show for this pack (default: accuracy)."""
        return (ACCURACY,)

    def score_of(self, verdict: Verdict) -> Score:
        """The grader's :class:`Score` of a verdict: its own when the pack set one, else accuracy = correct."""
        if verdict.score is not None:
            return verdict.score
        return Score(value={"accuracy": 1.0 if verdict.correct else 0.0}, answer=verdict.extracted)

    def gold_from_field(self, value: Any) -> Any:
        """The gold answer in an answer field of a predictions file (ValueError when it has none)."""
        return value

    def normalize_answer(self, value: Any) -> Any:
        """The form two extracted answers are compared in for a majority vote (identity by default)."""
        return value

    def check_language(self, language: str | None) -> str:
        """``language``, or the pack's first, checked against the languages it has prompts in."""
        chosen = language or self.languages[0]
        if chosen not in self.languages:
            raise PackError(
                f"pack {self.name!r} has prompts in {', '.join(self.languages)}, not {chosen!r}"
            )
        return chosen

    metric_options: tuple[MetricOption, ...] = ()
    """Options the pack's metrics take from the command line (``eval`` and ``score`` gain these flags); the
    declaration lives in the pack's light ``cli`` module so the command line can list it without the pack."""

    def check_metric_options(self, options: dict[str, Any]) -> None:
        """Refuse option values the pack's metrics cannot use (raise :class:`PackError`); nothing by default."""
        return None

    def configure_metrics(self, **options: Any) -> DomainPack:
        """A copy of the pack whose metrics use ``options`` (only names in :attr:`metric_options`)."""
        given = {k: v for k, v in options.items() if v is not None}
        own = {o.name: o for o in self.metric_options}
        unknown = [k for k in given if k not in own]
        if unknown:
            flags = ", ".join(option_flag(k) for k in unknown)
            raise PackError(f"pack {self.name!r} has no metric that takes {flags}")
        if not given:
            return self
        self.check_metric_options(given)
        clone = copy.copy(self)
        clone._metric_config = {**getattr(self, "_metric_config", {}), **given}
        return clone

    @property
    def metric_config(self) -> dict[str, Any]:
        """The options :meth:`configure_metrics` set (empty by default)."""
        return dict(getattr(self, "_metric_config", {}))

    def complete_metrics(
        self, rows: Sequence[Mapping[str, Any]], completions: Sequence[str], values: Sequence[dict[str, float]]
    ) -> list[dict[str, float]]:
        """Metrics computed over the whole batch at once (a model-based metric: one forward per batch), merged
        into each completion's per-item ``values``. Default: the values unchanged."""
        return [dict(v) for v in values]

    def metric_notes(self) -> list[str]:
        """Notices a report should carry about its metrics (e.g. an optional metric that was skipped)."""
        return []

    def plots(self) -> Sequence[PackPlot]:
        """The pack's own pictures, found by ``evaluator plot`` in folders the pack's commands write."""
        return ()

    # ---- shared behaviour -------------------------------------------------------------------
    @property
    def default_style(self) -> str:
        return str(self.rubric().get("default_style") or self.styles[0])

    def reward_table(self) -> dict[str, RewardSpec]:
        """The rubric's reward table, typed: it must name exactly the pack's rewards, each with a weight.

        A reward the table forgot would otherwise train at a silent default weight; a name it invents
        would be a weight nothing reads. Both are refused with the names.
        """
        rewards = self.rubric().get("rewards")
        where = f"pack {self.name!r} rubric"
        if not isinstance(rewards, Mapping):
            raise PackError(f"{where} has no 'rewards' table (reward name → weight, description)")
        expected = list(self.reward_functions())
        missing = [n for n in expected if n not in rewards]
        unknown = [str(n) for n in rewards if n not in expected]
        if missing or unknown:
            parts = [f"missing {', '.join(missing)}"] if missing else []
            parts += [f"unknown {', '.join(unknown)}"] if unknown else []
            raise PackError(
                f"{where}: the rewards table must name exactly the pack's rewards ({', '.join(expected)}); "
                + "; ".join(parts)
            )
        table: dict[str, RewardSpec] = {}
        for name, spec in rewards.items():
            weight = spec.get("weight") if isinstance(spec, Mapping) else None
            if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
                raise PackError(f"{where}: rewards.{name}.weight must be a number ≥ 0, not {weight!r}")
            table[str(name)] = RewardSpec(float(weight), str(spec.get("description", "")))
        return table

    def check_contract(self) -> None:
        """What the registry checks when it loads a pack: a typed reward table and well-formed metrics."""
        self.reward_table()
        check_metrics(self.metrics(), self.name)
        if not self.languages:
            raise PackError(f"pack {self.name!r} declares no languages")

    def default_weights(self) -> dict[str, float]:
        """Reward weights as the rubric states them (CLI/config may override)."""
        return {name: spec.weight for name, spec in self.reward_table().items()}

    def reward_descriptions(self) -> dict[str, str]:
        return {name: spec.description for name, spec in self.reward_table().items()}

    def check_style(self, style: str | None) -> str:
        chosen = style or self.default_style
        if chosen not in self.styles:
            raise PackError(f"pack {self.name!r} has no prompt style {chosen!r}; choose one of {', '.join(self.styles)}")
        return chosen

    def grade(self, completion: str, row: Mapping[str, Any], *, style: str | None = None, extract: str = "strict") -> Verdict:
        """Score one completion with every reward function and decide correctness.

        ``extract="strict"`` counts an answer only from the style's answer slot;
        ``"flexible"`` falls back to the pack's lenient reading (e.g. the last number).
        """
        style = self.check_style(style or row.get("style"))
        columns = {k: [v] for k, v in row.items() if k not in ("prompt", "completion")}
        columns["style"] = [style]
        scores: dict[str, float | None] = {}
        for name, fn in self.reward_functions().items():
            scores[name] = fn([completion], **columns)[0]
        strict = self.extract(completion, style=style, mode="strict")
        extracted = strict if extract == "strict" else self.extract(completion, style=style, mode="flexible")
        correct = self.is_correct(extracted, row)
        return Verdict(extracted=extracted, correct=correct, format_ok=strict is not None, scores=scores)

    def chat_template_kwargs(self, style: str | None) -> dict[str, Any] | None:
        """Extra chat-template arguments for ``style`` that override the default thinking switch; None = default.

        Applied only by the one rendering rule (``evaluator.models.chat_format``), for every caller alike.
        """
        return None

    def summarize(self, rows: Sequence[Mapping[str, Any]], verdicts: Sequence[Verdict]) -> dict[str, Any]:
        """Domain-specific figures for an evaluation report (none by default)."""
        return {}

    def reference_solution(self, row: Mapping[str, Any], *, style: str | None = None) -> str | None:
        """A worked answer in the prompt style, for supervised warm starts; None if the pack has none."""
        return None

    def tokenizer_corpus(self, limit: int = 400) -> list[str]:
        """Representative text (prompts, answers) for training the offline tiny tokenizer."""
        return []

    def judge_context(self, row: Mapping[str, Any]) -> dict[str, str]:
        """What an LLM judge needs besides the completion: the task and the reference."""
        prompt = row.get("prompt")
        task = completion_text([m for m in prompt if m.get("role") == "user"]) if isinstance(prompt, list) else str(prompt)
        return {"task": task, "reference": str(row.get("answer", ""))}

    def judge_levels(self) -> dict[str, str]:
        """Descriptions of the 0–5 judge scale, from the rubric when it has them."""
        levels = self.rubric().get("judge_levels")
        if levels:
            return {str(k): str(v) for k, v in levels.items()}
        return {
            "0": "No answer, or unrelated to the task.",
            "1": "Attempts the task but the reasoning is mostly wrong.",
            "2": "Some correct steps, major errors, wrong result.",
            "3": "Mostly sound reasoning with a significant slip.",
            "4": "Correct result, reasoning clear with minor gaps.",
            "5": "Correct result with complete, clear, verifiable reasoning.",
        }


class CommandServices(Protocol):
    """What a pack's own commands get from the application: the database and the evaluation harness live above
    the packs, so they are handed in when the commands are mounted."""

    def prepare_db(self, flag: str | None) -> str | None:
        """The database URL to store into (``--db`` or the environment's), checked now; None for no database."""
        ...

    def store_folder(
        self, url: str, folder: Path, *, source: str, texts: Mapping[str, str] | None = None
    ) -> None:
        """Store a report folder as one batch (one transaction); a clear message and exit on failure.
        ``texts``: the folder's files as just written (name → text), read instead of the files."""
        ...

    def store_companies(self, url: str, reports: Path, doc: dict[str, Any]) -> None:
        """Store a report folder's batch (if new) and its 운용사 ratings with it; a clear message and exit on failure."""
        ...

    def grade_with_model(
        self, pack: DomainPack, rows: list[dict[str, Any]], model: dict[str, Any], **settings: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Generate for ``rows`` with ``model`` ({model, adapter, quantize, backend}) through the evaluation
        harness and grade with the pack: (report, samples). Raises ``ValueError`` when the model cannot run."""
        ...
