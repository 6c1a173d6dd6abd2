"""Thread count from the cores actually free, decided before torch's pool starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evaluator.core.threads import configure_threads, free_cores


@pytest.mark.parametrize(
    ("cores", "load", "expected"),
    [(2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.9, 1), (2, 7.0, 1), (16, 3.2, 13), (1, 0.0, 1), (4, -1.0, 4)],
)
def test_free_cores_is_usable_cores_less_the_load(cores: int, load: float, expected: int) -> None:
    assert free_cores(cores, load) == expected


def _child(env: dict[str, str], *args: str) -> str:
    code = (
        "import sys; from evaluator.core.threads import configure_threads; "
        "n, source = configure_threads(int(sys.argv[1]) if len(sys.argv) > 1 else None); import torch, os; "
        "print(n, source, torch.get_num_threads(), os.environ['OMP_WAIT_POLICY'])"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "EVALUATOR_THREADS", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code, *args], env={**base, **env}, capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    return out.stdout.strip().splitlines()[-1]


def test_torch_starts_with_the_decided_pool() -> None:
    assert _child({}, "1") == "1 --threads 1 PASSIVE"
    assert _child({"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "ACTIVE"}) == "2 OMP_NUM_THREADS 2 ACTIVE"
    assert _child({"EVALUATOR_THREADS": "1", "OMP_NUM_THREADS": "2"}) == "1 EVALUATOR_THREADS 1 PASSIVE"
    n, source, torch_n, _ = _child({}).split()
    assert source == "free-cores" and int(n) == int(torch_n) and 1 <= int(n) <= len(os.sched_getaffinity(0))


def test_threads_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        configure_threads(0)


def test_child_processes_share_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluator.core.threads import share

    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert [share(n) for n in (1, 2, 3, 8)] == ["4", "2", "1", "1"]
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert share(1) == str(free_cores())
