"""Background jobs' state in the database, so every worker can show a job another worker runs.

A running job's worker writes ``heartbeat_at`` every :data:`HEARTBEAT_EVERY_S` (:class:`Heartbeat`). A job
still queued or running whose heartbeat is older than :data:`STALE_AFTER` lost its worker (the process was
killed, the machine restarted): reading it, listing it, or a server starting up marks it failed with
:data:`ABANDONED`. Nothing of it was stored: its batch is written in one transaction that also marks the
job done (:func:`mark_done`), and that transaction refuses a job no longer running.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from evaluator.app.storage.tables import Job

log = logging.getLogger("evaluator.jobs")
STATES = ("queued", "running", "done", "failed")
LIVE = ("queued", "running")
HEARTBEAT_EVERY_S = 15.0
STALE_AFTER = dt.timedelta(minutes=2)  # eight missed heartbeats: the worker is gone, not busy
ABANDONED = (
    f"작업자가 중단되어 작업이 실패했습니다 ({STALE_AFTER.seconds // 60}분 넘게 작업자의 신호가 없었습니다). "
    "저장된 것은 없습니다. 파일을 다시 올려 주세요. / The worker stopped (no heartbeat for over "
    f"{STALE_AFTER.seconds // 60} minutes); nothing was stored. Upload the files again."
)


class JobAbandoned(RuntimeError):
    """The job was declared failed (its heartbeat was missed) while its worker still ran: stop, store nothing."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)  # SQLite drops it


def create_job(engine: Engine, key_id: str, kind: str, params: dict[str, Any]) -> int:
    with Session(engine) as session, session.begin():
        now = _now()
        job = Job(
            key_id=key_id,
            kind=kind,
            state="queued",
            progress=0.0,
            stage="대기 중",
            message=None,
            params=params,
            run_id=None,
            created_at=now,
            updated_at=now,
            heartbeat_at=now,
        )
        session.add(job)
        session.flush()
        return int(job.id)


def set_state(engine: Engine, job_id: int, **values: Any) -> bool:
    """Update some of state, progress, stage, message, run_id of a job still queued or running (one short
    transaction, which is a heartbeat too); False when the job had already ended (e.g. declared abandoned)."""
    unknown = set(values) - {"state", "progress", "stage", "message", "run_id"}
    if unknown or values.get("state", "queued") not in STATES:
        raise ValueError(f"bad job update {sorted(values)}")
    with Session(engine) as session, session.begin():
        now = _now()
        done = session.execute(
            update(Job)
            .where(Job.id == job_id, Job.state.in_(LIVE))
            .values(**values, updated_at=now, heartbeat_at=now)
        )
        return bool(done.rowcount)


def mark_done(session: Session, job_id: int, run_id: int, message: str | None) -> None:
    """Inside the transaction that stores the job's batch: the job is done, or (abandoned) nothing is stored."""
    now = _now()
    done = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.state == "running")
        .values(
            state="done",
            progress=1.0,
            stage="완료",
            run_id=run_id,
            message=message,
            updated_at=now,
            heartbeat_at=now,
        )
    )
    if not done.rowcount:
        raise JobAbandoned(ABANDONED)


def fail_abandoned(session: Session, job_ids: list[int] | None = None) -> int:
    """Mark failed every queued or running job (of ``job_ids``, or all) whose heartbeat is stale; commits."""
    now = _now()
    last = func.coalesce(Job.heartbeat_at, Job.updated_at)  # a row from before heartbeats: its last update
    stmt = update(Job).where(Job.state.in_(LIVE), last < now - STALE_AFTER)
    if job_ids is not None:
        stmt = stmt.where(Job.id.in_(job_ids))
    count = session.execute(
        stmt.values(state="failed", stage="실패", message=ABANDONED, updated_at=now)
    ).rowcount
    session.commit()
    if count:
        log.warning("%d job(s) lost their worker and were marked failed", count)
    return int(count or 0)


def _stale(job: Job, now: dt.datetime) -> bool:
    return job.state in LIVE and _aware(job.heartbeat_at or job.updated_at) < now - STALE_AFTER


def job_doc(job: Job) -> dict[str, Any]:
    return {
        "job_id": job.id,
        "kind": job.kind,
        "state": job.state,
        "progress": round(float(job.progress), 4),
        "stage": job.stage,
        "message": job.message,
        "run_id": job.run_id,
        "params": job.params,
        "created_at": job.created_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
        "heartbeat_at": job.heartbeat_at.isoformat() if job.heartbeat_at is not None else None,
    }


def _read(session: Session, stmt: Any) -> list[Job]:
    """Rows of ``stmt``; any that lost their worker are marked failed first (a write only when one did)."""
    rows = list(session.scalars(stmt))
    stale = [j.id for j in rows if _stale(j, _now())]
    if stale:
        fail_abandoned(session, stale)
        rows = list(session.scalars(stmt.execution_options(populate_existing=True)))
    return rows


def get_job(session: Session, job_id: int) -> dict[str, Any] | None:
    rows = _read(session, select(Job).where(Job.id == job_id))
    return job_doc(rows[0]) if rows else None


def recent_jobs(session: Session, limit: int = 20) -> list[dict[str, Any]]:
    return [job_doc(j) for j in _read(session, select(Job).order_by(Job.id.desc()).limit(limit))]


class Heartbeat:
    """While a job runs, a thread writes its heartbeat every ``every`` seconds; ``abandoned`` turns true when
    the job was declared failed meanwhile (a beat found it no longer running). Dies with the worker."""

    def __init__(self, engine: Engine, job_id: int, every: float = HEARTBEAT_EVERY_S) -> None:
        self.engine, self.job_id, self.every = engine, job_id, every
        self.abandoned = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-{job_id}-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                with Session(self.engine) as session, session.begin():
                    beat = session.execute(
                        update(Job)
                        .where(Job.id == self.job_id, Job.state.in_(LIVE))
                        .values(heartbeat_at=_now())
                    )
                if not beat.rowcount:
                    self.abandoned = True
                    return
            except Exception as exc:  # a busy database skips one beat; eight in a row are needed to fail
                log.warning("job %d: heartbeat not written (%s)", self.job_id, type(exc).__name__)

    def check(self) -> None:
        if self.abandoned:
            raise JobAbandoned(ABANDONED)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
