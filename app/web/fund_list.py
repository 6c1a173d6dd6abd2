"""The fund list and search (``/funds``): every fund the viewer may see, rated or not, with a status filter.

The list's filters are one :class:`ListQuery` (a FastAPI dependency), read the same way by the page and by its
``.xlsx`` export (:mod:`evaluator.app.web.exports`), so the file holds exactly the funds the list shows.
Every query is the API's scoped query (:func:`evaluator.app.storage.queries.list_funds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from evaluator.app.api.read_routes import TEXT_PATTERN, check_grade
from evaluator.app.storage import overview, queries, scales
from evaluator.app.web.auth import Db, User
from evaluator.app.web.render import render

router = APIRouter(include_in_schema=False)
LIST_PAGE_SIZE = 50
STATUS_LABELS = dict(zip(queries.STATUSES, ("평가", "가등급", "미평가", "오류"), strict=True))
"""Korean names of the stored statuses (the filter's choices and the list's 상태 column)."""
Text = Annotated[str, Query(max_length=100, pattern=TEXT_PATTERN)]
Status = Annotated[str, Query(pattern="^(" + "|".join(queries.STATUSES) + ")?$")]
Grade = Annotated[str, Query(max_length=2, pattern=r"^([1-9]|10)?$")]


@dataclass(frozen=True)
class ListQuery:
    """The list's filters as the form sends them ('' = any); ``status`` '' lists every fund, rated or not."""

    q: str = ""
    type: str = ""
    company: str = ""
    grade: str = ""
    status: str = ""

    def fund_filter(self) -> queries.FundFilter:
        return queries.FundFilter(status=self.status or None, type=self.type or None,
                                  grade=int(self.grade) if self.grade else None, company=self.company or None,
                                  q=self.q or None)

    def as_params(self) -> dict[str, str]:
        return {"q": self.q, "type": self.type, "grade": self.grade, "company": self.company, "status": self.status}

    def query_string(self) -> str:
        return urlencode({k: v for k, v in self.as_params().items() if v})


def list_query(q: Text = "", type: Text = "", company: Text = "", grade: Grade = "", status: Status = "") -> ListQuery:
    return ListQuery(q=q, type=type, company=company, grade=grade, status=status)


Filters = Annotated[ListQuery, Depends(list_query)]


def checked(session: Any, viewer: Any, filters: ListQuery) -> scales.ScaleView:
    """The scale view of the viewer's funds; a grade filter outside it is a 422 naming the allowed grades."""
    view = scales.in_view(session, viewer.principal)
    check_grade(int(filters.grade) if filters.grade else None, view)
    return view


def grade_text(item: dict[str, Any]) -> str:
    """A list row's grade as pages and exports write it: the label, or the status in Korean."""
    return item.get("grade_label") or STATUS_LABELS.get(item.get("status") or "", "–")


@router.get("/funds")
def fund_list(request: Request, viewer: User, session: Db, filters: Filters,
              page: Annotated[int, Query(ge=1, le=100_000)] = 1) -> Response:
    view = checked(session, viewer, filters)
    total, items = queries.list_funds(session, viewer.principal, filters.fund_filter(), page=page,
                                      page_size=LIST_PAGE_SIZE)
    pages = max(1, math.ceil(total / LIST_PAGE_SIZE))
    for item in items:
        item["grade_text"] = grade_text(item)
    return render(request, "funds.html", {
        "items": items, "total": total, "page": page, "pages": pages,
        "filters": filters.as_params(), "query": filters.query_string(),
        "statuses": STATUS_LABELS,
        "grades": [{"value": str(g), "label": view.scale.label(g)} for g in view.allowed_grades()],
        "colors": {view.scale.rank(g): c for g, c in view.scale.colors().items()}, "scale_note": view.message(),
        "choices": request.app.state.page_cache.get(session, viewer.principal, "choices",
                                                    lambda: overview.choices(session, viewer.principal)),
    })
