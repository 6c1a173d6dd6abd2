"""Background jobs' state in the database, so every worker can show a job another worker runs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from evaluator.app.storage.tables import Job

STATES = ("queued", "running", "done", "failed")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def create_job(engine: Engine, key_id: str, kind: str, params: dict[str, Any]) -> int:
    with Session(engine) as session, session.begin():
        job = Job(key_id=key_id, kind=kind, state="queued", progress=0.0, stage="대기 중", message=None,
                  params=params, run_id=None, created_at=_now(), updated_at=_now())
        session.add(job)
        session.flush()
        return int(job.id)


def set_state(engine: Engine, job_id: int, **values: Any) -> None:
    """Update some of state, progress, stage, message, run_id (one short transaction)."""
    unknown = set(values) - {"state", "progress", "stage", "message", "run_id"}
    if unknown or values.get("state", "queued") not in STATES:
        raise ValueError(f"bad job update {sorted(values)}")
    with Session(engine) as session, session.begin():
        session.execute(update(Job).where(Job.id == job_id).values(**values, updated_at=_now()))


def job_doc(job: Job) -> dict[str, Any]:
    return {
        "job_id": job.id, "kind": job.kind, "state": job.state, "progress": round(float(job.progress), 4),
        "stage": job.stage, "message": job.message, "run_id": job.run_id, "params": job.params,
        "created_at": job.created_at.isoformat(), "updated_at": job.updated_at.isoformat(),
    }


def get_job(session: Session, job_id: int) -> dict[str, Any] | None:
    job = session.get(Job, job_id)
    return job_doc(job) if job is not None else None


def recent_jobs(session: Session, limit: int = 20) -> list[dict[str, Any]]:
    return [job_doc(j) for j in session.scalars(select(Job).order_by(Job.id.desc()).limit(limit))]
