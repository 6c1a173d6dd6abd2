"""Uploads and job pages (admin keys): start an evaluation from files, then watch its job.

The form posts NAV, meta and benchmark files with an as-of date and the session's CSRF token; the job
runs in the background (:mod:`evaluator.app.api.evaluations`) and its page reloads until it ends.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException

from evaluator.app.api.evaluations import UploadError, stage_uploads, start_job
from evaluator.app.storage import jobs
from evaluator.app.web.auth import Admin, Db, Viewer, check_csrf, client_address
from evaluator.app.web.render import render
from evaluator.app.web.upload_errors import ROLES, STATES, upload_error

router = APIRouter(include_in_schema=False)


def _form_error(error: str | None) -> str | None:
    """The staging error with its field named as the form labels it (``data:`` → 기준가격(NAV) 파일:)."""
    if not error:
        return error
    field, sep, rest = error.partition(": ")
    names = {**ROLES, "as_of": "기준일"}
    return f"{names[field]}: {rest}" if sep and field in names else error


def _form(request: Request, session: Db, error: str | None = None, status: int = 200) -> Response:
    return render(request, "upload.html", {"error": _form_error(error), "jobs": jobs.recent_jobs(session),
                                           "limit_mb": request.app.state.settings.upload_max_mb,
                                           "states": STATES, "roles": ROLES},
                  status=status)


@router.get("/uploads")
def upload_form(request: Request, viewer: Admin, session: Db) -> Response:
    return _form(request, session)


@router.post("/uploads")
async def upload(
    request: Request,
    session: Db,
    viewer: Admin,
    _csrf: Annotated[Viewer, Depends(check_csrf)],
    data: Annotated[UploadFile | None, File()] = None,
    meta: Annotated[UploadFile | None, File()] = None,
    benchmark: Annotated[UploadFile | None, File()] = None,
    as_of: Annotated[str, Form(max_length=20)] = "",
) -> Response:
    limit = int(request.app.state.settings.upload_max_mb * (1 << 20))
    try:
        staged = await stage_uploads({"data": data, "meta": meta, "benchmark": benchmark}, as_of, limit)
    except UploadError as exc:
        return _form(request, session, str(exc), exc.status)
    job_id = start_job(request.app.state.engine, viewer.principal, staged, client_address(request))
    return RedirectResponse(f"/jobs/{job_id}", status_code=303)


@router.get("/jobs/{job_id}")
def job_page(request: Request, job_id: int, viewer: Admin, session: Db) -> Response:
    job = jobs.get_job(session, job_id) if 0 < job_id < 2**31 else None
    if job is None:
        raise HTTPException(404, "no such job")
    failure = upload_error(job.get("message"), job["params"].get("files") or {}) if job["state"] == "failed" else None
    return render(request, "job.html", {"job": job, "states": STATES, "roles": ROLES, "failure": failure})
