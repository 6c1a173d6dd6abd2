"""Trainer callbacks: what a researcher watches and keeps — metrics, best adapter, progress, time limits."""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from evaluator.core.outputs import append_jsonl
from evaluator.training.distributed import any_rank
from evaluator.training.run_setup import save_model_atomically

BEST_DIR = "best_adapter"
BEST_FILE = "best.json"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


class StepTimer(TrainerCallback):
    """Measures seconds per optimizer step, reported with the next log line."""

    def __init__(self) -> None:
        self._t0: float | None = None
        self.durations: list[float] = []

    def on_step_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        self._t0 = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self._t0 is not None:
            self.durations.append(time.perf_counter() - self._t0)

    def pop_mean(self) -> float | None:
        if not self.durations:
            return None
        mean = sum(self.durations) / len(self.durations)
        self.durations = []
        return mean


class MetricsLogger(TrainerCallback):
    """Appends every training log line to ``metrics.jsonl`` (append-only, so resumed runs keep history)."""

    def __init__(self, path: Path, timer: StepTimer) -> None:
        self.path = path
        self.timer = timer
        self.rows: list[dict[str, Any]] = []

    def on_log(self, args, state, control, logs=None, **kwargs):  # type: ignore[no-untyped-def]
        if not logs or ("reward" not in logs and "loss" not in logs and "eval/accuracy" not in logs):
            return
        row = {"step": state.global_step, "epoch": state.epoch, "time": time.time()}
        row.update({k: _clean(v) for k, v in logs.items()})
        row["step_time"] = self.timer.pop_mean()
        self.rows.append(row)
        if state.is_world_process_zero:  # one metrics file per run, however many processes
            append_jsonl(self.path, row)


BY_REWARD_NOTE = (
    "chosen by mean training reward: this run had no held-out evaluation (--eval-every), and format or "
    "judge rewards can rise while accuracy falls"
)
BY_ACCURACY_NOTE = "chosen by held-out accuracy (greedy, the pack's grader, the same slice at every point)"


class BestAdapterSaver(TrainerCallback):
    """Saves ``best_adapter/`` whenever a logging window's ``metric`` reaches a new best.

    ``metric`` is ``eval/accuracy`` when the run evaluates on held-out data, else the mean training
    ``reward``; ``best.json`` records which, with the value and step.
    """

    def __init__(self, out_dir: Path, tokenizer: Any, metric: str = "reward") -> None:
        self.target = out_dir / BEST_DIR
        self.tokenizer = TokenizerFiles(tokenizer) if tokenizer is not None else None
        self.metric = metric
        self.best: float | None = None
        info = read_best(out_dir)
        if info is not None and info.get("metric", "reward") == metric:
            self.best = float(info["value"])  # a resumed run must beat the earlier best, not overwrite it

    def on_log(self, args, state, control, logs=None, model=None, **kwargs):  # type: ignore[no-untyped-def]
        value = (logs or {}).get(self.metric)
        if not state.is_world_process_zero:
            return
        if value is None or model is None or (isinstance(value, float) and math.isnan(value)):
            return
        if self.best is None or value > self.best:
            self.best = float(value)
            info = {
                "metric": self.metric,
                "value": self.best,
                "step": state.global_step,
                "reward": _clean((logs or {}).get("reward")),
                "note": BY_ACCURACY_NOTE if self.metric != "reward" else BY_REWARD_NOTE,
            }
            note = (
                f"## How this adapter was chosen\n\nBest `{self.metric}` of the run: {self.best:.4g} at step "
                f"{state.global_step}; {info['note']}. See `best.json`."
            )
            save_model_atomically(
                model, self.tokenizer, self.target, extra=info, extra_name=BEST_FILE, readme_note=note
            )


class TokenizerFiles:
    """A tokenizer's saved files, serialized once and then copied: it never changes during a run.

    Stands in for the tokenizer in ``save_model_atomically`` (it has ``save_pretrained``), so each new-best
    save writes the same bytes ``tokenizer.save_pretrained`` would, without serializing the tokenizer again.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.files: dict[str, bytes] | None = None

    def save_pretrained(self, folder: str | Path) -> None:
        folder = Path(folder)
        if self.files is None:
            with tempfile.TemporaryDirectory() as scratch:
                self.tokenizer.save_pretrained(scratch)
                root = Path(scratch)
                self.files = {str(f.relative_to(root)): f.read_bytes() for f in root.rglob("*") if f.is_file()}
        for name, data in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def read_best(out_dir: Path) -> dict[str, Any] | None:
    """``best_adapter/best.json`` (older runs wrote only ``reward`` and ``step``), or None."""
    info = out_dir / BEST_DIR / BEST_FILE
    if not info.exists():
        return None
    doc = json.loads(info.read_text(encoding="utf-8"))
    doc.setdefault("metric", "reward")
    doc.setdefault("value", doc.get("reward"))
    return doc


class SaveLastStep(TrainerCallback):
    """Always checkpoint the final step (and a time-limited stop), so ``--resume`` has something to continue."""

    def __init__(self, max_seconds: float | None = None) -> None:
        self.max_seconds = max_seconds
        self.start = time.monotonic()
        self.stopped_for_time = False

    def on_train_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        # the budget is training time: data preparation and model loading before this point do not spend it
        self.start = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self.max_seconds is not None and any_rank(time.monotonic() - self.start >= self.max_seconds):
            self.stopped_for_time = True
            control.should_training_stop = True
        if state.global_step >= state.max_steps or control.should_training_stop:
            control.should_save = True
        return control


class RichProgress(TrainerCallback):
    """A Rich progress display: step, mean reward (or SFT loss), seconds/step, and per-reward means.

    With a wall-time budget (``max_seconds``) the bar tracks time, since the step count is open-ended.
    Per-reward means go on their own line so they survive narrow terminals.
    """

    def __init__(self, console: Any = None, label: str = "GRPO", max_seconds: float | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.label = label
        self.max_seconds = max_seconds
        self.progress: Any = None
        self.task: Any = None

    def on_train_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        from rich.console import Group
        from rich.live import Live
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.text import Text

        counter = TextColumn("step {task.fields[step]}") if self.max_seconds else MofNCompleteColumn()
        self.progress = Progress(
            TextColumn(f"[bold]{self.label}"),
            BarColumn(bar_width=16),
            counter,
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
        )
        self.rewards_line = Text("", overflow="fold")
        # 2 redraws a second: the clock shows whole seconds, and each redraw costs ~1.5 ms of the training
        # process's CPU (at 4 a second it was the largest per-step cost the trainer adds; benchmarks/README.md)
        self.live = Live(Group(self.progress, self.rewards_line), console=self.console, refresh_per_second=2)
        self.live.start()
        total = self.max_seconds if self.max_seconds else state.max_steps
        done = 0 if self.max_seconds else state.global_step
        self.task = self.progress.add_task(
            "train", total=total, completed=done, info="", step=state.global_step
        )
        self._t0, self._step0 = time.perf_counter(), state.global_step

    def _advance(self, state: Any, **fields: Any) -> None:
        done = (
            min(time.perf_counter() - self._t0, self.max_seconds) if self.max_seconds else state.global_step
        )
        self.progress.update(self.task, completed=done, step=state.global_step, **fields)

    def on_log(self, args, state, control, logs=None, **kwargs):  # type: ignore[no-untyped-def]
        if self.progress is None or not logs or ("reward" not in logs and "loss" not in logs):
            return
        head = [f"reward {logs['reward']:.3f}"] if "reward" in logs else [f"loss {logs['loss']:.3f}"]
        done = state.global_step - self._step0
        if done > 0:
            head.append(f"{(time.perf_counter() - self._t0) / done:.2f} s/step")
        per_reward = [
            f"{key.split('/')[1]} {val:.2f}"
            for key, val in logs.items()
            if key.startswith("rewards/") and key.endswith("/mean") and val is not None
        ]
        self.rewards_line.plain = "  " + " · ".join(per_reward) if per_reward else ""
        self._advance(state, info=" · ".join(head))

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self.progress is not None:
            self._advance(state)

    def on_train_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self.progress is not None:
            self.live.stop()
            if self.rewards_line.plain and not self.console.is_terminal:
                self.console.print()  # a captured log gets the line break a terminal adds itself
            self.progress = None
