"""One row per step after a resume: rows past the checkpoint moved aside, a later best adapter dropped."""

from __future__ import annotations

import json
from pathlib import Path

from evaluator.training.resume import checkpoint_step, prepare_resume, set_aside_rows


def _write_rows(path: Path, steps: list[int], extra: str = "") -> None:
    path.write_text("".join(json.dumps({"step": s, "reward": s / 10}) + "\n" for s in steps) + extra)


def _steps(path: Path) -> list[int]:
    return [json.loads(line)["step"] for line in path.read_text().splitlines() if line.strip()]


def _checkpoint(out: Path, step: int) -> Path:
    ckpt = out / f"checkpoint-{step}"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return ckpt


def test_rows_after_the_checkpoint_go_aside_and_a_torn_last_line_with_them(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.jsonl"
    _write_rows(metrics, [1, 2, 3, 4, 5, 6, 7, 8, 9], extra='{"step": 10, "rew')  # killed mid-write
    assert set_aside_rows(metrics, 5) == 5
    assert _steps(metrics) == [1, 2, 3, 4, 5]
    aside = tmp_path / "metrics.jsonl.before-resume"
    lines = aside.read_text().splitlines()
    assert [json.loads(x)["step"] for x in lines[:4]] == [6, 7, 8, 9] and lines[4] == '{"step": 10, "rew'
    # A second resume appends to the aside file rather than replacing the first one's rows.
    _write_rows(metrics, [1, 2, 3, 4, 5, 6, 7])
    assert set_aside_rows(metrics, 6) == 1
    assert len(aside.read_text().splitlines()) == 6 and _steps(metrics) == [1, 2, 3, 4, 5, 6]


def test_nothing_to_move_leaves_files_untouched(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.jsonl"
    _write_rows(metrics, [1, 2, 3])
    before = metrics.read_bytes()
    assert set_aside_rows(metrics, 3) == 0 and metrics.read_bytes() == before
    assert not (tmp_path / "metrics.jsonl.before-resume").exists()
    assert set_aside_rows(tmp_path / "absent.jsonl", 3) == 0


def test_prepare_resume_trims_every_row_file_and_drops_a_later_best_adapter(tmp_path: Path) -> None:
    ckpt = _checkpoint(tmp_path, 5)
    _write_rows(tmp_path / "metrics.jsonl", list(range(1, 10)))
    _write_rows(tmp_path / "completions.jsonl", [1, 1, 5, 5, 6, 6, 9])
    _write_rows(tmp_path / "judge_evaluations.jsonl", [4, 7])
    best = tmp_path / "best_adapter"
    best.mkdir()
    (best / "best.json").write_text(json.dumps({"metric": "eval/accuracy", "value": 0.4, "step": 8}))
    done = prepare_resume(tmp_path, ckpt)
    assert done["checkpoint_step"] == 5
    assert done["rows_set_aside"] == {"metrics.jsonl": 4, "completions.jsonl": 3, "judge_evaluations.jsonl": 1}
    assert _steps(tmp_path / "completions.jsonl") == [1, 1, 5, 5]
    assert not best.exists() and (tmp_path / "best_adapter.before-resume" / "best.json").exists()
    assert any("step 8" in note and "best_adapter.before-resume" in note for note in done["notes"])


def test_a_best_adapter_from_before_the_checkpoint_is_kept(tmp_path: Path) -> None:
    ckpt = _checkpoint(tmp_path, 5)
    best = tmp_path / "best_adapter"
    best.mkdir()
    (best / "best.json").write_text(json.dumps({"step": 4, "reward": 1.5}))  # an older run's best.json
    done = prepare_resume(tmp_path, ckpt)
    assert best.exists() and done["notes"] == [] and done["rows_set_aside"] == {}


def test_checkpoint_step_reads_the_trainer_state_then_the_name(tmp_path: Path) -> None:
    assert checkpoint_step(_checkpoint(tmp_path, 12)) == 12
    bare = tmp_path / "checkpoint-30"
    bare.mkdir()
    assert checkpoint_step(bare) == 30
