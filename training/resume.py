"""One row per step after a resume: rows logged past the checkpoint are moved aside, not duplicated.

A run killed at step 9 with its last checkpoint at step 5 has already written rows for steps 6–9; the
resumed run logs those steps again. Before it starts, the rows past the checkpoint's step go to
``<file>.before-resume`` (appended, so several resumes keep everything) and the file keeps the rest.
A ``best_adapter/`` saved after the checkpoint came from weights the resumed run no longer has: it is
moved aside to ``best_adapter.before-resume/`` with a note, and the resumed run chooses a new best.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from evaluator.core.outputs import atomic_write_text
from evaluator.training.callbacks import BEST_DIR, read_best

ROW_FILES = ("metrics.jsonl", "completions.jsonl", "judge_evaluations.jsonl")
ASIDE = ".before-resume"


def checkpoint_step(checkpoint: Path) -> int:
    """The global step a checkpoint holds (``trainer_state.json``; the folder name as a fallback)."""
    state = checkpoint / "trainer_state.json"
    try:
        return int(json.loads(state.read_text(encoding="utf-8"))["global_step"])
    except (OSError, ValueError, KeyError, TypeError):
        return int(checkpoint.name.rsplit("-", 1)[-1])


def _row_step(line: str) -> int | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    step = row.get("step") if isinstance(row, dict) else None
    return int(step) if isinstance(step, int | float) and not isinstance(step, bool) else None


def set_aside_rows(path: Path, step: int) -> int:
    """Move rows with ``step`` greater than ``step`` to ``path.before-resume``; returns how many moved.

    A torn last line (the kill landed mid-write) has no step and goes aside too.
    """
    if not path.exists():
        return 0
    keep: list[str] = []
    moved: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row_step = _row_step(line)
        (keep if row_step is not None and row_step <= step else moved).append(line)
    if not moved:
        return 0
    aside = path.with_name(path.name + ASIDE)
    with open(aside, "a", encoding="utf-8") as fh:
        fh.write("".join(f"{line}\n" for line in moved))
    atomic_write_text(path, "".join(f"{line}\n" for line in keep))
    return len(moved)


def prepare_resume(out: Path, checkpoint: Path) -> dict[str, Any]:
    """Trim the run's row files and best adapter back to ``checkpoint``; returns what was done (for the summary)."""
    step = checkpoint_step(checkpoint)
    moved = {name: n for name in ROW_FILES if (n := set_aside_rows(out / name, step))}
    notes: list[str] = []
    if moved:
        notes.append(
            f"resumed from step {step}: rows logged after it moved to *{ASIDE} "
            f"({', '.join(f'{k}: {v}' for k, v in moved.items())})"
        )
    best = read_best(out)
    if best is not None and int(best.get("step") or 0) > step:
        aside = out / (BEST_DIR + ASIDE)
        if aside.exists():
            shutil.rmtree(aside)
        (out / BEST_DIR).rename(aside)
        notes.append(
            f"best_adapter/ was saved at step {best['step']}, after the checkpoint (step {step}); those weights "
            f"are not the resumed run's, so it was moved to {aside.name}/ and the best is chosen again"
        )
    return {"checkpoint_step": step, "rows_set_aside": moved, "notes": notes}
