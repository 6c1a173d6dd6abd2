"""core/provenance: a batch's identity; the inputs hashed in a thread are the same hashes."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from evaluator.core.provenance import input_hashes, input_hashes_soon, provenance


def _sources(tmp_path: Path) -> dict[str, object]:
    big = tmp_path / "nav.csv"
    big.write_bytes(b"\xea\xb8\xb0\xec\xa4\x80\xec\x9d\xbc\xec\x9e\x90,A\n" * 300_000)  # several 1 MiB chunks
    (tmp_path / "meta.csv").write_text("펀드코드,유형\nA,국내주식형\n", encoding="cp949")
    return {
        "data": {"path": str(big), "encoding": "utf-8"},
        "meta": {"path": str(tmp_path / "meta.csv")},
        "risk_free": {"rate": 0.03},  # not a file: hashed from its description
        "benchmark": None,  # absent: left out
        "gone": {"path": str(tmp_path / "missing.csv")},  # not a file any more: its description
    }


def test_file_hashes_are_sha256_of_the_bytes(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    hashes = input_hashes(sources)
    assert sorted(hashes) == ["data", "gone", "meta", "risk_free"]
    assert hashes["data"] == hashlib.sha256((tmp_path / "nav.csv").read_bytes()).hexdigest()
    assert hashes["meta"] == hashlib.sha256((tmp_path / "meta.csv").read_bytes()).hexdigest()


def test_hashing_in_a_thread_gives_the_same_provenance(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    rubric = {"name": "r", "version": "1", "가중치": [0.5, 0.5]}
    future = input_hashes_soon(sources)
    assert provenance(sources, rubric, future) == provenance(sources, rubric)
    for thread in threading.enumerate():  # the thread ends with its one task
        if thread.name.startswith("input-hashes"):
            thread.join(timeout=10)
            assert not thread.is_alive()
