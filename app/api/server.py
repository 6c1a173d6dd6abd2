"""The FastAPI application: bearer-key auth, tenant-scoped reads, JSON errors only, one log line per request.

Every worker opens its own engine from the URL; all state that matters (keys, revocations, batches) is in
the database, so ``--workers N`` behaves like one worker.
"""

import datetime as dt
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BeforeValidator
from sqlalchemy import Engine, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from starlette.exceptions import HTTPException
from starlette.routing import Match

from evaluator.app.api import schemas
from evaluator.app.api.assets import AssetStore
from evaluator.app.api.docs import add_offline_docs
from evaluator.app.api.evaluation_routes import BodyLimit, add_evaluation_routes
from evaluator.app.api.settings import Settings
from evaluator.app.storage import companies as company_store
from evaluator.app.storage import nav_series, queries, ratelimit
from evaluator.app.storage.apikeys import Principal, authenticate
from evaluator.app.storage.database import ENV_URL, open_database, service_url

log = logging.getLogger("evaluator.api")
PAGE_SIZE_MAX = 100
PAGE_MAX = 100_000
TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"  # no control characters (PostgreSQL rejects NUL in text)
CODE_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")
KEY_IN_TEXT = re.compile(r"ev_[0-9A-Za-z]+_[A-Za-z0-9_-]+")
bearer = HTTPBearer(auto_error=False, description="An API key from `evaluator keys create`: ev_<id>_<secret>")

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


def _text() -> Any:
    return Query(max_length=100, pattern=TEXT_PATTERN)


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
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


def allow_header(request: Request, exc: HTTPException) -> dict[str, str]:
    """The exception's headers; on 405, Allow lists the methods of EVERY route on the path (RFC 9110)
    (Starlette names only the first matching route's, so GET /login beside POST /login said "GET")."""
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        methods = [m for m in METHODS if any(route.matches({**request.scope, "method": m})[0] is Match.FULL
                                             for route in request.app.router.routes)]
        if methods:
            headers["Allow"] = ", ".join(methods)
    return headers


class RateLimited(Exception):
    """Too many requests for one key in the current window (answered 429 with Retry-After)."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after


def check_rate(session: Session, settings: Settings, key_id: str) -> None:
    """Count one request for ``key_id`` in the database; raise :class:`RateLimited` past the limit."""
    if settings.rate_per_minute <= 0:
        return
    verdict = ratelimit.hit_or_pass(session, f"key:{key_id}", settings.rate_per_minute, 60)
    if not verdict.allowed:
        raise RateLimited(verdict.retry_after)


def _json(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _error(status: int, error: str, detail: Any, headers: dict[str, str] | None = None) -> Response:
    return _json({"error": error, "detail": detail}, status, headers)


class AccessLog:
    """Pure ASGI middleware: key id, method, path, status, latency; never the Authorization header."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        state = scope.setdefault("state", {})
        status = {"code": 500}

        async def send_wrapper(message: dict) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            path = KEY_IN_TEXT.sub("ev_[redacted]", scope.get("path", ""))
            log.info(
                "key=%s method=%s path=%s status=%d latency_ms=%.1f",
                state.get("key_id", "-"), scope.get("method"), path, status["code"],
                (time.perf_counter() - start) * 1000,
            )


def create_app(
    url: str | None = None, *, engine: Engine | None = None, settings: Settings | None = None
) -> FastAPI:
    """The app for ``url`` (or a given engine); the schema must already be current (`evaluator db upgrade`).

    ``app.state`` carries what other routers reuse: ``engine``, ``sessions`` (a sessionmaker),
    ``settings`` and ``assets`` (an :class:`AssetStore` served under /assets/).
    """
    engine = engine or open_database(service_url(url), migrate=False)
    sessions = sessionmaker(engine, expire_on_commit=False)
    settings = settings or Settings.from_env()
    app = FastAPI(
        title="evaluator fund evaluations API",
        version="1",
        description="Stored fund evaluations for client firms (위탁사). Each key sees only its own funds.",
        docs_url=None,
        redoc_url=None,
    )
    assets = AssetStore()
    app.state.engine, app.state.sessions, app.state.settings, app.state.assets = engine, sessions, settings, assets
    add_offline_docs(app, assets)

    def db() -> Iterator[Session]:
        with sessions() as session:
            yield session

    def principal(
        request: Request,
        session: Annotated[Session, Depends(db)],
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Principal:
        who = authenticate(session, creds.credentials) if creds is not None else None
        if who is None:
            raise HTTPException(401, "missing or invalid API key")
        request.state.key_id = who.key_id
        check_rate(session, settings, who.key_id)
        return who

    Caller = Annotated[Principal, Depends(principal)]
    Db = Annotated[Session, Depends(db)]

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        kinds = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed"}
        headers = allow_header(request, exc)
        if exc.status_code == 401:
            headers["WWW-Authenticate"] = "Bearer"
        detail = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else "no such resource"
        return _error(exc.status_code, kinds.get(exc.status_code, "error"), detail, headers)

    @app.exception_handler(RateLimited)
    async def too_many(_request: Request, exc: RateLimited) -> Response:
        return _error(429, "rate_limited", "too many requests for this key; try again later",
                      {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> Response:
        detail = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))} for e in exc.errors()]
        return _error(422, "invalid_request", detail)

    @app.exception_handler(SQLAlchemyError)
    async def db_error(_request: Request, exc: SQLAlchemyError) -> Response:
        log.error("database error: %s", type(exc).__name__)
        return _error(503, "unavailable", "the database is busy or unreachable; try again")

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> Response:
        log.error("unexpected %s", type(exc).__name__)
        return _error(500, "internal", "internal error")

    @app.get("/healthz", tags=["health"])
    def healthz(session: Db) -> Response:
        """Liveness and database reachability; needs no key."""
        session.execute(select(1))
        return _json({"status": "ok"})

    @app.get("/assets/{name:path}", include_in_schema=False)
    def asset(name: str, request: Request) -> Response:
        """Packaged static files (long-cached, gzip); see :class:`AssetStore`."""
        return assets.response(name, request)

    @app.get("/api/v1/runs", response_model=schemas.RunList, responses=ERRORS, tags=["runs"])
    def runs(who: Caller, session: Db) -> Response:
        """Stored batches that hold funds this key may see (counts cover only those funds)."""
        return _json({"items": queries.list_runs(session, who)})

    @app.get("/api/v1/funds", response_model=schemas.FundPage, responses=ERRORS, tags=["funds"])
    def funds(
        who: Caller,
        session: Db,
        type: Annotated[str | None, _text()] = None,
        grade: Annotated[int | None, Query(ge=1, le=10)] = None,
        company: Annotated[str | None, _text()] = None,
        q: Annotated[str | None, _text()] = None,
        as_of: AsOf = None,
        page: Annotated[int, Query(ge=1, le=PAGE_MAX)] = 1,
        page_size: Annotated[int, Query(ge=1, le=1_000_000)] = 20,
    ) -> Response:
        """The latest rated funds this key may see (or those of one as-of date), best grade first."""
        size = min(page_size, PAGE_SIZE_MAX)
        filt = queries.FundFilter(type=type, grade=grade, company=company, q=q, as_of=as_of)
        total, items = queries.list_funds(session, who, filt, page=page, page_size=size)
        return _json(
            {
                "total": total,
                "page": page,
                "page_size": size,
                "page_size_max": PAGE_SIZE_MAX,
                "page_size_capped": page_size > PAGE_SIZE_MAX,
                "items": items,
            }
        )

    @app.get(
        "/api/v1/funds/{code}",
        responses={**ERRORS, **NOT_FOUND, 200: {"description": "The report JSON (report.schema.json)."}},
        tags=["funds"],
    )
    def fund(code: str, who: Caller, session: Db) -> Response:
        """The fund's newest full report, in the JSON report schema."""
        text = queries.fund_report(session, who, code) if CODE_RE.match(code) else None
        if text is None:
            raise HTTPException(404, "no such fund")
        return Response(text, media_type="application/json")

    @app.get(
        "/api/v1/funds/{code}/history",
        response_model=schemas.History,
        responses={**ERRORS, **NOT_FOUND},
        tags=["funds"],
    )
    def history(code: str, who: Caller, session: Db) -> Response:
        """Every stored result for the fund, oldest first."""
        items = queries.fund_history(session, who, code) if CODE_RE.match(code) else []
        if not items:
            raise HTTPException(404, "no such fund")
        return _json({"fund_code": code, "items": items})

    @app.get(
        "/api/v1/funds/{code}/nav",
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
        return _json({"fund_code": code, "as_of": as_of.isoformat(), "series": nav_series.chart_document(series)})

    @app.get("/api/v1/summary", response_model=schemas.Summary, responses=ERRORS, tags=["summary"])
    def summary(
        who: Caller, session: Db, as_of: AsOf = None
    ) -> Response:
        """Grade distribution per 유형 over the funds this key may see."""
        dist = queries.summary(session, who, as_of)
        return _json(
            {
                "as_of": as_of.isoformat() if as_of else None,
                "funds": sum(row["total"] for row in dist.values()),
                "grade_distribution": dist,
            }
        )

    @app.get("/api/v1/companies", response_model=schemas.CompanyList, responses=ERRORS, tags=["companies"])
    def companies(who: Caller, session: Db, as_of: AsOf = None) -> Response:
        """The 운용사 ratings this key may see (its companies; none for a key scoped to funds only)."""
        return _json({"items": company_store.list_companies(session, who, as_of)})

    @app.get(
        "/api/v1/companies/{name}",
        responses={**ERRORS, **COMPANY_NOT_FOUND, 200: {"description": "The company's companies.json entry, with as_of."}},
        tags=["companies"],
    )
    def company(name: str, who: Caller, session: Db) -> Response:
        """One 운용사's newest rating: scores, grade, pillars, strengths by 유형 and its funds."""
        text = company_store.company_document(session, who, name) if CODE_RE.match(name) else None
        if text is None:
            raise HTTPException(404, "no such company")
        return Response(text, media_type="application/json")

    add_evaluation_routes(app, Caller, Db, ERRORS, _json)
    app.add_middleware(BodyLimit, max_bytes=int(settings.upload_max_mb * 3 * (1 << 20)) + (1 << 20))
    app.add_middleware(AccessLog)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` workers: the URL comes from ``EVALUATOR_DB``."""
    if not logging.getLogger().handlers:  # spawned workers do not inherit the parent's logging setup
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return create_app(os.environ.get(ENV_URL))
