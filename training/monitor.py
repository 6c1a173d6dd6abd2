"""When to grade the policy during a run, and what to do with the figures.

The trainer calls :meth:`HeldOutMonitor.at_log` from its ``log`` method, before the log row reaches the
callbacks, so the ``eval/*`` figures (and any collapse warning) land in the same ``metrics.jsonl`` row,
in the trackers (TensorBoard …) and in front of the best-adapter choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluator.training.collapse import CollapseGuard, format_signal
from evaluator.training.held_out import HeldOutEval


@dataclass
class HeldOutMonitor:
    held_out: HeldOutEval
    every: int
    guard: CollapseGuard
    stop_on_collapse: bool = False
    console: Any = None
    last_step: int | None = None
    stopped_for_collapse: bool = False
    points: list[dict[str, Any]] = field(default_factory=list)

    def due(self, step: int, final: bool) -> bool:
        if self.last_step == step:
            return False
        return final or (self.last_step is None and step >= self.every) or (
            self.last_step is not None and step - self.last_step >= self.every
        )

    def at_start(self, step: int, model: Any, tokenizer: Any) -> dict[str, Any] | None:
        """Grade the starting weights of a fresh run (step 0): the guard's and the best adapter's first reference.

        Without it, a policy that falls apart within the first ``every`` steps would set the bar at its
        already-collapsed accuracy. A resumed run has its earlier points already.
        """
        if step != 0 or self.last_step is not None:
            return None
        self.last_step = 0
        figures = self.held_out.run(model, tokenizer)
        self.points.append({"step": 0, **figures})
        self.guard.update(0, figures.get("eval/accuracy"), format_signal(figures))
        return figures

    def at_log(self, step: int, logs: dict[str, Any], model: Any, tokenizer: Any, control: Any) -> None:
        """Evaluate when due; add ``eval/*`` (and ``collapse/*``) keys to ``logs``; stop the run if asked."""
        final = bool(getattr(control, "should_training_stop", False))
        if not self.due(step, final):
            return
        self.last_step = step
        figures = self.held_out.run(model, tokenizer)
        logs.update(figures)
        self.points.append({"step": step, **figures})
        event = self.guard.update(step, figures.get("eval/accuracy"), format_signal(logs))
        if event is None:
            return
        logs.update(
            {
                "collapse/warning": 1.0,
                "collapse/drop": event["drop"],
                "collapse/best_accuracy": event["best_accuracy"],
                "collapse/best_step": float(event["best_step"]),
            }
        )
        event["stopped"] = self.stop_on_collapse
        message = (
            f"collapse guard: held-out accuracy {event['eval/accuracy']:.1%} at step {step} is "
            f"{event['drop']:.1%} below the best {event['best_accuracy']:.1%} (step {event['best_step']}) "
            f"while the format signal holds at {event['format']:.2f}"
        )
        message += " — stopping; best_adapter/ keeps the best weights" if self.stop_on_collapse else ""
        if self.console is not None:
            self.console.print(f"[bold yellow]warning:[/] {message}")
        if self.stop_on_collapse:
            self.stopped_for_collapse = True
            control.should_training_stop = True
            control.should_save = True

    def summary(self) -> dict[str, Any]:
        """What ``run_summary.json`` records about held-out evaluation and the guard."""
        return {
            "split": self.held_out.split,
            "n": len(self.held_out.rows),
            "every": self.every,
            "points": self.points,
            "collapse_drop": self.guard.drop,
            "collapse_events": self.guard.events,
            "stopped_for_collapse": self.stopped_for_collapse,
        }
