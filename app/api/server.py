"""The FastAPI application: bearer-key auth, tenant-scoped reads, JSON errors only, one log line per request.

Every worker opens its own engine from the URL; all state that matters (keys, revocations, batches) is in
the database, so ``--workers N`` behaves like one worker.
"""

import logging
import os
import re
import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.exceptions import HTTPException

from evaluator.app.api.assets import AssetStore
from evaluator.app.api.docs import add_offline_docs
from evaluator.app.api.errors import RateLimited, add_error_handlers, json_response
from evaluator.app.api.evaluation_routes import BodyLimit, add_evaluation_routes
from evaluator.app.api.read_routes import ERRORS, add_read_routes
from evaluator.app.api.security_headers import SecurityHeaders
from evaluator.app.api.settings import Settings
from evaluator.app.storage import ratelimit
from evaluator.app.storage.apikeys import Principal, authenticate
from evaluator.app.storage.database import ENV_URL, open_database, service_url

log = logging.getLogger("evaluator.api")
KEY_IN_TEXT = re.compile(r"ev_[0-9A-Za-z]+_[A-Za-z0-9_-]+")
bearer = HTTPBearer(auto_error=False, description="An API key from `evaluator keys create`: ev_<id>_<secret>")


def check_rate(session: Session, settings: Settings, key_id: str) -> None:
    """Count one request for ``key_id`` in the database; raise :class:`RateLimited` past the limit."""
    if settings.rate_per_minute <= 0:
        return
    verdict = ratelimit.hit_or_pass(session, f"key:{key_id}", settings.rate_per_minute, 60)
    if not verdict.allowed:
        raise RateLimited(verdict.retry_after)


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

    add_error_handlers(app)

    @app.get("/healthz", tags=["health"])
    def healthz(session: Db) -> Response:
        """Liveness and database reachability; needs no key."""
        session.execute(select(1))
        return json_response({"status": "ok"})

    @app.get("/assets/{name:path}", include_in_schema=False)
    def asset(name: str, request: Request) -> Response:
        """Packaged static files (long-cached, gzip); see :class:`AssetStore`."""
        return assets.response(name, request)

    add_read_routes(app, Caller, Db)
    add_evaluation_routes(app, Caller, Db, ERRORS, json_response)
    app.add_middleware(BodyLimit, max_bytes=int(settings.upload_max_mb * 3 * (1 << 20)) + (1 << 20))
    app.add_middleware(SecurityHeaders)
    app.add_middleware(AccessLog)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` workers: the URL comes from ``EVALUATOR_DB``."""
    if not logging.getLogger().handlers:  # spawned workers do not inherit the parent's logging setup
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return create_app(os.environ.get(ENV_URL))
