"""Errors as JSON: every failure is ``{"error": kind, "detail": …}`` with its status; 405 names every method
of the path, 401 asks for a bearer key, a busy database is 503 and nothing internal leaks into a 500."""

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException
from starlette.routing import Match

log = logging.getLogger("evaluator.api")
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allow_header(request: Request, exc: HTTPException) -> dict[str, str]:
    """The exception's headers; on 405, Allow lists the methods of EVERY route on the path (RFC 9110)
    (Starlette names only the first matching route's, so GET /login beside POST /login said "GET")."""
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        methods = [
            m
            for m in METHODS
            if any(
                route.matches({**request.scope, "method": m})[0] is Match.FULL
                for route in request.app.router.routes
            )
        ]
        if methods:
            headers["Allow"] = ", ".join(methods)
    return headers


class RateLimited(Exception):
    """Too many requests for one key in the current window (answered 429 with Retry-After)."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after


def json_response(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """``doc`` as compact UTF-8 JSON (Korean as written, not escaped)."""
    body = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def error_response(status: int, error: str, detail: Any, headers: dict[str, str] | None = None) -> Response:
    """The one error shape: ``{"error": kind, "detail": …}``."""
    return json_response({"error": error, "detail": detail}, status, headers)


def add_error_handlers(app: FastAPI) -> None:
    """Answer HTTP errors, rate limits, invalid requests, database failures and anything unexpected as JSON."""

    @app.exception_handler(HTTPException)
    async def httperror_response(request: Request, exc: HTTPException) -> Response:
        kinds = {
            400: "bad_request",
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            405: "method_not_allowed",
        }
        headers = allow_header(request, exc)
        if exc.status_code == 401:
            headers["WWW-Authenticate"] = "Bearer"
        detail = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else "no such resource"
        return error_response(exc.status_code, kinds.get(exc.status_code, "error"), detail, headers)

    @app.exception_handler(RateLimited)
    async def too_many(_request: Request, exc: RateLimited) -> Response:
        return error_response(
            429,
            "rate_limited",
            "too many requests for this key; try again later",
            {"Retry-After": str(exc.retry_after)},
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> Response:
        detail = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))} for e in exc.errors()
        ]
        return error_response(422, "invalid_request", detail)

    @app.exception_handler(SQLAlchemyError)
    async def dberror_response(_request: Request, exc: SQLAlchemyError) -> Response:
        log.error("database error: %s", type(exc).__name__)
        return error_response(503, "unavailable", "the database is busy or unreachable; try again")

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> Response:
        log.error("unexpected %s", type(exc).__name__)
        return error_response(500, "internal", "internal error")
