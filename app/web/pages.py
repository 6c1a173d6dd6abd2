"""The overview page (the list: :mod:`.fund_list`; the fund page: :mod:`.fund_page`; 운용사: :mod:`.company_pages`). Every query is the API's scoped query, so a
client key sees exactly what its API scope allows; anything else is absent (the same 404 as unknown)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

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


def overview_context(session: Session, who: Principal) -> dict[str, Any]:
    """Everything the overview shows, for one scope (cached until a batch is stored: see ScopeCache)."""
    dates = overview.latest_dates(session, who)
    latest = dates[0] if dates else None
    previous = dates[1] if len(dates) > 1 else None
    view = scales.in_view(session, who, latest)
    dist = queries.summary(session, who, latest, view) if latest else {}
    changes = overview.migrations(session, who, previous, latest) if previous and latest else None
    mine = overview.grade_changes(session, who, previous, latest) if previous and latest and not who.admin else None
    warnings = overview.new_batch_warnings(session, previous, latest) if latest and who.admin else []
    columns = grade_columns(dist, view.scale)
    table = {t: [column_value(row, c["key"]) for c in columns] for t, row in dist.items()}
    return {
        "latest": latest, "previous": previous, "dist": dist, "runs": queries.list_runs(session, who)[:20],
        "changes": changes, "my_changes": mine, "warnings": warnings, "chart": distribution_chart(dist, view.scale) if dist else None,
        "columns": columns, "table": table, "scale_note": view.message(), "default_scale": DEFAULT_SCALE.spec(),
    }


@router.get("/")
def overview_page(request: Request, viewer: User, session: Db) -> Response:
    who = viewer.principal
    cache = request.app.state.page_cache
    return render(request, "overview.html", cache.get(session, who, "overview", lambda: overview_context(session, who)))
