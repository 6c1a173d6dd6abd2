"""core/batch_gc: the collector is held off inside a batch and is as it was after it, whatever happens."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from evaluator.core.batch_gc import collector_paused


@pytest.fixture(autouse=True)
def _restore_collector() -> object:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_enabled_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_restores_the_collector() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a fund batch failed")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_pause_false_leaves_the_collector_running() -> None:
    gc.enable()
    with collector_paused(False):
        assert gc.isenabled()
    assert gc.isenabled()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle reference counting cannot free


def test_cycles_made_in_a_batch_are_collected_by_the_collector_after_it() -> None:
    gc.enable()
    gc.collect()
    with collector_paused():
        alive = [weakref.ref(_Node()) for _ in range(5_000)]
        assert all(ref() is not None for ref in alive)  # nothing collected them inside
    junk = [[] for _ in range(1_000)]  # enough new containers for an automatic collection
    assert junk and all(ref() is None for ref in alive)


def test_the_command_line_freezes_the_heap_at_exit() -> None:
    """`evaluator` registers skip_final_collection: after the command, everything is in the permanent
    generation, so the interpreter's last collection walks nothing."""
    code = (
        "import atexit, gc, sys\n"
        "from evaluator.app import cli\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 1000))\n"  # runs after main's hook
        "sys.argv = ['evaluator', '--help']\n"
        "cli.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "frozen True" in done.stdout


def test_fund_evaluate_runs_its_batch_without_collections_and_leaves_the_collector_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seam: the command holds the collector off while it reads, grades, writes and stores (no
    collection of any generation in there, where it otherwise makes dozens) and gives it back."""
    from typer.testing import CliRunner

    from evaluator.app.cli import app
    from evaluator.domains.fund.cli import evaluate as command

    gc.enable()
    inside: list[bool] = []
    during: list[int] = []
    run = command.run_evaluate

    def watched(*args: object, **kwargs: object) -> object:
        inside.append(gc.isenabled())
        try:
            return run(*args, **kwargs)
        finally:
            inside.append(gc.isenabled())

    def count(phase: str, info: dict) -> None:
        if phase == "start" and len(inside) == 1:
            during.append(info["generation"])

    monkeypatch.setattr(command, "run_evaluate", watched)
    gc.callbacks.append(count)
    try:
        done = CliRunner().invoke(app, [
            "fund", "evaluate", "--sample", "--sample-funds", "60", "--out", str(tmp_path / "out"),
            "--db", f"sqlite:///{tmp_path / 'e.db'}",
        ])
    finally:
        gc.callbacks.remove(count)
    assert done.exit_code == 0, done.output
    assert "stored run 1" in done.output
    assert inside == [False, False] and during == []
    assert gc.isenabled()
