"""Held-out evaluation during training, through the same harness ``evaluator eval`` uses.

Every call to the evaluation harness from training lives here, so the trainer grades its own policy
exactly as a later ``evaluator eval`` would: same pack grader, same prompt rendering, greedy, batched.
The held-out slice is built once (the first ``limit`` rows of ``split``) and reused at every point, so
the figures along a run are comparable with each other.

Training never imports the evaluation floor: the caller (the CLI, the demo, an experiment) hands in a
``PolicyGrader``, in practice :func:`evaluator.evaluation.policy.grade_policy`, the harness itself.

Train mode: the harness's generator switches the policy to eval mode for the forward passes and back to
train mode afterwards; before the first forward, ``Generator`` turns off bitsandbytes' CPU repack of
4-bit weights, which would otherwise corrupt the LoRA gradients of every later training step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluator.core.generation import GenerationSettings
from evaluator.domains.base import DomainPack

EVAL_KEYS = ("eval/accuracy", "eval/format_rate")


class PolicyGrader(Protocol):
    """Grades a live policy on fixed rows and returns an evaluation report (the harness's document)."""

    def __call__(
        self,
        pack: DomainPack,
        model: Any,
        tokenizer: Any,
        rows: list[dict[str, Any]],
        *,
        split: str,
        style: str | None,
        language: str,
        generation: GenerationSettings,
    ) -> dict[str, Any]: ...


@dataclass
class HeldOutEval:
    """A fixed held-out slice of the pack's data and the settings to grade a policy on it (greedy in training)."""

    pack: DomainPack
    grader: PolicyGrader
    rows: list[dict[str, Any]]
    style: str | None
    language: str
    generation: GenerationSettings
    split: str = "test"
    history: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        pack: DomainPack,
        grader: PolicyGrader,
        *,
        data: str | None,
        split: str,
        limit: int,
        style: str | None,
        language: str,
        generation: GenerationSettings,
    ) -> HeldOutEval:
        """Build the slice now, so a missing split fails before training starts, not at the first eval."""
        dataset = pack.dataset(data, split, style=style, language=language, limit=limit, seed=generation.seed)
        rows = dataset.to_list() if hasattr(dataset, "to_list") else [dict(r) for r in dataset]
        rows = rows[:limit]
        if not rows:
            raise ValueError(f"held-out split {split!r} of {pack.name} has no rows to evaluate on")
        return cls(pack, grader, rows, style, language, generation, split)

    def run(self, model: Any, tokenizer: Any) -> dict[str, float | None]:
        """Grade ``model`` as it is now; returns ``eval/*`` figures with 95 % bootstrap CIs."""
        was_training = bool(getattr(model, "training", False))
        try:
            report = self.grader(
                self.pack,
                model,
                tokenizer,
                self.rows,
                split=self.split,
                style=self.style,
                language=self.language,
                generation=self.generation,
            )
        finally:
            if was_training:
                model.train()  # never leave the policy in eval mode (dropout, 4-bit kernels)
        return figures(report)


def figures(report: dict[str, Any]) -> dict[str, float | None]:
    """The flat ``eval/*`` metrics a training log row carries, from an evaluation report."""
    acc = report["accuracy"]["strict"]
    fmt = report["format_rate"]
    acc_ci = acc.get("ci95") or [None, None]
    fmt_ci = fmt.get("ci95") or [None, None]
    return {
        "eval/accuracy": acc["value"],
        "eval/accuracy_ci_low": acc_ci[0],
        "eval/accuracy_ci_high": acc_ci[1],
        "eval/format_rate": fmt["value"],
        "eval/format_rate_ci_low": fmt_ci[0],
        "eval/format_rate_ci_high": fmt_ci[1],
        "eval/n": float(report["n_items"]),
    }


@dataclass
class PerPackHeldOut:
    """A mixed run's held-out evaluation: each pack graded on its own slice, by its own rubric and format.

    ``eval/<pack>/*`` carries each pack's figures; ``eval/accuracy`` and ``eval/format_rate`` are their plain
    mean (every pack counts the same, whatever its mixing weight or slice size), so the best adapter and the
    collapse guard follow all packs, never the one whose prompts happened to dominate the training steps.
    """

    parts: dict[str, HeldOutEval]
    split: str = "test"

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [row for part in self.parts.values() for row in part.rows]

    def run(self, model: Any, tokenizer: Any) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, part in self.parts.items():
            out.update({key.replace("eval/", f"eval/{name}/", 1): value for key, value in part.run(model, tokenizer).items()})
        for key in EVAL_KEYS:
            values = [out[key.replace("eval/", f"eval/{name}/", 1)] for name in self.parts]
            out[key] = None if any(v is None for v in values) else sum(values) / len(values)  # type: ignore[arg-type,misc]
        out["eval/n"] = float(sum(len(p.rows) for p in self.parts.values()))
        return out
