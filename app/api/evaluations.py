"""Uploads that start an evaluation job: NAV (+ optional meta and benchmark) files and an as-of date.

The files go to a private temporary folder; a background thread loads them with the same loaders as
``fund evaluate``, grades, writes the report folder and stores it as one batch. Job state (queued,
running with progress, done with the run id, failed with the loader's message) lives in the database,
with a heartbeat while it runs, so a job whose worker died is shown failed (:mod:`evaluator.app.storage.jobs`).
A failed job stores nothing: the batch is written in one transaction, which also marks the job done,
only after every step succeeded.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session
from starlette.datastructures import UploadFile

from evaluator.app.storage import jobs
from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.audit import record
from evaluator.app.storage.batches import store_folder
from evaluator.core.provenance import input_hashes_soon, provenance
from evaluator.domains.fund.data import infer_classes, load_universe
from evaluator.domains.fund.engine import evaluate_loaded
from evaluator.domains.fund.reports import write_reports
from evaluator.domains.fund.rubric import resolve_rubric

log = logging.getLogger("evaluator.jobs")
ALLOWED_SUFFIXES = (".csv", ".xlsx", ".xls")  # other names are read by content (see _suffix)
ROLES = ("data", "meta", "benchmark")
CHUNK = 1 << 20


class UploadError(ValueError):
    """An upload refused before any job starts (too large, wrong kind of file, bad date)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Staged:
    folder: Path
    files: dict[str, Path]  # role -> path
    as_of: dt.date | None
    params: dict[str, Any]


def _suffix(filename: str, head: bytes) -> str:
    """The loader picks its reader by suffix: keep a known one, else tell Excel from text by its magic."""
    suffix = Path(filename).suffix.lower()
    if suffix in ALLOWED_SUFFIXES:
        return suffix
    if head.startswith(b"PK\x03\x04"):
        return ".xlsx"
    return ".xls" if head.startswith(b"\xd0\xcf\x11\xe0") else ".csv"


def parse_as_of(text: str | None) -> dt.date | None:
    """An optional as-of date written YYYY-MM-DD (a calendar date), read once here; else :class:`UploadError`."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        if len(text) != 10:
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UploadError(f"as_of: 기준일 {text[:20]!r}은(는) 날짜가 아닙니다 (YYYY-MM-DD)") from None


async def stage_uploads(files: dict[str, UploadFile | None], as_of: str | None, max_bytes: int) -> Staged:
    """Copy the uploads into a new private folder, refusing any over ``max_bytes``.

    A form's empty file input (no name, no bytes) counts as absent; any other file goes to the job, whose
    loader says clearly what is wrong with it."""
    files = {role: f for role, f in files.items() if f is not None and (f.filename or (f.size or 0) > 0)}
    if files.get("data") is None:
        raise UploadError("NAV 파일(data)이 필요합니다")
    day = parse_as_of(as_of)
    folder = Path(tempfile.mkdtemp(prefix="evaluator-upload-"))
    staged: dict[str, Path] = {}
    sizes: dict[str, Any] = {}
    try:
        for role in ROLES:
            upload = files.get(role)
            if upload is None:
                continue
            target = folder / role  # our own name: nothing from the client reaches the path
            size, head = 0, b""
            with target.open("wb") as out:
                while chunk := await upload.read(CHUNK):
                    head = head or chunk[:8]
                    size += len(chunk)
                    if size > max_bytes:
                        raise UploadError(f"{role}: 파일이 {max_bytes // (1 << 20)} MiB 제한보다 큽니다", 413)
                    out.write(chunk)
            target = target.rename(folder / f"{role}{_suffix(upload.filename or '', head)}")
            staged[role] = target
            sizes[role] = {"name": (upload.filename or role)[:200], "bytes": size}
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Staged(folder, staged, day, {"as_of": day.isoformat() if day else None, "files": sizes})


def _evaluate(engine: Engine, job_id: int, staged: Staged, beat: jobs.Heartbeat) -> None:
    """Load, grade, write, and store with the job marked done in the same transaction."""
    def step(stage: str, progress: float) -> None:
        beat.check()
        if not jobs.set_state(engine, job_id, state="running", stage=stage, progress=progress):
            raise jobs.JobAbandoned(jobs.ABANDONED)

    step("입력 파일 읽는 중", 0.05)
    doc = resolve_rubric(None)
    universe = load_universe(staged.files["data"], meta=staged.files.get("meta"),
                             benchmark=staged.files.get("benchmark"))
    universe = infer_classes(universe)  # share-class families from names, as `fund evaluate` does
    step("지표와 등급 계산 중", 0.3)
    hashes = input_hashes_soon(universe.sources)  # on the next core while the engine grades
    evaluation = evaluate_loaded(universe, doc, as_of=staged.as_of)
    evaluation.inputs["provenance"] = provenance(universe.sources, doc, hashes)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        share = done / max(total, 1)
        if share - last[0] >= 0.1 or done == total:
            last[0] = share
            step("보고서 쓰는 중", 0.5 + 0.4 * share)

    outcome = write_reports(evaluation, staged.folder / "reports", warnings=universe.warnings,
                            on_progress=progress)
    step("데이터베이스에 저장 중", 0.92)
    beat.check()
    result = store_folder(engine, outcome.folder, source="upload", texts=outcome.texts,
                          finish=lambda session, run_id: jobs.mark_done(session, job_id, run_id, None))
    if not result.created:  # nothing new was stored: say which batch already holds it
        note = "같은 입력·방법론·기준일의 평가가 이미 저장되어 있습니다"
        jobs.set_state(engine, job_id, state="done", progress=1.0, stage="완료", run_id=result.run_id,
                       message=note)


def run_job(engine: Engine, job_id: int, staged: Staged) -> None:
    """Run :func:`_evaluate` with a heartbeat; every outcome ends in the job row. A background thread."""
    try:
        with jobs.Heartbeat(engine, job_id) as beat:
            _evaluate(engine, job_id, staged, beat)
    except Exception as exc:  # the job row carries the reason; nothing was stored
        message = str(exc) or type(exc).__name__
        for role, path in staged.files.items():  # the client's file name, not our private folder
            message = message.replace(str(path), staged.params["files"][role]["name"])
        log.info("job %d failed: %s", job_id, type(exc).__name__)
        try:
            jobs.set_state(engine, job_id, state="failed", stage="실패", message=message[:4000])
        except Exception:
            log.error("job %d: could not record its failure", job_id)
    finally:
        shutil.rmtree(staged.folder, ignore_errors=True)


def start_job(engine: Engine, who: Principal, staged: Staged, address: str | None = None) -> int:
    """Create the job, record the upload in the audit log (file names and sizes, never contents), start it."""
    job_id = jobs.create_job(engine, who.key_id, "evaluate", staged.params)
    with Session(engine) as session:
        record(session, who, "upload", {"job_id": job_id, **staged.params}, address=address)
    threading.Thread(target=run_job, args=(engine, job_id, staged), name=f"job-{job_id}", daemon=True).start()
    return job_id
