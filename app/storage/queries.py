"""Read side for the API: every query takes the caller's :class:`Principal` and filters by its scope in SQL.

A client key sees a fund when the fund's 운용사 is one of its companies or its code is one of its funds;
an admin key sees everything. Nothing outside the scope is ever counted, listed or summarised. All
filters are bound parameters (SQLAlchemy expressions), never SQL text built from request values.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, func, or_, select
from sqlalchemy.orm import Session

from evaluator.app.storage import scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.scopes import latest_for, visible
from evaluator.app.storage.tables import FundDocument, FundResult, Run

STATUSES = ("ok", "provisional", "not_rated", "error")
"""A stored result's status: rated, rated provisionally (가등급), not rated, or refused for broken data."""


@dataclass(frozen=True)
class FundFilter:
    status: str | None = "ok"  # one of STATUSES; None lists every status (rated or not)
    type: str | None = None
    grade: int | None = None
    company: str | None = None
    q: str | None = None
    as_of: dt.date | None = None


def _filtered(principal: Principal, f: FundFilter) -> list[ColumnElement[bool]]:
    cond = [visible(principal), latest_for(f.as_of)]
    if f.status is not None:
        cond.append(FundResult.status == f.status)
    if f.type is not None:
        cond.append(FundResult.type == f.type)
    if f.grade is not None:
        cond.append(FundResult.grade == f.grade)
    if f.company is not None:
        cond.append(FundResult.company == f.company)
    if f.q:
        cond.append(
            or_(
                FundResult.fund_name.icontains(f.q, autoescape=True),
                FundResult.fund_code.icontains(f.q, autoescape=True),
            )
        )
    return cond


LIST_COLUMNS = (
    FundResult.fund_code,
    FundResult.fund_name,
    FundResult.company,
    FundResult.type,
    FundResult.status,
    FundResult.grade,
    FundResult.score,
    FundResult.percentile,
    FundResult.as_of,
    FundResult.run_id,
)
STATUS_ORDER = case({s: i for i, s in enumerate(STATUSES)}, value=FundResult.status, else_=len(STATUSES))


def list_funds(
    session: Session, principal: Principal, f: FundFilter, *, page: int, page_size: int
) -> tuple[int, list[dict[str, Any]]]:
    cond = _filtered(principal, f)
    total = session.scalar(select(func.count()).select_from(FundResult).where(*cond)) or 0
    stmt: Select = (
        select(*LIST_COLUMNS)
        .where(*cond)
        # rated first, best first on its scale; then 가등급, not rated, errors (no NULL order: it differs by database)
        .order_by(STATUS_ORDER, FundResult.grade_rank.is_(None), FundResult.grade_rank,
                  FundResult.score.is_(None), FundResult.score.desc(), FundResult.fund_code)
        .limit(page_size)
        .offset((page - 1) * page_size)
    )
    rows = list(session.execute(stmt))
    on = scales.of_runs(session, [r.run_id for r in rows])
    items = [
        {
            "fund_code": r.fund_code,
            "fund_name": r.fund_name,
            "company": r.company,
            "type": r.type,
            "status": r.status,
            "grade": r.grade,
            "grade_label": scales.label(on[r.run_id], r.grade, r.status),
            "grade_rank": on[r.run_id].rank(r.grade) if r.grade is not None else None,
            "score": r.score,
            "peer_percentile": r.percentile,
            "as_of": r.as_of.isoformat(),
            "run_id": r.run_id,
        }
        for r in rows
    ]
    return int(total), items


def fund_report(session: Session, principal: Principal, code: str) -> str | None:
    """The newest visible report's JSON text for ``code``, or None (unknown and out-of-scope look alike)."""
    stmt = (
        select(FundDocument.report)
        .join(
            FundResult,
            and_(FundResult.run_id == FundDocument.run_id, FundResult.fund_code == FundDocument.fund_code),
        )
        .where(FundResult.fund_code == code, visible(principal))
        .order_by(FundResult.as_of.desc(), FundResult.run_id.desc())
        .limit(1)
    )
    return session.scalar(stmt)


def fund_history(session: Session, principal: Principal, code: str) -> list[dict[str, Any]]:
    stmt = (
        select(
            FundResult.run_id, FundResult.as_of, FundResult.status, FundResult.grade, FundResult.score,
            FundResult.percentile, FundResult.type, FundResult.company, Run.rubric_name, Run.rubric_version,
        )
        .join(Run, Run.id == FundResult.run_id)
        .where(FundResult.fund_code == code, visible(principal))
        .order_by(FundResult.as_of, FundResult.run_id)
    )
    rows = list(session.execute(stmt))
    on = scales.of_runs(session, [r.run_id for r in rows])
    return [
        {
            "run_id": r.run_id,
            "as_of": r.as_of.isoformat(),
            "status": r.status,
            "grade": r.grade,
            "grade_label": scales.label(on[r.run_id], r.grade, r.status),
            "grade_scale": on[r.run_id].spec(),
            "score": r.score,
            "peer_percentile": r.percentile,
            "type": r.type,
            "company": r.company,
            "rubric": {"name": r.rubric_name, "version": r.rubric_version},
        }
        for r in rows
    ]


def summary(
    session: Session, principal: Principal, as_of: dt.date | None, view: scales.ScaleView | None = None
) -> dict[str, dict[str, int]]:
    """Grade distribution per 유형 (same shape as summary.json's grade_distribution), visible funds only.

    Every grade of the scale(s) in view is a key, best first, even when no fund has it (``p3``: 가3등급)."""
    grades = [str(g) for g in (view or scales.in_view(session, principal, as_of)).allowed_grades()]
    stmt = (
        select(FundResult.type, FundResult.status, FundResult.grade, func.count())
        .where(visible(principal), latest_for(as_of))
        .group_by(FundResult.type, FundResult.status, FundResult.grade)
    )
    out: dict[str, dict[str, int]] = {}
    for fund_type, status, grade, n in session.execute(stmt):
        row = out.setdefault(
            fund_type or "(없음)", {**dict.fromkeys(grades, 0), "not_rated": 0, "error": 0, "total": 0}
        )
        if status in ("ok", "provisional") and grade is not None:
            key = ("p" if status == "provisional" else "") + str(grade)  # 가등급 apart, any scale's grades
        else:
            key = "error" if status == "error" else "not_rated"
        row[key] = row.get(key, 0) + int(n)
        row["total"] += int(n)
    return dict(sorted(out.items()))


def list_runs(session: Session, principal: Principal) -> list[dict[str, Any]]:
    """Runs with at least one visible fund; counts cover visible funds only; input hashes for admins."""
    counts = (
        select(FundResult.run_id, FundResult.status, func.count().label("n"))
        .where(visible(principal))
        .group_by(FundResult.run_id, FundResult.status)
        .subquery()
    )
    stmt = (
        select(Run, counts.c.status, counts.c.n)
        .join(counts, counts.c.run_id == Run.id)
        .order_by(Run.as_of.desc(), Run.id.desc())
    )
    runs: dict[int, dict[str, Any]] = {}
    for run, status, n in session.execute(stmt):
        doc = runs.get(run.id)
        if doc is None:
            doc = runs[run.id] = {
                "run_id": run.id,
                "as_of": run.as_of.isoformat(),
                "rubric": {"name": run.rubric_name, "version": run.rubric_version, "sha256": run.rubric_hash},
                "grade_scale": scales.scale_of(run.grade_scale).spec(),
                "engine_version": run.engine_version,
                "source": run.source,
                "created_at": run.created_at.isoformat(),
                "funds": 0,
                "status_counts": {"ok": 0, "not_rated": 0, "error": 0},
                "model_evaluated": run.model_run is not None,
            }
            if principal.admin:
                doc["input_hashes"] = run.input_hashes
        doc["status_counts"][status] = doc["status_counts"].get(status, 0) + int(n)
        doc["funds"] += int(n)
    return list(runs.values())
