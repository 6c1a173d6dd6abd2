"""The pages: overview, fund list, companies (the fund page: :mod:`.fund_page`). Every query is the API's scoped query, so a
client key sees exactly what its API scope allows; anything else is absent (the same 404 as unknown)."""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException

from evaluator.app.api.read_routes import TEXT_PATTERN, check_grade
from evaluator.app.storage import overview, queries, scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.web.auth import Db, User
from evaluator.app.web.charts import (
    column_value,
    distribution_chart,
    grade_columns,
)
from evaluator.app.web.render import render
from evaluator.methodology.rubric_scale import DEFAULT_SCALE

router = APIRouter(include_in_schema=False)
LIST_PAGE_SIZE = 50
Text = Annotated[str, Query(max_length=100, pattern=TEXT_PATTERN)]


def overview_context(session: Session, who: Principal) -> dict[str, Any]:
    """Everything the overview shows, for one scope (cached until a batch is stored: see ScopeCache)."""
    dates = overview.latest_dates(session, who)
    latest = dates[0] if dates else None
    previous = dates[1] if len(dates) > 1 else None
    view = scales.in_view(session, who, latest)
    dist = queries.summary(session, who, latest, view) if latest else {}
    changes = overview.migrations(session, who, previous, latest) if previous and latest else None
    warnings = overview.new_batch_warnings(session, previous, latest) if latest and who.admin else []
    columns = grade_columns(dist, view.scale)
    table = {t: [column_value(row, c["key"]) for c in columns] for t, row in dist.items()}
    return {
        "latest": latest, "previous": previous, "dist": dist, "runs": queries.list_runs(session, who)[:20],
        "changes": changes, "warnings": warnings, "chart": distribution_chart(dist, view.scale) if dist else None,
        "columns": columns, "table": table, "scale_note": view.message(), "default_scale": DEFAULT_SCALE.spec(),
    }


@router.get("/")
def overview_page(request: Request, viewer: User, session: Db) -> Response:
    who = viewer.principal
    cache = request.app.state.page_cache
    return render(request, "overview.html", cache.get(session, who, "overview", lambda: overview_context(session, who)))


@router.get("/funds")
def fund_list(
    request: Request, viewer: User, session: Db,
    q: Text = "", type: Text = "", company: Text = "",
    grade: Annotated[str, Query(max_length=2, pattern=r"^([1-9]|10)?$")] = "",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> Response:
    view = scales.in_view(session, viewer.principal)
    check_grade(int(grade) if grade else None, view)
    filt = queries.FundFilter(type=type or None, grade=int(grade) if grade else None,
                              company=company or None, q=q or None)
    total, items = queries.list_funds(session, viewer.principal, filt, page=page, page_size=LIST_PAGE_SIZE)
    pages = max(1, math.ceil(total / LIST_PAGE_SIZE))
    return render(request, "funds.html", {
        "items": items, "total": total, "page": page, "pages": pages,
        "filters": {"q": q, "type": type, "company": company, "grade": grade},
        "grades": [{"value": str(g), "label": view.scale.label(g)} for g in view.allowed_grades()],
        "colors": {view.scale.rank(g): c for g, c in view.scale.colors().items()}, "scale_note": view.message(),
        "choices": request.app.state.page_cache.get(session, viewer.principal, "choices",
                                                    lambda: overview.choices(session, viewer.principal)),
    })


@router.get("/companies")
def companies(request: Request, viewer: User, session: Db) -> Response:
    """운용사 ratings, when a feature provides them (``Extensions.company_ratings``); else absent."""
    provider = request.app.state.extensions.company_ratings
    rows = provider(session, viewer.principal) if provider is not None else []
    if not rows:
        raise HTTPException(404, "no such page")
    return render(request, "companies.html", {"rows": rows})
