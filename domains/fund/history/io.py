"""Writing a grade history: ``history.parquet``, ``history.csv``, ``levels.parquet``, ``latest/``, ``summary.json``.

``latest/`` is an ordinary report folder (``fund evaluate`` layout, so ``db import`` and ``fund
agreement`` read it) at the last as-of date; each report also carries its ``grade_history``. Every file
is written atomically; a non-empty DIR needs ``force``. The whole folder is written beside DIR and then
swapped in, so with ``force`` no report of an earlier run (a fund that is no longer in the data) survives,
and an interrupted run leaves the previous history intact.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator.core.outputs import atomic_write_json, atomic_write_text, replacing_dir, write_staged_json
from evaluator.domains.fund.history.run import History
from evaluator.domains.fund.reports import BatchOutcome, write_reports

HISTORY_PARQUET = "history.parquet"
HISTORY_CSV = "history.csv"
LEVELS = "levels.parquet"
COMPANIES = "companies.parquet"
COMPANY_FUNDS = "company_funds.parquet"
SUMMARY = "summary.json"
LATEST = "latest"
WRITES = (HISTORY_PARQUET, HISTORY_CSV, LEVELS, COMPANIES, COMPANY_FUNDS, SUMMARY, LATEST)
"""Everything ``write_history`` puts in its folder (``--force`` replaces nothing else)."""


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
        "company_counts_by_date": _company_counts(history),
        "rubric": {"name": str(rubric["name"]), "version": str(rubric["version"])},
        **({"grade_scale": dict(rubric["grade_scale"])} if rubric.get("grade_scale") else {}),
        "inputs": dict(inputs),
        "warnings": list(warnings),
        "files": {
            "history_parquet": HISTORY_PARQUET,
            "history_csv": HISTORY_CSV,
            "levels": LEVELS,
            **({"companies": COMPANIES, "company_funds": COMPANY_FUNDS} if history.companies is not None else {}),
            "latest": LATEST,
            "latest_reports": len(latest.files),
            "latest_failures": dict(latest.failures),
        },
    }


def _company_counts(history: History) -> dict[str, dict[str, int]] | None:
    """Per as-of date: how many companies got each grade, and how many were not rated."""
    if history.companies is None:
        return None
    t = history.companies
    keys = t["grade"].astype("Int64").astype(str).where(t["grade"].notna(), t["status"])
    out: dict[str, dict[str, int]] = {}
    for (day, key), n in t.groupby([t["as_of"].astype(str), keys], sort=True).size().items():
        out.setdefault(str(day), {})[str(key)] = int(n)
    return out


def write_history(
    history: History,
    out_dir: str | os.PathLike[str],
    *,
    freq: str,
    force: bool = False,
    warnings: Sequence[str] = (),
    inputs: Mapping[str, Any] | None = None,
) -> Path:
    """Write the whole history folder; returns ``DIR/summary.json``.

    The folder is written beside DIR and swapped in whole: an interrupted ``--force`` run leaves the
    previous history (tables, ``latest/`` and summary together) as it was, never a mix of the two runs.
    """
    final = Path(out_dir)
    with replacing_dir(final, force=force, owned=WRITES) as folder:
        _write_tables(history, folder)
        latest = write_reports(history.last, folder / LATEST, force=True, warnings=warnings)
        for code, path in history.grade_paths():
            name = latest.files.get(code)
            if name is None:
                continue
            target = folder / LATEST / name
            doc = json.loads(target.read_text(encoding="utf-8"))
            doc["grade_history"] = path
            write_staged_json(target, doc)
        latest = dataclasses.replace(
            latest,
            folder=final / LATEST,
            summary_json=final / LATEST / latest.summary_json.name,
            summary_csv=final / LATEST / latest.summary_csv.name,
        )
        summary = history_summary(history, freq=freq, inputs=inputs or {}, warnings=warnings, latest=latest)
        atomic_write_json(folder / SUMMARY, summary)
    return final / SUMMARY


def _write_tables(history: History, folder: Path) -> None:
    _atomic_parquet(history.table, folder / HISTORY_PARQUET)
    if history.levels is not None:
        _atomic_parquet(history.levels, folder / LEVELS)
    if history.companies is not None and history.company_funds is not None:
        _atomic_parquet(history.companies, folder / COMPANIES)
        _atomic_parquet(history.company_funds, folder / COMPANY_FUNDS)
    buf = io.StringIO()
    history.table.to_csv(buf, index=False, lineterminator="\n")
    atomic_write_text(folder / HISTORY_CSV, buf.getvalue(), encoding="utf-8-sig")
