"""core/forked: a call in a forked child returns its value or raises its error here, a fed child reads what the
parent writes, a child that dies is reported, and a killed parent leaves no child behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import BinaryIO

import pytest

from evaluator.core import forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


class Unpicklable(Exception):
    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("not this one")


def _pid_and(x: int) -> tuple[int, int]:
    return os.getpid(), x * 2


def _raise(kind: type[BaseException]) -> None:
    raise kind("bad input 한글")


def _die() -> None:
    os._exit(3)


def _total(stream: BinaryIO, extra: int) -> tuple[int, int]:
    data = stream.read()
    return len(data), sum(data) + extra


def test_the_call_runs_in_another_process_and_returns_its_value() -> None:
    pid, value = forked.start(_pid_and, 21).result()
    assert value == 42 and pid != os.getpid()


@pytest.mark.parametrize("kind", [ValueError, KeyError, KeyboardInterrupt])
def test_its_exception_is_raised_here(kind: type[BaseException]) -> None:
    with pytest.raises(kind, match="bad input 한글"):
        forked.start(_raise, kind).result()


def test_an_exception_that_does_not_pickle_still_says_what_it_was() -> None:
    with pytest.raises(RuntimeError, match="Unpicklable: bad input"):
        forked.start(_raise, Unpicklable).result()


def test_a_child_that_dies_is_an_error_not_a_result() -> None:
    with pytest.raises(forked.WorkerDied):
        forked.start(_die).result()


def test_a_fed_child_reads_everything_the_parent_writes() -> None:
    worker = forked.start_fed(_total, 5)
    assert worker is not None and worker.feed is not None
    chunks = [bytes(range(256)) * 3000, b"", b"\x00\xff" * 10]
    for chunk in chunks:
        worker.feed.write(chunk)  # more than the pipe holds: the child drains it as it goes
    total = b"".join(chunks)
    assert worker.result() == (len(total), sum(total) + 5)


def test_without_fork_the_call_runs_here_and_a_fed_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALUATOR_NO_FORK", "1")
    assert forked.start(_pid_and, 1).result() == (os.getpid(), 2)
    with pytest.raises(ValueError):
        forked.start(_raise, ValueError).result()
    assert forked.start_fed(_total, 0) is None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}/stat").exists() else "X"
    return state not in ("Z", "X")


def test_cancel_stops_the_child() -> None:
    worker = forked.start(time.sleep, 60)
    pid = worker._pid
    assert pid is not None and _alive(pid)
    worker.cancel()
    assert not _alive(pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_parent_leaves_no_child_behind(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    script = textwrap.dedent(f"""
        import os, time
        from evaluator.core import forked

        def work():
            open({str(marker)!r}, "w").write(str(os.getpid()))
            time.sleep(120)

        forked.start(work)
        time.sleep(120)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy())
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() or not marker.read_text():
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.05)
        child = int(marker.read_text())
        assert _alive(child)
        os.kill(parent.pid, signal.SIGKILL)  # the parent alone: no handler, no cleanup
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(child):
            assert time.monotonic() < deadline, "the child outlived its killed parent"
            time.sleep(0.05)
    finally:
        parent.kill()
