"""운용사 ratings in the database: stored with their batch, read through the caller's scope.

``fund companies --db`` stores the report folder's batch (idempotent: an identical batch is found, not
stored twice) and then that batch's company ratings in one transaction, replacing any earlier ratings
of the same batch (a new qualitative file re-rates the same funds). ``is_current`` marks each company's
newest rating (latest as-of, then latest run), as for funds.

Scope: an admin key sees every company; a client key sees the companies it is scoped to (its
``companies``), and nothing through its ``funds`` — a key for some funds only sees no company rating.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, delete, exists, false, func, insert, select, true, update
from sqlalchemy.orm import Session, aliased

from evaluator.app.storage import scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.batches import BatchError, read_folder, store_batch
from evaluator.app.storage.tables import CompanyRating

LIST_FIELDS = (
    "company", "status", "grade", "grade_label", "score", "quantitative_score", "qualitative_score", "funds_rated",
    "aum_krw",
)  # fmt: skip


def store_companies(engine: Engine, reports: str | Path, doc: dict[str, Any]) -> tuple[int, int]:
    """Store ``doc`` (companies.json) with the batch of the report folder ``reports``; (run id, companies)."""
    batch = read_folder(reports)
    if doc.get("as_of") != batch.summary["as_of"]:
        raise BatchError(
            f"the ratings are as of {doc.get('as_of')}, the reports as of {batch.summary['as_of']}"
        )
    run_id = store_batch(engine, batch, source="import").run_id
    as_of = dt.date.fromisoformat(doc["as_of"])
    rows = [
        {
            "run_id": run_id,
            "as_of": as_of,
            "is_current": False,
            **{k: c[k] for k in LIST_FIELDS},
            "document": json.dumps({"as_of": doc["as_of"], **c}, ensure_ascii=False, separators=(",", ":")),
        }
        for c in doc["companies"]
    ]
    with Session(engine) as session, session.begin():
        if session.bind is not None and session.bind.dialect.name == "postgresql":
            session.execute(
                select(func.pg_advisory_xact_lock(7_318_002))
            )  # one writer keeps is_current right
        session.execute(delete(CompanyRating).where(CompanyRating.run_id == run_id))
        if rows:
            session.execute(insert(CompanyRating), rows)
        _mark_current(session, run_id, as_of)
    return run_id, len(rows)


def _mark_current(session: Session, run_id: int, as_of: dt.date) -> None:
    mine = select(CompanyRating.company).where(CompanyRating.run_id == run_id)
    session.execute(
        update(CompanyRating)
        .where(CompanyRating.run_id != run_id, CompanyRating.as_of <= as_of, CompanyRating.company.in_(mine))
        .values(is_current=False)
    )
    later = aliased(CompanyRating)
    session.execute(
        update(CompanyRating)
        .where(
            CompanyRating.run_id == run_id,
            ~exists().where(and_(later.company == CompanyRating.company, later.as_of > as_of)),
        )
        .values(is_current=True)
    )


def visible_companies(principal: Principal) -> ColumnElement[bool]:
    if principal.admin:
        return true()
    return CompanyRating.company.in_(principal.companies) if principal.companies else false()


def list_companies(
    session: Session, principal: Principal, as_of: dt.date | None = None
) -> list[dict[str, Any]]:
    """Each visible company's newest rating (or its newest of one as-of date), rated first, best grade first."""
    if as_of is None:
        when = CompanyRating.is_current.is_(True)
    else:
        newer = aliased(CompanyRating)
        last = (
            select(func.max(newer.run_id))
            .where(newer.company == CompanyRating.company, newer.as_of == as_of)
            .scalar_subquery()
        )
        when = and_(CompanyRating.as_of == as_of, CompanyRating.run_id == last)
    stmt = (
        select(CompanyRating)
        .where(visible_companies(principal), when)
        .order_by(
            CompanyRating.status != "ok",
            CompanyRating.grade,
            CompanyRating.score.desc(),
            CompanyRating.company,
        )
    )
    return [
        {**{k: getattr(r, k) for k in LIST_FIELDS}, "as_of": r.as_of.isoformat(), "run_id": r.run_id}
        for r in session.scalars(stmt)
    ]


def company_document(session: Session, principal: Principal, name: str) -> str | None:
    """The newest visible rating's JSON text for ``name``, or None (unknown and out of scope look alike)."""
    stmt = (
        select(CompanyRating.document)
        .where(CompanyRating.company == name, visible_companies(principal))
        .order_by(CompanyRating.as_of.desc(), CompanyRating.run_id.desc())
        .limit(1)
    )
    return session.scalar(stmt)


def company_history(session: Session, principal: Principal, name: str) -> list[dict[str, Any]]:
    """The visible ratings of ``name`` over the stored batches, oldest first: one per as-of date (its newest run),
    each with its batch's grade scale (the scale of the funds it lists; the 운용사 grade itself is on the rule's
    own bands, 1 best, written as ``grade_label``)."""
    stmt = (
        select(CompanyRating.run_id, CompanyRating.as_of, CompanyRating.status, CompanyRating.grade,
               CompanyRating.grade_label, CompanyRating.score)
        .where(CompanyRating.company == name, visible_companies(principal))
        .order_by(CompanyRating.as_of, CompanyRating.run_id)
    )
    newest: dict[dt.date, Any] = {}
    for r in session.execute(stmt):
        newest[r.as_of] = r  # a later run of the same date replaces the earlier one
    on = scales.of_runs(session, [r.run_id for r in newest.values()])
    return [
        {"as_of": r.as_of.isoformat(), "run_id": r.run_id, "status": r.status, "grade": r.grade,
         "grade_label": r.grade_label, "score": r.score,
         "grade_scale": on[r.run_id].spec()}
        for r in newest.values()
    ]


def rated_company(session: Session, principal: Principal, name: str) -> bool:
    """Whether ``name`` has a rating this caller may see (a page links the 운용사 only then)."""
    stmt = select(CompanyRating.id).where(CompanyRating.company == name, visible_companies(principal)).limit(1)
    return session.scalar(stmt) is not None
