"""Writing a grade history: ``history.parquet``, ``history.csv``, ``levels.parquet``, ``latest/``, ``summary.json``.

``latest/`` is an ordinary report folder (``fund evaluate`` layout, so ``db import`` and ``fund
agreement`` read it) at the last as-of date; each report also carries its ``grade_history``. Every file
is written atomically; a non-empty DIR needs ``force``. ``latest/`` is written whole into a hidden
folder beside it and then swapped in, so with ``force`` no report of an earlier run (a fund that is no
longer in the data) survives, and an interrupted run leaves the previous ``latest/`` intact.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator.core.outputs import atomic_write_json, atomic_write_text, prepare_output_dir
from evaluator.domains.fund.history.run import History
from evaluator.domains.fund.reports.batch import BatchOutcome, write_reports

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


def _swap_in(staging: Path, target: Path) -> None:
    """Put the finished ``staging`` folder in place of ``target``: rename the old one aside, rename the
    new one in (each rename is atomic), then delete the old one."""
    old = None
    if target.exists() or target.is_symlink():
        old = target.with_name(f".{target.name}.{os.getpid()}.old")
        if old.exists():
            shutil.rmtree(old)
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()


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
    staging = folder / f".{LATEST}.{os.getpid()}.tmp"
    try:
        if staging.exists():
            shutil.rmtree(staging)
        latest = write_reports(history.last, staging, force=True, warnings=warnings)
        for code, path in history.grade_paths():
            name = latest.files.get(code)
            if name is None:
                continue
            target = latest.folder / name
            doc = json.loads(target.read_text(encoding="utf-8"))
            doc["grade_history"] = path
            atomic_write_json(target, doc)
        _swap_in(staging, folder / LATEST)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    final = folder / LATEST
    latest = dataclasses.replace(
        latest,
        folder=final,
        summary_json=final / latest.summary_json.name,
        summary_csv=final / latest.summary_csv.name,
    )
    summary = history_summary(history, freq=freq, inputs=inputs or {}, warnings=warnings, latest=latest)
    return atomic_write_json(folder / SUMMARY, summary)
