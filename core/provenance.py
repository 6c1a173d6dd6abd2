"""What identifies a batch: input file hashes, the rubric's hash and the engine version.

``fund evaluate`` records these in the summary (``inputs.provenance``) so that a report folder imported
later gets the same identity as the batch stored directly with ``--db``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def json_sha256(doc: Any) -> str:
    """Hash of a JSON document's canonical form (sorted keys, no whitespace), so formatting never matters."""
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def engine_version() -> str:
    try:
        return metadata.version("evaluator")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def input_hashes(sources: Mapping[str, Any]) -> dict[str, str]:
    """``name → sha256`` of every input that is a file (data, meta, benchmark, a risk-free CSV).

    Inputs that are not files (the built-in sample, a constant rate) are hashed from their description,
    so two runs with different sample sizes or rates are still different batches.
    """
    out: dict[str, str] = {}
    for name, info in sorted(sources.items()):
        if not info:
            continue
        path = info.get("path") if isinstance(info, Mapping) else None
        if path and Path(path).is_file():
            out[name] = file_sha256(path)
        else:
            out[name] = json_sha256(info)
    return out


def input_hashes_soon(sources: Mapping[str, Any]) -> Future[dict[str, str]]:
    """:func:`input_hashes` in a thread, for :func:`provenance`'s ``hashes``: a 600 MB NAV file takes ~0.35 s
    to hash, and file reads and ``hashlib`` release the GIL, so it runs on the next core while the engine
    grades on this one."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="input-hashes")
    try:
        return pool.submit(input_hashes, dict(sources))
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


def provenance(
    sources: Mapping[str, Any], rubric: Mapping[str, Any], hashes: Future[dict[str, str]] | None = None
) -> dict[str, Any]:
    """The block ``fund evaluate`` adds to ``evaluation.inputs`` (and so to summary.json); ``hashes``: the
    inputs' hashes from :func:`input_hashes_soon` on the same ``sources``, else they are hashed here."""
    return {
        "input_hashes": input_hashes(sources) if hashes is None else hashes.result(),
        "rubric_sha256": json_sha256(rubric),
        "engine_version": engine_version(),
    }
