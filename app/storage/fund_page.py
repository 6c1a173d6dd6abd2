"""What a fund page reads beyond the newest report: its grade at every as-of date, its sibling share classes.

The grade history is one point per as-of date from every stored batch that holds the fund, and, for a batch
stored by ``fund history --db``, every date of the ``grade_history`` its report carries (a history grades
month- or quarter-ends but stores only its last date's reports). Where a date has both, the batch's own
result wins (the newest batch of that date). Each point keeps its batch's grade scale, so the page never
draws a 5★ grade on a 1등급-best axis. Every read goes through the caller's scope.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from evaluator.app.storage import scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.queries import fund_history, visible
from evaluator.app.storage.tables import FundDocument, FundResult, Run

HISTORY_SOURCE = "history"


def _history_documents(session: Session, who: Principal, code: str) -> list[tuple[int, Any, str]]:
    """(run id, run as-of, report text) of every visible history batch that holds ``code``, oldest first."""
    stmt = (
        select(FundResult.run_id, FundResult.as_of, FundDocument.report)
        .join(Run, Run.id == FundResult.run_id)
        .join(FundDocument, and_(FundDocument.run_id == FundResult.run_id, FundDocument.fund_code == code))
        .where(FundResult.fund_code == code, Run.source == HISTORY_SOURCE, visible(who))
        .order_by(FundResult.as_of, FundResult.run_id)
    )
    return [(r.run_id, r.as_of, r.report) for r in session.execute(stmt)]


def history_path(session: Session, who: Principal, code: str, stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The grade-path points of visible history batches on dates no stored batch holds (``from_history``: true),
    oldest first; of two history batches with the same date, the newer one's point."""
    held = {row["as_of"] for row in stored}
    docs = _history_documents(session, who, code)
    on = scales.of_runs(session, [run_id for run_id, _, _ in docs])
    row_of = {row["run_id"]: row for row in stored}
    points: dict[str, dict[str, Any]] = {}
    for run_id, _, text in docs:  # oldest batch first, so a date's newest history is the one kept
        scale, own = on[run_id], row_of.get(run_id, {})
        for point in json.loads(text).get("grade_history") or []:
            day, status, grade = str(point.get("as_of")), point.get("status"), point.get("grade")
            if day in held:
                continue  # a stored batch of that date is the record
            points[day] = {
                "run_id": run_id, "as_of": day, "status": status, "grade": grade,
                "grade_label": scales.label(scale, grade, status), "grade_scale": scale.spec(),
                "score": point.get("score"), "peer_percentile": None, "type": own.get("type"),
                "company": own.get("company"), "rubric": own.get("rubric", {}), "from_history": True,
            }
    return [points[d] for d in sorted(points)]


def grade_points(session: Session, who: Principal, code: str) -> list[dict[str, Any]]:
    """One row per as-of date, oldest first: the newest stored batch's result of each date, and the grade-path
    points of history batches on the dates between (``from_history``: true)."""
    stored = fund_history(session, who, code)
    by_date = {row["as_of"]: {**row, "from_history": False} for row in stored}  # oldest run first: newest kept
    by_date.update({p["as_of"]: p for p in history_path(session, who, code, stored)})
    return [by_date[d] for d in sorted(by_date)]


def share_classes(session: Session, who: Principal, run_id: int, codes: list[str]) -> list[dict[str, Any]]:
    """The other share classes a report names, as the same batch rated them, those in scope only."""
    if not codes:
        return []
    stmt = (
        select(FundResult.fund_code, FundResult.fund_name, FundResult.status, FundResult.grade)
        .where(FundResult.run_id == run_id, FundResult.fund_code.in_(codes[:100]), visible(who))
        .order_by(FundResult.fund_code)
    )
    scale = scales.of_runs(session, [run_id])[run_id]
    return [
        {"fund_code": r.fund_code, "fund_name": r.fund_name, "status": r.status, "grade": r.grade,
         "grade_label": scales.label(scale, r.grade, r.status)}
        for r in session.execute(stmt)
    ]


def current_run(session: Session, who: Principal, code: str) -> int | None:
    """The batch of the newest visible report of ``code`` (the one the page shows)."""
    stmt = (
        select(FundResult.run_id)
        .where(FundResult.fund_code == code, visible(who))
        .order_by(FundResult.as_of.desc(), FundResult.run_id.desc())
        .limit(1)
    )
    return session.scalar(stmt)
