"""Writing a batch: ``DIR/<fund_code>.json`` per fund, then ``DIR/summary.json`` and ``DIR/summary.csv``.

Every file is written atomically; an existing non-empty DIR needs ``force``; a fund code can never put a
file outside DIR (codes are sanitised, and two codes that sanitise alike, or one that would be called
``summary``, get a short hash suffix). A report that fails to build is listed in the summary with its
error instead of stopping the batch.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluator.domains.fund.report import build_report, build_summary, distribution_csv_rows
from evaluator.domains.fund.results import Evaluation
from evaluator.methodology.outputs import (
    atomic_write_json,
    atomic_write_text,
    path_inside,
    prepare_output_dir,
    safe_filename,
)

RESERVED = {"summary"}


@dataclass(frozen=True)
class BatchOutcome:
    folder: Path
    files: dict[str, str]
    failures: dict[str, str]
    summary_json: Path
    summary_csv: Path


def report_names(codes: Sequence[str]) -> dict[str, str]:
    """Fund code → file name (without folder), unique and safe."""
    names: dict[str, str] = {}
    used: set[str] = set(RESERVED)
    for code in codes:
        base = safe_filename(code, default="fund")
        name = base
        if name.lower() in used:
            name = f"{base}-{hashlib.sha1(code.encode('utf-8')).hexdigest()[:8]}"
        used.add(name.lower())
        names[code] = name + ".json"
    return names


def write_reports(
    evaluation: Evaluation,
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    warnings: Sequence[str] = (),
    on_progress: Callable[[int, int], None] | None = None,
) -> BatchOutcome:
    """Write every fund's report and the summaries; return where they went and what failed."""
    folder = prepare_output_dir(out_dir, force=force)
    names = report_names([f.fund_code for f in evaluation.funds])
    files: dict[str, str] = {}
    failures: dict[str, str] = {}
    total = len(evaluation.funds)
    for done, fund in enumerate(evaluation.funds, 1):
        try:
            target = path_inside(folder, names[fund.fund_code][: -len(".json")], ".json")
            atomic_write_json(target, build_report(fund, evaluation.rubric))
            files[fund.fund_code] = target.name
        except Exception as exc:  # one fund's failure must not lose the others' reports
            failures[fund.fund_code] = f"{type(exc).__name__}: {exc}"
        if on_progress is not None:
            on_progress(done, total)
    summary = build_summary(evaluation, files, warnings=warnings, failures=failures)
    summary_json = atomic_write_json(folder / "summary.json", summary)
    rows = distribution_csv_rows(summary)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    summary_csv = atomic_write_text(folder / "summary.csv", buf.getvalue(), encoding="utf-8-sig")
    return BatchOutcome(
        folder=folder, files=files, failures=failures, summary_json=summary_json, summary_csv=summary_csv
    )
