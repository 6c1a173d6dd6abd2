"""``POST /api/v1/evaluations`` (admin keys: upload files, get a job id) and ``GET /api/v1/jobs/{id}``."""

import logging
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.responses import Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException

from evaluator.app.api import schemas
from evaluator.app.api.evaluations import UploadError, stage_uploads, start_job
from evaluator.app.storage import jobs

UPLOAD_PATHS = ("/api/v1/evaluations", "/uploads")
log = logging.getLogger("evaluator.jobs")


class BodyLimit:
    """Pure ASGI middleware: refuse an upload whose declared size exceeds the limit before reading it."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") == "POST" and scope.get("path") in UPLOAD_PATHS:
            length = dict(scope.get("headers") or []).get(b"content-length", b"0")
            if length.isdigit() and int(length) > self.max_bytes:
                body = b'{"error":"too_large","detail":"the upload is larger than the server accepts"}'
                await send({"type": "http.response.start", "status": 413,
                            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _fail_abandoned_at_start(app: FastAPI) -> None:
    """A job left running by a worker that died (before this server started) is failed now, not on its
    first read; a job another live worker runs keeps a fresh heartbeat and is left alone."""
    try:
        with app.state.sessions() as session:
            jobs.fail_abandoned(session)
    except SQLAlchemyError as exc:  # a busy database must not keep the server from starting
        log.warning("could not check for abandoned jobs at start-up: %s", type(exc).__name__)


def add_evaluation_routes(app: FastAPI, caller: Any, db: Any, errors: dict, json: Any) -> None:
    """Register the two endpoints with the API's own key dependency (``caller``) and session (``db``)."""
    settings = app.state.settings
    engine = app.state.engine
    _fail_abandoned_at_start(app)
    forbidden = {400: {"model": schemas.ErrorBody, "description": "The body is not readable multipart data."},
                 403: {"model": schemas.ErrorBody, "description": "Only admin keys may start evaluations."},
                 413: {"model": schemas.ErrorBody, "description": "A file is over the size limit."}}

    @app.post("/api/v1/evaluations", status_code=202, response_model=schemas.JobStarted,
              responses={**errors, **forbidden}, tags=["evaluations"])
    async def evaluate(
        request: Request,
        who: caller,
        data: Annotated[UploadFile, File(description="NAV file: CSV (utf-8/cp949), XLSX or XLS.")],
        # optional parts are typed without null: a multipart form has no null, only an absent part
        meta: Annotated[UploadFile, File(description="Fund metadata (optional).")] = None,  # type: ignore[assignment]
        benchmark: Annotated[UploadFile, File(description="Benchmark levels (optional).")] = None,  # type: ignore[assignment]
        as_of: Annotated[str, Form(max_length=10, json_schema_extra={"format": "date"},  # noqa: RUF013
                                   description="YYYY-MM-DD (default: the data's last date).")] = None,
    ) -> Response:
        """Start an evaluation of the uploaded files as a background job; poll ``/api/v1/jobs/{id}``."""
        if not who.admin:
            raise HTTPException(403, "only admin keys may start evaluations")
        form = await request.form()  # FastAPI reads an empty field as absent and a text part as a file
        sent = form.get("as_of")
        if sent is not None and not str(sent).strip():
            return json({"error": "invalid_request", "detail": "as_of: 비어 있습니다 (YYYY-MM-DD, 또는 빼세요)"}, 422)
        not_files = [role for role in ("data", "meta", "benchmark") if isinstance(form.get(role), str)]
        if not_files:
            return json({"error": "invalid_request", "detail": f"{', '.join(not_files)}: 파일이 아닙니다"}, 422)
        try:
            staged = await stage_uploads({"data": data, "meta": meta, "benchmark": benchmark}, as_of,
                                         int(settings.upload_max_mb * (1 << 20)))
        except UploadError as exc:
            kind = "too_large" if exc.status == 413 else "invalid_request"
            return json({"error": kind, "detail": str(exc)}, exc.status)
        job_id = start_job(engine, who, staged, request.client.host if request.client else None)
        return json({"job_id": job_id, "url": f"/api/v1/jobs/{job_id}"}, 202)

    @app.get("/api/v1/jobs/{job_id}", response_model=schemas.JobState,
             responses={**errors, 404: {"model": schemas.ErrorBody, "description": "No such job for this key."}},
             tags=["evaluations"])
    def job(job_id: int, who: caller, session: db) -> Response:
        """A job's state: queued, running (with progress), done (with its run id) or failed (with why)."""
        doc = jobs.get_job(session, job_id) if 0 < job_id < 2**31 else None
        if doc is None or not who.admin:
            raise HTTPException(404, "no such job")
        return json(doc)
