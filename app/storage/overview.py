"""Read side for the pages: what changed between the two latest batches, and filter choices.

Like :mod:`evaluator.app.storage.queries`, every query is scoped by the caller's :class:`Principal` in SQL.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import Session, aliased

from evaluator.app.storage import scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.queries import visible
from evaluator.app.storage.tables import FundResult, Run

NEWLY_LIMIT = 50


def latest_dates(session: Session, who: Principal, n: int = 2) -> list[dt.date]:
    """The newest ``n`` as-of dates holding a fund this caller may see, newest first."""
    holds = exists().where(FundResult.run_id == Run.id, visible(who))  # via ix_fund_results_run_status
    stmt = select(Run.as_of).where(holds).group_by(Run.as_of).order_by(Run.as_of.desc()).limit(n)
    return list(session.scalars(stmt))


def _at(who: Principal, as_of: dt.date) -> Any:
    """Each visible fund's newest result at ``as_of`` (code, name, status, grade) as a subquery."""
    table = aliased(FundResult)
    newer = aliased(FundResult)
    latest_run = (select(func.max(newer.run_id))
                  .where(newer.fund_code == table.fund_code, newer.as_of == as_of).scalar_subquery())
    return (select(table.fund_code, table.fund_name, table.status, table.grade)
            .where(visible(who, table), table.as_of == as_of, table.run_id == latest_run).subquery())


def migrations(session: Session, who: Principal, old: dt.date, new: dt.date) -> dict[str, Any]:
    """Grade migrations old → new (rated in both), rows and columns best first on the scale; and funds newly in
    error or not rated. When the two dates' batches use different scales there is no matrix, only ``scale_note``:
    a 5등급 that became ★★★★★ is not a move."""
    before, after = _at(who, old), _at(who, new)
    view_old, view_new = scales.in_view(session, who, old), scales.in_view(session, who, new)
    scale = view_new.scale
    order = list(scale.best_first())
    note = None
    if view_old.mixed or view_new.mixed or view_old.scale != scale:
        note = (f"두 평가의 등급 체계가 달라({view_old.scale.describe()} → {scale.describe()}) 등급 변화를 "
                "비교하지 않습니다.")
    rows = [] if note else session.execute(
        select(before.c.grade, after.c.grade, func.count())
        .join(after, after.c.fund_code == before.c.fund_code)
        .where(before.c.status == "ok", after.c.status == "ok")
        .group_by(before.c.grade, after.c.grade)
    )
    n_grades = len(order)
    matrix = [[0] * n_grades for _ in range(n_grades)]
    for g_old, g_new, n in rows:
        if g_old in order and g_new in order:
            matrix[order.index(g_old)][order.index(g_new)] += int(n)
    newly = session.execute(
        select(after.c.fund_code, after.c.fund_name, after.c.status, before.c.status.label("was"))
        .outerjoin(before, before.c.fund_code == after.c.fund_code)
        .where(after.c.status != "ok", (before.c.status.is_(None)) | (before.c.status == "ok"))
        .order_by(after.c.status, after.c.fund_code)
        .limit(NEWLY_LIMIT)
    )
    return {
        "matrix": None if note else matrix,
        "labels": [scale.label(g) for g in order],
        "scale_note": note,
        "moved": sum(matrix[i][j] for i in range(n_grades) for j in range(n_grades) if i != j),
        "newly": [{"fund_code": r.fund_code, "fund_name": r.fund_name, "status": r.status,
                   "was": r.was or "new"} for r in newly],
    }


def _move(was_rank: int, now_rank: int) -> str:
    return "up" if now_rank < was_rank else "down" if now_rank > was_rank else "same"  # 가2등급 → 2등급: same


def grade_changes(session: Session, who: Principal, old: dt.date, new: dt.date) -> dict[str, Any]:
    """The caller's funds whose grade changed old → new (rated, 가등급 included, in both), by name, each with
    both labels and its move (up, down, or same: a 가등급 that became regular). Different scales on the two dates: no list, only ``scale_note``."""
    before, after = _at(who, old), _at(who, new)
    view_old, view_new = scales.in_view(session, who, old), scales.in_view(session, who, new)
    scale = view_new.scale
    if view_old.mixed or view_new.mixed or view_old.scale != scale:
        return {"funds": [], "scale_note": f"두 평가의 등급 체계가 달라({view_old.scale.describe()} → "
                f"{scale.describe()}) 등급 변화를 비교하지 않습니다."}
    rated = ("ok", "provisional")
    rows = session.execute(
        select(after.c.fund_code, after.c.fund_name, before.c.grade.label("was"), before.c.status.label("was_status"),
               after.c.grade, after.c.status)
        .join(before, before.c.fund_code == after.c.fund_code)
        .where(before.c.status.in_(rated), after.c.status.in_(rated), before.c.grade.is_not(None),
               after.c.grade.is_not(None),
               (before.c.grade != after.c.grade) | (before.c.status != after.c.status))
        .order_by(after.c.fund_name, after.c.fund_code)
    )
    items = [{"fund_code": r.fund_code, "fund_name": r.fund_name,
              "was": scales.label(scale, r.was, r.was_status), "now": scales.label(scale, r.grade, r.status),
              "move": _move(scale.rank(r.was), scale.rank(r.grade))} for r in rows
             if scale.contains(r.was) and scale.contains(r.grade)]
    return {"funds": items, "scale_note": None}


def new_batch_warnings(session: Session, old: dt.date | None, new: dt.date) -> list[str]:
    """Data warnings of the newest batch at ``new`` that the newest batch at ``old`` did not have.

    Batch-level text can name any fund, so callers show it to admin keys only."""
    def warnings_at(day: dt.date | None) -> list[str]:
        if day is None:
            return []
        summary = session.scalar(select(Run.summary).where(Run.as_of == day).order_by(Run.id.desc()).limit(1))
        return [str(w) for w in (summary or {}).get("warnings", [])]

    seen = set(warnings_at(old))
    return [w for w in warnings_at(new) if w not in seen]


def choices(session: Session, who: Principal) -> dict[str, list[str]]:
    """유형 and 운용사 values among the caller's current funds (for the list's filters)."""
    cond = and_(visible(who), FundResult.is_current.is_(True))
    types = session.scalars(select(FundResult.type).where(cond, FundResult.type.is_not(None))
                            .group_by(FundResult.type).order_by(FundResult.type))
    companies = session.scalars(select(FundResult.company).where(cond, FundResult.company.is_not(None))
                                .group_by(FundResult.company).order_by(FundResult.company))
    return {"types": list(types), "companies": list(companies)}
