"""Storing a batch: a report folder (summary.json + <code>.json) goes into the database in ONE transaction.

``fund evaluate --db``, ``fund history --db``, the upload job and ``db import`` all come through
:func:`store_folder` (with each rated fund's NAV series when the folder has ``nav_series.jsonl``), so a
batch stored directly and the same folder imported later are the same documents with the same identity. Identity is the hash of
(input file hashes, rubric hash, as-of, engine version), read from ``summary.json``'s ``inputs.provenance``;
a folder written before provenance was recorded is identified by its summary file's own hash instead.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, and_, exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from evaluator.app.storage.bulk import insert_rows
from evaluator.app.storage.nav_series import check_series, series_rows
from evaluator.app.storage.tables import FundDocument, FundResult, FundSeries, Run
from evaluator.core.fast_json import loads, loads_compact
from evaluator.core.outputs import path_inside, safe_filename
from evaluator.core.provenance import json_sha256
from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.reports import SERIES_FILE, report_schema, scale_problems, summary_schema
from evaluator.methodology.rubric_scale import GradeScale, scale_of

MAX_CODE_LEN = 200


class BatchError(ValueError):
    """A report folder that cannot be stored as it is (nothing was stored)."""


@dataclass(frozen=True)
class StoreResult:
    run_id: int
    created: bool
    funds: int
    as_of: str


@dataclass(frozen=True)
class Batch:
    summary: dict[str, Any]
    reports: list[tuple[str, dict[str, Any]]]  # (report text, parsed report)
    identity: str
    input_hashes: dict[str, str]
    rubric_hash: str | None
    engine_version: str
    series: list[tuple[str, str]] = field(default_factory=list)  # (fund code, nav_series.jsonl line)


def _load_json(path: Path, text: str | None) -> Any:
    try:
        return loads(path.read_text(encoding="utf-8") if text is None else text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BatchError(f"{path.name}: not readable JSON ({exc})") from None


def _plain_files(base: Path) -> set[str]:
    """Names of the folder's regular files that are not links: a report name among them that is also a
    safe file name is inside the folder without resolving it (one directory scan, not 15,000 resolves)."""
    try:
        with os.scandir(base) as entries:
            return {e.name for e in entries if not e.is_symlink() and e.is_file(follow_symlinks=False)}
    except OSError:
        return set()


def _misplaced(base: Path, name: str, plain: set[str]) -> str | None:
    """Why ``base / name`` is not a plain file name inside the folder, or None: a name among the folder's
    plain files that is also a safe file name is proven so by that alone; any other is resolved, as
    ``path_inside`` proves it."""
    stem = name[: -len(".json")]
    if name in plain and safe_filename(stem, default="") == stem:
        return None
    try:
        path = path_inside(base, stem, ".json")
    except ValueError:
        return f"file {name!r} would be outside the folder"
    return None if path.name == name else f"file {name!r} is not a plain file name in the folder"


def _problems(doc: Any, schema: dict[str, Any]) -> list[str]:
    return schema_problems(doc, schema)


def _read_reports(
    base: Path, summary: dict[str, Any], texts: Mapping[str, str], scale: dict[str, Any]
) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """(compact text, report) for each report summary.json lists, and every problem found."""
    reports: list[tuple[str, dict[str, Any]]] = []
    bad: list[str] = []
    rschema = report_schema()
    seen: set[str] = set()
    plain = _plain_files(base)
    for line in summary["funds"]:
        code, name = line.get("fund_code"), line.get("file")
        if not isinstance(code, str) or not code or len(code) > MAX_CODE_LEN or code in seen:
            bad.append(f"fund code {code!r} is empty, too long or repeated")
            continue
        seen.add(code)
        if name is None:  # the report could not be written (summary carries write_error)
            continue
        if not isinstance(name, str) or not name.endswith(".json"):
            bad.append(f"{code}: file name {name!r} is not a .json name")
            continue
        misplaced = _misplaced(base, name, plain)
        if misplaced is not None:
            bad.append(f"{code}: {misplaced}")
            continue
        try:
            text = texts.get(name)
            doc, compact = loads_compact((base / name).read_text(encoding="utf-8") if text is None else text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            bad.append(f"{name}: not readable JSON ({type(exc).__name__})")
            continue
        errs = _problems(doc, rschema) or scale_problems(doc, scale)
        if errs:
            bad.append(f"{name}: {errs[0]}")
        elif doc["fund_code"] != code or doc["as_of"] != summary["as_of"]:
            bad.append(f"{name}: fund code or as-of differs from summary.json")
        else:
            reports.append((compact, doc))
    return reports, bad


def read_folder(folder: str | Path, texts: Mapping[str, str] | None = None) -> Batch:
    """Read and check a report folder; raise :class:`BatchError` naming every problem found.

    ``texts``: the folder's files as just written (file name → text, the batch writer's
    ``BatchOutcome.texts``), read instead of the files; the same checks run on them."""
    base = Path(folder)
    texts = texts or {}
    if not (base / "summary.json").is_file():
        raise BatchError(f"{base} has no summary.json; is it a `fund evaluate --out` folder?")
    summary_text = texts.get("summary.json")
    summary_bytes = (base / "summary.json").read_bytes() if summary_text is None else summary_text.encode("utf-8")
    summary = _load_json(base / "summary.json", summary_text)
    scale = {"grade_scale": summary["grade_scale"]} if isinstance(summary, dict) and summary.get("grade_scale") else {}
    problems = _problems(summary, summary_schema()) or scale_problems(summary, scale)  # grades on the rubric's scale
    if problems:
        raise BatchError("summary.json does not match the summary schema: " + "; ".join(problems[:5]))
    series_check = check_series(base, texts.get(SERIES_FILE))  # in a worker, beside the reports' checks
    try:
        reports, bad = _read_reports(base, summary, texts, scale)
    except BaseException:
        series_check.cancel()
        raise
    series, problems = series_check.finish({doc["fund_code"] for _, doc in reports if doc["status"] == "ok"})
    bad += problems
    if bad:
        more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
        raise BatchError(f"{len(bad)} report(s) cannot be stored: " + "; ".join(bad[:10]) + more)
    prov = summary.get("inputs", {}).get("provenance") or {}
    if prov.get("input_hashes") and prov.get("engine_version"):
        input_hashes = {str(k): str(v) for k, v in prov["input_hashes"].items()}
        rubric_hash, version = prov.get("rubric_sha256"), str(prov["engine_version"])
    else:
        input_hashes = {"summary.json": hashlib.sha256(summary_bytes).hexdigest()}
        rubric_hash, version = None, "unknown"
    identity = json_sha256(
        {"inputs": input_hashes, "rubric": rubric_hash, "as_of": summary["as_of"], "engine": version}
    )
    return Batch(summary, reports, identity, input_hashes, rubric_hash, version, series)


def _document_rows(run_id: int, reports: Iterable[tuple[str, dict[str, Any]]]) -> list[dict]:
    return [
        {
            "run_id": run_id,
            "fund_code": doc["fund_code"],
            "metrics": doc.get("metrics") or {},
            "report": text,
            "model_evaluation": doc.get("model_evaluation"),
        }
        for text, doc in reports
    ]


def _result_rows(
    run_id: int, as_of: dt.date, reports: Iterable[tuple[str, dict[str, Any]]], scale: GradeScale, current: bool
) -> list[dict]:
    return [
        {
            "run_id": run_id,
            "as_of": as_of,
            "is_current": current,
            "fund_code": doc["fund_code"],
            "fund_name": doc.get("fund_name"),
            "company": doc.get("company"),
            "type": doc.get("type"),
            # a provisional grade (가등급) is stored apart: the rated-fund list ranks regular grades only
            "status": "provisional" if doc["status"] == "ok" and doc.get("provisional") else doc["status"],
            "grade": doc.get("grade"),
            "grade_rank": scale.rank(doc["grade"]) if doc.get("grade") is not None else None,
            "score": doc.get("score"),
            "percentile": doc.get("peer_percentile"),
            "set_amount_krw": doc.get("set_amount_krw"),
        }
        for text, doc in reports
    ]


def _newest(session: Session, as_of: dt.date) -> bool:
    """Whether no stored batch is of a later as-of (then no fund has a later result: every result row's
    as-of is its run's), so this batch's rows go in current, without an update of each."""
    return not session.scalar(select(exists().where(Run.as_of > as_of)))


def _mark_current(session: Session, run_id: int, as_of: dt.date, inserted_current: bool) -> None:
    """Make this run's rows current unless a fund already has a result for a later as-of (rows inserted
    current by a batch of the newest as-of need no second look)."""
    new_codes = select(FundResult.fund_code).where(FundResult.run_id == run_id)
    session.execute(
        update(FundResult)
        .where(
            FundResult.is_current.is_(True),
            FundResult.run_id != run_id,
            FundResult.as_of <= as_of,
            FundResult.fund_code.in_(new_codes),
        )
        .values(is_current=False)
    )
    if inserted_current:
        return
    later = aliased(FundResult)
    session.execute(
        update(FundResult)
        .where(
            FundResult.run_id == run_id,
            ~exists().where(and_(later.fund_code == FundResult.fund_code, later.as_of > as_of)),
        )
        .values(is_current=True)
    )


def _insert(session: Session, batch: Batch, source: str, as_of: dt.date) -> int:
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(7_318_001)))  # one writer keeps is_current right
    rubric = batch.summary["rubric"]
    run = Run(
        identity=batch.identity,
        as_of=as_of,
        rubric_name=str(rubric["name"]),
        rubric_version=str(rubric["version"]),
        rubric_hash=batch.rubric_hash,
        input_hashes=batch.input_hashes,
        engine_version=batch.engine_version,
        source=source,
        created_at=dt.datetime.now(dt.timezone.utc),
        funds_total=int(batch.summary["funds_total"]),
        summary={k: v for k, v in batch.summary.items() if k != "funds"},
        model_run=batch.summary.get("model_evaluation"),
        grade_scale=batch.summary.get("grade_scale"),
    )
    session.add(run)
    session.flush()
    current = _newest(session, as_of)
    rows = _result_rows(run.id, as_of, batch.reports, scale_of(batch.summary.get("grade_scale")), current)
    insert_rows(session, FundResult.__table__, rows)  # PostgreSQL: COPY; elsewhere one executemany
    insert_rows(session, FundDocument.__table__, _document_rows(run.id, batch.reports))
    insert_rows(session, FundSeries.__table__, series_rows(run.id, batch.series))
    _mark_current(session, run.id, as_of, current)
    return run.id


def _existing(engine: Engine, identity: str) -> int | None:
    with Session(engine) as session:
        return session.scalar(select(Run.id).where(Run.identity == identity))


def store_batch(
    engine: Engine, batch: Batch, *, source: str, finish: Callable[[Session, int], None] | None = None
) -> StoreResult:
    """Store ``batch`` in one transaction; a batch already stored is left alone (``created=False``).

    ``finish(session, run_id)`` runs inside that transaction before it commits (a job marks itself done
    there); if it raises, nothing is stored."""
    as_of = dt.date.fromisoformat(batch.summary["as_of"])
    existing = _existing(engine, batch.identity)
    if existing is None:
        try:
            with Session(engine) as session, session.begin():
                run_id = _insert(session, batch, source, as_of)
                if finish is not None:
                    finish(session, run_id)
            return StoreResult(run_id, True, len(batch.reports), batch.summary["as_of"])
        except IntegrityError:  # the same batch stored by someone else a moment ago
            existing = _existing(engine, batch.identity)
            if existing is None:
                raise
    return StoreResult(existing, False, len(batch.reports), batch.summary["as_of"])


def store_folder(
    engine: Engine, folder: str | Path, *, source: str = "import",
    finish: Callable[[Session, int], None] | None = None, texts: Mapping[str, str] | None = None,
) -> StoreResult:
    """:func:`read_folder` (``texts``: its files as just written) and :func:`store_batch`."""
    return store_batch(engine, read_folder(folder, texts), source=source, finish=finish)
