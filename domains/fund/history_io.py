"""Writing a grade history: ``history.parquet``, ``history.csv``, ``levels.parquet``, ``latest/``, ``summary.json``.

``latest/`` is an ordinary report folder (``fund evaluate`` layout, so ``db import`` and ``fund
agreement`` read it) at the last as-of date; each report also carries its ``grade_history``. Every file
is written atomically; a non-empty DIR needs ``force``.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator.domains.fund.batch import BatchOutcome, write_reports
from evaluator.domains.fund.history import History
from evaluator.methodology.outputs import atomic_write_json, atomic_write_text, prepare_output_dir

HISTORY_PARQUET = "history.parquet"
HISTORY_CSV = "history.csv"
LEVELS = "levels.parquet"
SUMMARY = "summary.json"
LATEST = "latest"


def _atomic_parquet(frame: pd.DataFrame, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def history_summary(
    history: History, *, freq: str, inputs: Mapping[str, Any], warnings: Sequence[str], latest: BatchOutcome
) -> dict[str, Any]:
    """What the run did: dates, funds, grade counts per date, the rubric, where the files are."""
    rubric = history.last.rubric
    table = history.table
    return {
        "schema_version": 1,
        "kind": "fund_history",
        "freq": freq,
        "as_of_dates": history.dates,
        "funds": int(table["fund_code"].nunique()),
        "rows": len(table),
        "rated_rows": int((table["status"] == "ok").sum()),
        "counts_by_date": history.counts,
        "rubric": {"name": str(rubric["name"]), "version": str(rubric["version"])},
        "inputs": dict(inputs),
        "warnings": list(warnings),
        "files": {
            "history_parquet": HISTORY_PARQUET,
            "history_csv": HISTORY_CSV,
            "levels": LEVELS,
            "latest": LATEST,
            "latest_reports": len(latest.files),
            "latest_failures": dict(latest.failures),
        },
    }


def write_history(
    history: History,
    out_dir: str | os.PathLike[str],
    *,
    freq: str,
    force: bool = False,
    warnings: Sequence[str] = (),
    inputs: Mapping[str, Any] | None = None,
) -> Path:
    """Write the whole history folder; returns ``DIR/summary.json``."""
    folder = prepare_output_dir(out_dir, force=force)
    _atomic_parquet(history.table, folder / HISTORY_PARQUET)
    if history.levels is not None:
        _atomic_parquet(history.levels, folder / LEVELS)
    buf = io.StringIO()
    history.table.to_csv(buf, index=False, lineterminator="\n")
    atomic_write_text(folder / HISTORY_CSV, buf.getvalue(), encoding="utf-8-sig")
    latest = write_reports(history.last, folder / LATEST, force=True, warnings=warnings)
    for code, path in history.grade_paths():
        name = latest.files.get(code)
        if name is None:
            continue
        target = latest.folder / name
        doc = json.loads(target.read_text(encoding="utf-8"))
        doc["grade_history"] = path
        atomic_write_json(target, doc)
    summary = history_summary(history, freq=freq, inputs=inputs or {}, warnings=warnings, latest=latest)
    return atomic_write_json(folder / SUMMARY, summary)
