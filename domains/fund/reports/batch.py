"""Writing a batch: ``DIR/<fund_code>.json`` per fund, then ``DIR/summary.json`` and ``DIR/summary.csv``.

Every file is written atomically; an existing non-empty DIR needs ``force``; a fund code can never put a
file outside DIR (codes are sanitised, and two codes that sanitise alike, or one that would be called
``summary``, get a short hash suffix). A report that fails to build is listed in the summary with its
error instead of stopping the batch. With a model's evaluations (``fund evaluate --model``) each report
carries ``model_evaluation`` and the summary the agreement counts.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.core import forked
from evaluator.core.fast_json import dumps_indented
from evaluator.core.forked import Forked
from evaluator.core.outputs import (
    atomic_write_text,
    path_inside,
    replacing_dir,
    safe_filename,
    write_staged_files,
)
from evaluator.domains.fund.engine import Evaluation, benchmark_names, period_returns, series_lines
from evaluator.domains.fund.reports.report import build_report, build_summary, distribution_csv_rows
from evaluator.domains.fund.task import add_model_to_summary

SERIES_FILE = "nav_series.jsonl"
"""The NAV series file a batch folder holds (storage reads it by this name)."""

RESERVED = {"summary"}
WRITE_CHUNK = 2_500
"""Reports a writer worker takes at a time: a 15,000-fund batch is written in six, while the next are built."""


@dataclass(frozen=True)
class BatchOutcome:
    folder: Path
    files: dict[str, str]
    failures: dict[str, str]
    summary_json: Path
    summary_csv: Path
    texts: dict[str, str] = field(default_factory=dict, repr=False)
    """The folder's report, summary and series files as written (file name → text): storing the batch
    right after writing it reads these instead of reading the files back."""


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


def _inside(base: Path, name: str) -> Path:
    """``base / name`` for a name from :func:`report_names` (safe characters, no leading dot), checked so.

    :func:`~evaluator.core.outputs.path_inside` proves the same by resolving every path; with 15,000 names
    from ``safe_filename`` the character check is the proof, at a fraction of the cost."""
    stem = name[: -len(".json")]
    if not name.endswith(".json") or safe_filename(stem, default="") != stem:
        return path_inside(base, stem, ".json")
    return base / name


def _series(evaluation: Evaluation) -> list[tuple[str, str]] | str | None:
    """Each rated fund's ``nav_series.jsonl`` line (:mod:`~evaluator.domains.fund.engine.nav_series`); None
    without levels, the reason when they could not be made (a chart must never cost the batch its reports)."""
    if evaluation.levels is None:
        return None
    try:
        return list(series_lines(evaluation))
    except Exception as exc:
        return f"기준가 추이({SERIES_FILE})를 만들지 못했습니다: {type(exc).__name__}: {exc}"


def _write_series(
    lines: list[tuple[str, str]] | str | None, folder: Path, files: Mapping[str, str], texts: dict[str, str]
) -> list[str]:
    """``nav_series.jsonl``: the lines of the funds whose reports were written, for charts; a stale one never
    outlives a rerun. A failure to make them loses no report: the batch is written without the file and says so."""
    target = folder / SERIES_FILE
    target.unlink(missing_ok=True)
    if lines is None:
        return []
    if isinstance(lines, str):
        return [lines]
    texts[SERIES_FILE] = "".join(f"{line}\n" for code, line in lines if code in files)
    atomic_write_text(target, texts[SERIES_FILE])
    return []


def _start_writing(built: list[tuple[str, Path, str]], writers: list[tuple[int, Any]]) -> Forked[dict[int, str]]:
    """A worker writing the reports built since the last one started (the next core creates the files while
    this one builds the next reports)."""
    start = writers[-1][0] if writers else 0
    return forked.start(write_staged_files, [(path, text) for _, path, text in built[start:]])


def _written(
    built: list[tuple[str, Path, str]], writers: list[tuple[int, Forked[dict[int, str]]]], failures: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Wait for the writers; fund code → file name and file name → text of the reports written, in fund
    order, and each file that could not be written added to ``failures``."""
    failed: dict[int, str] = {}
    start = 0
    for end, writer in writers:
        failed.update({start + i: error for i, error in writer.result().items()})
        start = end
    files: dict[str, str] = {}
    texts: dict[str, str] = {}
    for i, (code, path, text) in enumerate(built):
        if i in failed:
            failures[code] = failed[i]
        else:
            files[code] = path.name
            texts[path.name] = text
    return files, texts


def page_facts(evaluation: Evaluation) -> dict[str, dict[str, Any]]:
    """Per fund, what its page shows beside the grade: period returns against its 유형, the benchmark's
    name, the other share classes of its portfolio. A failure here costs the facts, never a report."""
    try:
        returns, benchmarks = period_returns(evaluation), benchmark_names(evaluation)
    except Exception:
        returns, benchmarks = {}, {}
    families: dict[str, list[str]] = {}
    for fund in evaluation.funds:
        if fund.portfolio_code:
            families.setdefault(fund.portfolio_code, []).append(fund.fund_code)
    out: dict[str, dict[str, Any]] = {}
    for fund in evaluation.funds:
        doc: dict[str, Any] = {}
        if fund.fund_code in returns:
            doc["period_returns"] = returns[fund.fund_code]
        if fund.fund_code in benchmarks:
            doc["benchmark_name"] = benchmarks[fund.fund_code]
        others = [c for c in families.get(fund.portfolio_code or "", []) if c != fund.fund_code]
        if others:
            doc["share_classes"] = others
        out[fund.fund_code] = doc
    return out


def batch_file(name: str) -> bool:
    """Whether a batch folder's entry is the batch writer's own (reports, summaries, series)."""
    return name.endswith(".json") or name in ("summary.csv", SERIES_FILE)


def write_reports(
    evaluation: Evaluation,
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    warnings: Sequence[str] = (),
    on_progress: Callable[[int, int], None] | None = None,
    model_evaluations: Mapping[str, Mapping[str, Any] | None] | None = None,
    model_run: Mapping[str, Any] | None = None,
) -> BatchOutcome:
    """Write every fund's report and the summaries; return where they went and what failed.

    ``model_evaluations`` (fund code → a model's evaluation) adds ``model_evaluation`` to every report
    (null for funds without one) and ``model_run`` (model, adapter, generation settings) to the summary.
    The folder is written beside ``out_dir`` and swapped in whole, so a batch replaced with ``force`` and
    interrupted leaves the old batch as it was, never old reports beside a new summary.
    """
    with replacing_dir(out_dir, force=force, owned=batch_file) as staging:
        outcome = _write_batch(evaluation, staging, warnings, on_progress, model_evaluations, model_run)
    final = Path(out_dir)
    return BatchOutcome(
        folder=final, files=outcome.files, failures=outcome.failures,
        summary_json=final / outcome.summary_json.name, summary_csv=final / outcome.summary_csv.name,
        texts=outcome.texts,
    )


def _write_batch(
    evaluation: Evaluation,
    folder: Path,
    warnings: Sequence[str],
    on_progress: Callable[[int, int], None] | None,
    model_evaluations: Mapping[str, Mapping[str, Any] | None] | None,
    model_run: Mapping[str, Any] | None,
) -> BatchOutcome:
    names = report_names([f.fund_code for f in evaluation.funds])
    failures: dict[str, str] = {}
    built: list[tuple[str, Path, str]] = []  # (fund code, file, text) in fund order
    writers: list[tuple[int, Forked[dict[int, str]]]] = []  # (end of its reports in built, worker)
    total = len(evaluation.funds)
    every = max(1, total // 200)  # a progress bar needs ~200 updates, not one per fund
    base = folder.resolve()
    facts = page_facts(evaluation)
    try:
        for done, fund in enumerate(evaluation.funds, 1):
            try:
                target = _inside(base, names[fund.fund_code])
                doc = build_report(fund, evaluation.rubric)
                doc.update(facts.get(fund.fund_code, {}))
                if model_evaluations is not None:
                    doc["model_evaluation"] = model_evaluations.get(fund.fund_code)
                built.append((fund.fund_code, target, dumps_indented(doc) + "\n"))
            except Exception as exc:  # one fund's failure must not lose the others' reports
                failures[fund.fund_code] = f"{type(exc).__name__}: {exc}"
            if len(built) - (writers[-1][0] if writers else 0) >= WRITE_CHUNK:
                writers.append((len(built), _start_writing(built, writers)))
            if on_progress is not None and (done % every == 0 or done == total):
                on_progress(done, total)
        if len(built) > (writers[-1][0] if writers else 0):
            writers.append((len(built), _start_writing(built, writers)))
        lines = _series(evaluation)  # while the workers write
    except BaseException:
        for _, writer in writers:
            writer.cancel()
        raise
    files, texts = _written(built, writers, failures)
    warnings = [*warnings, *_write_series(lines, folder, files, texts)]
    summary = build_summary(evaluation, files, warnings=warnings, failures=failures)
    if model_evaluations is not None:
        add_model_to_summary(summary, model_evaluations, model_run or {})
    texts["summary.json"] = dumps_indented(summary) + "\n"
    summary_json = atomic_write_text(folder / "summary.json", texts["summary.json"])
    rows = distribution_csv_rows(summary)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    summary_csv = atomic_write_text(folder / "summary.csv", buf.getvalue(), encoding="utf-8-sig")
    return BatchOutcome(
        folder=folder, files=files, failures=failures, summary_json=summary_json, summary_csv=summary_csv,
        texts=texts,
    )
