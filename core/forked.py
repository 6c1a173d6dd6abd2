"""One call run beside the caller on another core, in a forked child: :func:`start` it, take its :meth:`Forked.result`.

A batch's own checks and files are work the second core can do while the first grades, builds or stores:
parsing and checking 60 MB of NAV series (``orjson`` holds the GIL), or creating 15,000 report files (kernel
time in every ``open``). Threads cannot share that work: parsing never lets go of the GIL, and a writer
thread would wait for it after every system call while the caller computes. ``multiprocessing`` would pickle
the inputs (the texts) to a fresh worker; a forked child already has them, copy-on-write, and only its
result, kept small by the callers, comes back through a pipe.

The child does only what ``fn`` does, never touches the parent's open database connections or console, and
ends with ``os._exit`` (no ``atexit``, no flushing the parent's buffers). It dies with the parent (Linux
``PR_SET_PDEATHSIG``), so a killed command leaves no worker behind writing into its staging folder. Where
``fork`` is missing (Windows) or fails, or ``EVALUATOR_NO_FORK`` is set, the call runs in the caller at once:
the same result, without the overlap.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, Generic, TypeVar

from evaluator.core.libc import libc_function

T = TypeVar("T")
FEED_BUFFER = 1 << 20


class WorkerDied(RuntimeError):
    """The child ended without a result (killed, out of memory)."""


class Forked(Generic[T]):
    """A call under way in a child process (or already done in this one)."""

    def __init__(self, pid: int | None, fd: int | None, done: tuple[bool, Any] | None,
                 feed: BinaryIO | None = None) -> None:
        self._pid, self._fd, self._done = pid, fd, done
        self.feed = feed
        """With :func:`start_fed`: what the parent writes here, the child's ``fn`` reads from its first argument
        (:meth:`result` closes it, which says that is all)."""

    def result(self) -> T:
        """The call's return value; its exception is raised here, as if it had run in this process."""
        if self._done is None:
            self._done = self._collect()
        ok, value = self._done
        if not ok:
            raise value
        return value

    def cancel(self) -> None:
        """Stop the child (its result is no longer wanted) and reap it."""
        if self._done is None and self._pid is not None and self._fd is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            if self.feed is not None:
                with contextlib.suppress(OSError):  # its buffer has nowhere to go now
                    self.feed.close()
            os.close(self._fd)
            os.waitpid(self._pid, 0)
            self._done = (False, WorkerDied("cancelled"))

    def _collect(self) -> tuple[bool, Any]:
        assert self._fd is not None and self._pid is not None
        if self.feed is not None and not self.feed.closed:
            self.feed.close()
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            _, status = os.waitpid(self._pid, 0)
        try:
            return pickle.loads(b"".join(chunks))
        except Exception:  # nothing, or a result cut off
            return False, WorkerDied(f"a worker process ended without a result (wait status {status})")


def start(fn: Callable[..., T], *args: Any) -> Forked[T]:
    """``fn(*args)`` in a forked child (``fn``'s result must pickle); in this process where that cannot be."""
    started = _fork(fn, args, feed=False)
    assert started is not None
    return started


def start_fed(fn: Callable[..., T], *args: Any) -> Forked[T] | None:
    """``fn(stream, *args)`` in a forked child, ``stream`` reading what the parent writes to the handle's
    ``feed`` as it writes it; None where there can be no child (the caller then does the work itself)."""
    return _fork(fn, args, feed=True)


def _fork(fn: Callable[..., T], args: tuple[Any, ...], *, feed: bool) -> Forked[T] | None:
    if not hasattr(os, "fork") or os.environ.get("EVALUATOR_NO_FORK"):
        return None if feed else Forked(None, None, _call(fn, args))
    read, write = os.pipe()
    feed_read, feed_write = os.pipe() if feed else (-1, -1)
    if feed and sys.platform.startswith("linux"):  # room for a whole buffer: the parent waits less on the child
        import fcntl  # POSIX only

        with contextlib.suppress(OSError):
            fcntl.fcntl(feed_write, 1031, FEED_BUFFER)  # F_SETPIPE_SZ
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        for fd in (read, write, feed_read, feed_write):
            if fd >= 0:
                os.close(fd)
        return None if feed else Forked(None, None, _call(fn, args))
    if pid == 0:  # the child: run, send, and leave without running anything of the parent's
        code = 1
        try:
            os.close(read)
            _die_with(parent)
            if feed:
                os.close(feed_write)
                args = (os.fdopen(feed_read, "rb", buffering=FEED_BUFFER), *args)
            _send(write, _call(fn, args))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    if not feed:
        return Forked(pid, read, None)
    os.close(feed_read)
    return Forked(pid, read, None, os.fdopen(feed_write, "wb", buffering=FEED_BUFFER))


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    try:
        return True, fn(*args)
    except BaseException as exc:  # handed to the caller, who raises it
        return False, exc


def _send(fd: int, done: tuple[bool, Any]) -> None:
    try:
        data = pickle.dumps(done)
    except Exception as exc:  # an exception that does not pickle still says what it was
        data = pickle.dumps((False, RuntimeError(f"{type(done[1]).__name__}: {done[1]} ({exc})")))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)


_PRCTL = libc_function("prctl")  # looked up in the parent: a child of a threaded parent should not dlopen


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when the parent dies (Linux); leave at once if it already has."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)
