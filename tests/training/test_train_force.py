"""`train --force` over an earlier run: nothing of the old run is left to be read as the new one's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from evaluator.training.run_setup import is_run_output

pytestmark = pytest.mark.slow


def _train(out: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_cli("train", "--domain", "gsm8k", "--model", "tiny", "--data", "synthetic",
                   "--max-completion-length", "8", "--output-dir", str(out), *extra)


def test_force_starts_over_without_the_old_runs_checkpoints_rows_or_adapters(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = tmp_path / "run"
    first = _train(out, "--max-steps", "2", "--save-steps", "1")
    assert first.exit_code == 0, first.output
    written = sorted(p.name for p in out.iterdir())
    assert all(is_run_output(n) for n in written), written  # every file a run writes is known as a run output
    assert (out / "checkpoint-2").is_dir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")

    second = _train(out, "--max-steps", "1", "--save-steps", "1000", "--force")
    assert second.exit_code == 0, second.output
    # --resume can only pick this run's checkpoint: the old checkpoint-2 is gone
    assert sorted(p.name for p in out.glob("checkpoint-*")) in ([], ["checkpoint-1"])
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["step"] for r in rows if "loss" in r] == [1]
    assert json.loads((out / "run_summary.json").read_text(encoding="utf-8"))["global_step"] == 1
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_force_refuses_to_clear_the_model_it_starts_from(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = tmp_path / "run"
    first = _train(out, "--max-steps", "1")
    assert first.exit_code == 0, first.output
    again = _train(out, "--max-steps", "1", "--force", "--init-from", str(out / "final"))
    assert again.exit_code != 0 and "would clear" in " ".join(again.output.split())
    assert (out / "final" / "adapter_config.json").is_file()
