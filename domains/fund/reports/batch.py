"""Writing a batch: ``DIR/<fund_code>.json`` per fund, then ``DIR/summary.json`` and ``DIR/summary.csv``.

The folder is written whole beside DIR and swapped in (``replacing_dir``: one ``sync``, then renames), so
every file of it is the old batch's or the new one's; each rated fund's NAV series lines are made in a
worker process (:mod:`~evaluator.core.forked`), which writes them itself, while the reports are built and written. An existing
non-empty DIR needs ``force``; a fund code can never put a
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
    path_inside,
    replacing_dir,
    safe_filename,
    stage_record,
    write_staged_records,
    write_staged_text,
)
from evaluator.domains.fund.engine import Evaluation, benchmark_names, period_returns, series_lines
from evaluator.domains.fund.reports.report import build_report, build_summary, distribution_csv_rows
from evaluator.domains.fund.task import add_model_to_summary

SERIES_FILE = "nav_series.jsonl"
"""The NAV series file a batch folder holds (storage reads it by this name)."""

RESERVED = {"summary"}


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


def _inside(base: str, name: str) -> str:
    """``base/name`` for a name from :func:`report_names` (safe characters, no leading dot), checked so.

    :func:`~evaluator.core.outputs.path_inside` proves the same by resolving every path; with 15,000 names
    from ``safe_filename`` the character check is the proof, at a fraction of the cost (and a plain string
    costs a fraction of a ``Path``)."""
    stem = name[: -len(".json")]
    if not name.endswith(".json") or safe_filename(stem, default="") != stem:
        return str(path_inside(Path(base), stem, ".json"))
    return os.path.join(base, name)


Written = tuple[list[str], str]
"""What the series worker made: the funds' codes in the file's order, and the file's text."""


def _series(evaluation: Evaluation, target: str) -> Written | str | None:
    """Each rated fund's ``nav_series.jsonl`` line (:mod:`~evaluator.domains.fund.engine.nav_series`) written
    to ``target``; returns the codes and the text (one string: it comes back through the pipe at memory
    speed, where 15,000 separate lines took seconds to pickle, join and write). None without levels, the
    reason when they could not be made (a chart must never cost the batch its reports)."""
    if evaluation.levels is None:
        return None
    try:
        codes: list[str] = []
        lines: list[str] = []
        for code, line in series_lines(evaluation):
            codes.append(code)
            lines.append(f"{line}\n")
        text = "".join(lines)
        write_staged_text(Path(target), text)
        return codes, text
    except Exception as exc:
        return f"기준가 추이({SERIES_FILE})를 만들지 못했습니다: {type(exc).__name__}: {exc}"


def _series_result(series: Forked[Written | str | None]) -> Written | str | None:
    """The worker's codes and text; a worker that died costs the chart, never the reports."""
    try:
        return series.result()
    except forked.WorkerDied as exc:
        return f"기준가 추이({SERIES_FILE})를 만들지 못했습니다: {exc}"


def _write_series(
    written: Written | str | None, folder: Path, files: Mapping[str, str], texts: dict[str, str]
) -> list[str]:
    """``nav_series.jsonl`` as the worker wrote it (its text into ``texts``), less the lines of funds whose
    reports were not written; a failure to make it loses no report: the batch goes without the file (a
    half-written one removed) and says so."""
    target = folder / SERIES_FILE
    if written is None or isinstance(written, str):
        target.unlink(missing_ok=True)
        return [] if written is None else [written]
    codes, text = written
    if any(code not in files for code in codes):  # a report failed: its chart goes with it
        lines = text.splitlines(keepends=True)
        text = "".join(line for code, line in zip(codes, lines, strict=True) if code in files)
        write_staged_text(target, text)
    texts[SERIES_FILE] = text
    return []


def _written(
    writer: Forked[dict[int, str]], sent: list[tuple[str, str, str]], files: dict[str, str],
    failures: dict[str, str], texts: dict[str, str],
) -> None:
    """Wait for the writer; each report it wrote into ``files`` and ``texts`` (in fund order), each it could
    not into ``failures``."""
    failed = writer.result()
    for number, (code, name, text) in enumerate(sent):
        if number in failed:
            failures[code] = failed[number]
        else:
            files[code] = name
            texts[name] = text


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
    files: dict[str, str] = {}
    failures: dict[str, str] = {}
    texts: dict[str, str] = {}
    total = len(evaluation.funds)
    every = max(1, total // 200)  # a progress bar needs ~200 updates, not one per fund
    base = str(folder.resolve())
    facts = page_facts(evaluation)
    series = forked.start(_series, evaluation, os.path.join(base, SERIES_FILE))  # on the next core, meanwhile
    writer = forked.start_fed(write_staged_records)  # it creates the report files as they are built
    sent: list[tuple[str, str, str]] = []  # (fund code, file name, text) of each report the writer was sent
    try:
        for done, fund in enumerate(evaluation.funds, 1):
            try:
                target = _inside(base, names[fund.fund_code])
                file_name = os.path.basename(target)
                doc = build_report(fund, evaluation.rubric)
                doc.update(facts.get(fund.fund_code, {}))
                if model_evaluations is not None:
                    doc["model_evaluation"] = model_evaluations.get(fund.fund_code)
                text = dumps_indented(doc) + "\n"
                if writer is None:
                    write_staged_text(Path(target), text)  # in the staging folder: the swap makes the batch atomic
                    files[fund.fund_code] = file_name
                    texts[file_name] = text
                else:
                    record = stage_record(target, text)
            except Exception as exc:  # one fund's failure must not lose the others' reports
                failures[fund.fund_code] = f"{type(exc).__name__}: {exc}"
            else:
                if writer is not None and writer.feed is not None:
                    writer.feed.write(record)  # outside the fund's try: a writer gone fails the batch
                    sent.append((fund.fund_code, file_name, text))
            if on_progress is not None and (done % every == 0 or done == total):
                on_progress(done, total)
        if writer is not None:
            _written(writer, sent, files, failures, texts)
        series_written = _series_result(series)
    except BaseException:
        for worker in (series, writer):
            if worker is not None:
                worker.cancel()
        raise
    warnings = [*warnings, *_write_series(series_written, folder, files, texts)]
    summary = build_summary(evaluation, files, warnings=warnings, failures=failures)
    if model_evaluations is not None:
        add_model_to_summary(summary, model_evaluations, model_run or {})
    texts["summary.json"] = dumps_indented(summary) + "\n"
    summary_json = write_staged_text(folder / "summary.json", texts["summary.json"])
    rows = distribution_csv_rows(summary)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    summary_csv = write_staged_text(folder / "summary.csv", buf.getvalue(), encoding="utf-8-sig")
    return BatchOutcome(
        folder=folder, files=files, failures=failures, summary_json=summary_json, summary_csv=summary_csv,
        texts=texts,
    )
