"""How many CPU threads torch uses, decided from the cores actually free, before torch starts its pool.

torch starts one OpenMP thread per core and lets idle threads spin (``OMP_WAIT_POLICY`` ACTIVE). On a machine
shared with other jobs a spinning thread waits for a core another process holds, and every parallel region
waits for the slowest thread: a tiny training step measured ~20× slower with two threads while another job
held one of two cores (``benchmarks/threads_shared.py``). So the default is the cores this process may use
(``os.sched_getaffinity``) less the load average already running, at least one, with idle threads that sleep
(``OMP_WAIT_POLICY=PASSIVE``). ``--threads N`` or ``EVALUATOR_THREADS`` decide instead; an
``OMP_NUM_THREADS`` set by the user is kept. Training, generation and evaluation all run in the process that
calls :func:`configure_threads` at start, so one decision serves all three.
"""

from __future__ import annotations

import math
import os
import sys

ENV = "EVALUATOR_THREADS"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's or ``taskset``'s share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def free_cores(cores: int | None = None, load: float | None = None) -> int:
    """Usable cores not already busy: ``cores - load`` (the 1-minute load average), rounded, at least 1."""
    cores = usable_cores() if cores is None else cores
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
    return max(1, min(cores, math.floor(cores - load + 0.5)))


def configure_threads(threads: int | None = None) -> tuple[int, str]:
    """Set the thread count for this process (and children); returns (threads, where the number came from).

    Call before torch is imported where possible (the environment is read when its pool starts); a torch
    already imported is told too.
    """
    source = "--threads"
    if threads is None and os.environ.get(ENV, "").strip():
        try:
            threads, source = int(os.environ[ENV]), ENV
        except ValueError as exc:
            raise ValueError(f"{ENV} must be a whole number, not {os.environ[ENV]!r}") from exc
    if threads is not None and threads < 1:
        raise ValueError(f"{source} must be at least 1, not {threads}")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if threads is None and os.environ.get("OMP_NUM_THREADS", "").strip().isdigit():
        threads, source = int(os.environ["OMP_NUM_THREADS"]), "OMP_NUM_THREADS"
    elif threads is None:
        threads, source = free_cores(), "free-cores"
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(threads)
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(threads)
    return threads, source


def share(slots: int) -> str:
    """One of ``slots`` child processes' part of this process's thread budget (``OMP_NUM_THREADS`` as decided at
    start, else the free cores), so N processes together use what one would, not N times as much."""
    given = os.environ.get("OMP_NUM_THREADS", "").strip()
    budget = int(given) if given.isdigit() and int(given) > 0 else free_cores()
    return str(max(1, budget // max(1, slots)))
