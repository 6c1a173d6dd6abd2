"""TRL's GRPOTrainer / RLOOTrainer with the run's own logging: sampled completions, dynamic sampling's feed
and the held-out monitor joining each logged row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.core.outputs import append_jsonl_rows
from evaluator.domains.base import completion_text
from evaluator.training.algorithms import trl_classes


def trainer_class(algorithm: str = "grpo") -> type:
    """TRL's GRPOTrainer or RLOOTrainer (same logging layout) with the run's own logging added."""
    _, base = trl_classes(algorithm)

    class EvaluatorTrainer(base):  # type: ignore[misc, valid-type]
        """The TRL trainer, also writing a sample of completions with per-reward scores each logging step."""

        completions_path: Path | None = None
        completions_per_log: int = 4
        monitor: Any = None
        prompt_stream: Any = None

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if self.model.training and "loss" in logs:
                if self.prompt_stream is not None:  # dynamic sampling hears each step's per-prompt rewards
                    self.prompt_stream.observe(*_step_rewards(self))
                if self.completions_path is not None and self.accelerator.is_main_process:
                    self._write_completions()
                if self.monitor is not None:  # eval/* join this row, so trackers and best_adapter see them
                    self.monitor.at_log(
                        self.state.global_step, logs, self.model, self.processing_class, self.control
                    )
            super().log(logs, start_time)

        def train(self, *args: Any, **kwargs: Any) -> Any:
            self.add_callback(_start_eval_callback()(self))
            return super().train(*args, **kwargs)

        def _write_completions(self) -> None:
            prompts = list(self._logs["prompt"])[-self.completions_per_log :]
            completions = list(self._logs["completion"])[-self.completions_per_log :]
            rewards = {k: list(v)[-len(prompts) :] for k, v in self._logs["rewards"].items()}
            advantages = list(self._logs["advantages"])[-len(prompts) :]
            rows = [
                {
                    "step": self.state.global_step,
                    "prompt": completion_text([m for m in p if m.get("role") == "user"])
                    if isinstance(p, list)
                    else p,
                    "completion": completion_text(c),
                    "rewards": {k: (v[i] if i < len(v) else None) for k, v in rewards.items()},
                    "advantage": advantages[i] if i < len(advantages) else None,
                }
                for i, (p, c) in enumerate(zip(prompts, completions, strict=False))
            ]
            append_jsonl_rows(self.completions_path, rows)  # one open and one write per logging step

    return EvaluatorTrainer


def _start_eval_callback() -> type:
    from transformers import TrainerCallback

    class StartEval(TrainerCallback):
        """Logs the held-out figures of the starting weights as a step-0 row (fresh runs with eval on)."""

        def __init__(self, trainer: Any) -> None:
            self.trainer = trainer

        def on_train_begin(self, args, state, control, model=None, **kwargs):  # type: ignore[no-untyped-def]
            monitor = self.trainer.monitor
            if monitor is None:
                return
            figures = monitor.at_start(state.global_step, self.trainer.model, self.trainer.processing_class)
            if figures is not None:
                self.trainer.log(dict(figures))

    return StartEval


def _step_rewards(trainer: Any) -> tuple[list[str], list[float | None]]:
    """The last generation batch's prompts (user text) and weighted total rewards, from the trainer's log buffer."""
    n = trainer.args.generation_batch_size
    prompts = list(trainer._logs["prompt"])[-n:]
    columns = [list(v)[-len(prompts) :] for v in trainer._logs["rewards"].values()]
    weights = (
        list(trainer.reward_weights.tolist()) if hasattr(trainer, "reward_weights") else [1.0] * len(columns)
    )
    totals: list[float | None] = []
    for i in range(len(prompts)):
        parts = [(w, col[i]) for w, col in zip(weights, columns, strict=False) if i < len(col)]
        present = [w * v for w, v in parts if v is not None and v == v]  # NaN: a reward that abstained
        totals.append(sum(present) if present else None)
    return [prompt_key(p) for p in prompts], totals


def prompt_key(prompt: Any) -> str:
    """A prompt's identity for dynamic sampling: its user text (the system prompt is the same for all)."""
    if isinstance(prompt, list):
        return completion_text([m for m in prompt if m.get("role") == "user"])
    return str(prompt)
