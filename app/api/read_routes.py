"""The read endpoints under ``/api/v1``: runs, funds (a page, one report, its history), the grade summary
and the 운용사 ratings; each answers only with what the caller's key may see."""

import datetime as dt
import re
from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BeforeValidator
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException

from evaluator.app.api import schemas
from evaluator.app.api.errors import json_response
from evaluator.app.storage import companies as company_store
from evaluator.app.storage import fund_page, nav_series, queries, scales

PAGE_SIZE_MAX = 100
PAGE_MAX = 100_000
TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"  # no control characters (PostgreSQL rejects NUL in text)
CODE_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")
STATUS_PATTERN = "^(" + "|".join((*queries.STATUSES, "all")) + ")$"

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": schemas.ErrorBody, "description": "Missing, malformed, unknown, revoked or expired key."},
    422: {"model": schemas.ErrorBody, "description": "A query parameter is not valid."},
    429: {"model": schemas.ErrorBody, "description": "Too many requests for this key (see Retry-After)."},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": schemas.ErrorBody, "description": "No such fund among those this key may see."}
}

COMPANY_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": schemas.ErrorBody, "description": "No such company among those this key may see."}
}


class AnyText(Convertor[str]):
    """A path part that may hold ``/`` and any other character (a fund code, a 운용사 name): Starlette's own
    ``path`` stops at a newline, which would turn such a request into a 404 before the key is checked."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anytext", AnyText())


def _text() -> Any:
    return Query(max_length=100, pattern=TEXT_PATTERN)


ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _iso_date_only(value: Any) -> Any:
    """Refuse what pydantic would read as a date but a person did not write as one (``0`` is 1970-01-01)."""
    if value is not None and not (isinstance(value, str) and ISO_DATE.match(value)):
        raise ValueError("must be a date written YYYY-MM-DD")
    return value


AsOf = Annotated[
    dt.date | None,
    BeforeValidator(_iso_date_only),
    Query(description="An as-of date, YYYY-MM-DD (default: each fund's newest)."),
]


def check_grade(grade: int | None, view: scales.ScaleView) -> None:
    """A grade filter must be a grade of the scale in view; else a 422 that names the allowed values."""
    allowed = view.allowed_grades()
    if grade is not None and view.scales and grade not in allowed:  # nothing in view: no scale to refuse by
        names = ", ".join(str(g) for g in allowed)
        raise RequestValidationError([{
            "loc": ("query", "grade"), "type": "value_error",
            "msg": f"grade must be one of {names} (the grades of {view.scale.describe()}); got {grade}",
        }])


def add_read_routes(app: FastAPI, Caller: Any, Db: Any) -> None:
    """Register the read endpoints with the API's key dependency (``Caller``) and session (``Db``)."""
    _add_fund_routes(app, Caller, Db)
    _add_summary_routes(app, Caller, Db)


def _add_fund_routes(app: FastAPI, Caller: Any, Db: Any) -> None:
    """Runs, and funds: a page, one report, its history."""

    @app.get("/api/v1/runs", response_model=schemas.RunList, responses=ERRORS, tags=["runs"])
    def runs(who: Caller, session: Db) -> Response:
        """Stored batches that hold funds this key may see (counts cover only those funds)."""
        return json_response({"items": queries.list_runs(session, who)})

    @app.get("/api/v1/funds", response_model=schemas.FundPage, responses=ERRORS, tags=["funds"])
    def funds(
        who: Caller,
        session: Db,
        type: Annotated[str | None, _text()] = None,
        grade: Annotated[int | None, Query(ge=1, le=10)] = None,
        company: Annotated[str | None, _text()] = None,
        q: Annotated[str | None, _text()] = None,
        status: Annotated[str, Query(pattern=STATUS_PATTERN, description="ok (default), provisional, "
                                     "not_rated, error, or all: every fund, rated or not.")] = "ok",
        as_of: AsOf = None,
        page: Annotated[int, Query(ge=1, le=PAGE_MAX)] = 1,
        page_size: Annotated[int, Query(ge=1, le=1_000_000)] = 20,
    ) -> Response:
        """The latest rated funds this key may see (or those of one as-of date; ``status`` lists others or all),
        best first: the best grade of the batch's scale (1등급, or ★★★★★ on a star scale), then the highest score."""
        size = min(page_size, PAGE_SIZE_MAX)
        view = scales.in_view(session, who, as_of)
        check_grade(grade, view)
        filt = queries.FundFilter(status=None if status == "all" else status, type=type, grade=grade,
                                  company=company, q=q, as_of=as_of)
        total, items = queries.list_funds(session, who, filt, page=page, page_size=size)
        return json_response(
            {
                "total": total,
                "page": page,
                "page_size": size,
                "page_size_max": PAGE_SIZE_MAX,
                "page_size_capped": page_size > PAGE_SIZE_MAX,
                "items": items,
                **view.document(),
            }
        )

    @app.get(
        "/api/v1/funds/{code:anytext}/history",
        response_model=schemas.History,
        responses={**ERRORS, **NOT_FOUND},
        tags=["funds"],
    )
    def history(code: str, who: Caller, session: Db) -> Response:
        """Every stored result for the fund, and the grade path a stored `fund history` batch carries on the dates
        between (``from_history``: true), oldest first."""
        items = queries.fund_history(session, who, code) if CODE_RE.match(code) else []
        if not items:
            raise HTTPException(404, "no such fund")
        items = sorted([*items, *fund_page.history_path(session, who, code, items)],
                       key=lambda item: (item["as_of"], item["run_id"]))
        return json_response({"fund_code": code, "items": items})

    @app.get(
        "/api/v1/funds/{code:anytext}/nav",
        response_model=schemas.NavSeries,
        responses={**ERRORS, **NOT_FOUND},
        tags=["funds"],
    )
    def nav(code: str, who: Caller, session: Db) -> Response:
        """The newest report's total-return NAV index and benchmark over the evaluation window."""
        found = nav_series.fund_report_and_series(session, who, code) if CODE_RE.match(code) else None
        if found is None:
            raise HTTPException(404, "no such fund")
        _, series, as_of = found
        return json_response(
            {"fund_code": code, "as_of": as_of.isoformat(), "series": nav_series.chart_document(series)}
        )

    @app.get(
        "/api/v1/funds/{code:anytext}",
        responses={**ERRORS, **NOT_FOUND, 200: {"description": "The report JSON (report.schema.json)."}},
        tags=["funds"],
    )
    def fund(code: str, who: Caller, session: Db) -> Response:
        """The fund's newest full report, in the JSON report schema (a code may hold ``/``; registered after
        ``…/history`` and ``…/nav`` so those still answer)."""
        text = queries.fund_report(session, who, code) if CODE_RE.match(code) else None
        if text is None:
            raise HTTPException(404, "no such fund")
        return Response(text, media_type="application/json")


def _add_summary_routes(app: FastAPI, Caller: Any, Db: Any) -> None:
    """The grade summary and the 운용사 ratings."""

    @app.get("/api/v1/summary", response_model=schemas.Summary, responses=ERRORS, tags=["summary"])
    def summary(who: Caller, session: Db, as_of: AsOf = None) -> Response:
        """Grade distribution per 유형 over the funds this key may see."""
        view = scales.in_view(session, who, as_of)
        dist = queries.summary(session, who, as_of, view)
        return json_response(
            {
                **view.document(),
                "as_of": as_of.isoformat() if as_of else None,
                "funds": sum(row["total"] for row in dist.values()),
                "grade_distribution": dist,
            }
        )

    @app.get("/api/v1/companies", response_model=schemas.CompanyList, responses=ERRORS, tags=["companies"])
    def companies(who: Caller, session: Db, as_of: AsOf = None) -> Response:
        """The 운용사 ratings this key may see (its companies; none for a key scoped to funds only)."""
        return json_response({"items": company_store.list_companies(session, who, as_of)})

    @app.get(
        "/api/v1/companies/{name:anytext}",
        responses={
            **ERRORS,
            **COMPANY_NOT_FOUND,
            200: {"description": "The company's companies.json entry, with as_of."},
        },
        tags=["companies"],
    )
    def company(name: str, who: Caller, session: Db) -> Response:
        """One 운용사's newest rating: scores, grade, pillars, strengths by 유형 and its funds."""
        text = company_store.company_document(session, who, name) if CODE_RE.match(name) else None
        if text is None:
            raise HTTPException(404, "no such company")
        return Response(text, media_type="application/json")
