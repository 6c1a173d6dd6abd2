"""Signing in to the pages with a login and password (or an API key), and the dependencies every page uses.

``POST /login`` takes ``login`` and ``password``: a personal account's argon2id hash is checked
(:mod:`evaluator.app.storage.users`), or, with the login left empty, the password field may hold an API key
(scripts and existing integrations). Either starts a database session (:mod:`evaluator.app.storage.websessions`);
the cookie is HttpOnly, SameSite=Lax, Secure over HTTPS (or behind a proxy that uvicorn trusts) and ends with
the session (absolute and idle timeouts). Failed sign-ins are counted in the database per account (the login,
or the key id) and, with a looser limit, per client address, and refused with 429 past either; a correct
password for another account from the same address still signs in. The address is the peer's, or the forwarded
one only from proxies named in ``--forwarded-allow-ips``. Secrets are read from the form body only: never from
a URL, never written into a page, a log line or the audit log (which records every sign-in and sign-out).

Dependencies for pages (also for page sets that plug in):
``require_user`` → :class:`Viewer` (anyone signed in; a client's queries go through ``viewer.principal``),
``require_admin`` → :class:`Viewer` (staff: admin keys, admin and analyst accounts; others get the same 404
as an unknown page), ``require_manager`` → :class:`Viewer` (admin keys and admin accounts),
``db`` → a SQLAlchemy session, ``check_csrf`` for forms that change anything.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException

from evaluator.app.api.server import check_rate
from evaluator.app.storage import ratelimit
from evaluator.app.storage.apikeys import KEY_RE, Principal, authenticate
from evaluator.app.storage.audit import record
from evaluator.app.storage.users import authenticate_user, known_login, normal_login
from evaluator.app.storage.websessions import end_session, lookup, start_session
from evaluator.app.web.render import render

COOKIE = "evaluator_session"
LOGIN_CSRF_COOKIE = "evaluator_login_csrf"


class LoginRequired(Exception):
    """No live session: pages answer with a redirect to /login."""


@dataclass(frozen=True)
class Viewer:
    principal: Principal
    csrf: str
    token: str  # the cookie's token (to end the session); never rendered


def db(request: Request) -> Iterator[Session]:
    with request.app.state.sessions() as session:
        yield session


Db = Annotated[Session, Depends(db)]


def require_user(request: Request, session: Db) -> Viewer:
    """The signed-in viewer, re-checked against the database on every request (revocation is immediate)."""
    token = request.cookies.get(COOKIE, "")
    signed = lookup(session, token, _idle(request)) if token else None
    if signed is None:
        raise LoginRequired()
    request.state.key_id = signed.principal.key_id
    viewer = Viewer(signed.principal, signed.csrf, token)
    request.state.viewer = viewer
    check_rate(session, request.app.state.settings, signed.principal.key_id)
    return viewer


def require_admin(viewer: Annotated[Viewer, Depends(require_user)]) -> Viewer:
    if not viewer.principal.admin:
        raise HTTPException(404, "no such page")
    return viewer


def require_manager(viewer: Annotated[Viewer, Depends(require_user)]) -> Viewer:
    if not viewer.principal.manager:
        raise HTTPException(404, "no such page")
    return viewer


User = Annotated[Viewer, Depends(require_user)]
Admin = Annotated[Viewer, Depends(require_admin)]
Manager = Annotated[Viewer, Depends(require_manager)]


def _idle(request: Request) -> dt.timedelta:
    return dt.timedelta(minutes=request.app.state.settings.session_idle_minutes)


async def check_csrf(request: Request, viewer: User) -> Viewer:
    """For state-changing forms: the posted ``csrf`` field must equal the session's token."""
    form = await request.form()
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent, viewer.csrf):
        raise HTTPException(403, "the form has expired; reload the page and try again")
    return viewer


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _login_buckets(request: Request, login: str, password: str) -> list[tuple[str, int]]:
    """Failure counters a sign-in is checked against: the account (the login typed, or the key id named in
    the password field when the login is empty) and, looser, the client address, so one person guessing
    from a firm's shared address locks only the account guessed at, and another account still signs in."""
    settings = request.app.state.settings
    buckets = [(f"login:{client_address(request)}", settings.login_address_failures)]
    if login:  # hashed: a password typed into the login field by mistake is not kept in the counter table
        digest = hashlib.sha256(login.encode("utf-8")).hexdigest()[:40]
        buckets.append((f"login-user:{digest}", settings.login_failures))
    else:
        match = KEY_RE.match(password)
        if match:
            buckets.append((f"login-key:{match.group(1)}", settings.login_failures))
    return buckets


def _safe_next(target: str | None) -> str:
    """Only a local path: never another site (``//host``, ``/\\host``, schemes)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")) or len(target) > 500:
        return "/"
    return target


def login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)


router = APIRouter(include_in_schema=False)


def _login_page(request: Request, error: str | None, status: int, next_path: str,
                headers: dict[str, str] | None = None) -> Response:
    token = secrets.token_urlsafe(24)
    response = render(request, "login.html", {"error": error, "login_csrf": token, "next": next_path},
                      status=status, headers=headers)
    response.set_cookie(LOGIN_CSRF_COOKIE, token, max_age=3600, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/login")
    return response


@router.get("/login")
def login_form(request: Request, session: Db, next: str | None = None) -> Response:
    token = request.cookies.get(COOKIE, "")
    if token and lookup(session, token, _idle(request)) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return _login_page(request, None, 200, _safe_next(next))


@router.post("/login")
def login(
    request: Request,
    session: Db,
    login: Annotated[str, Form(max_length=100)] = "",
    password: Annotated[str, Form(max_length=1024)] = "",
    key: Annotated[str, Form(max_length=200)] = "",  # the older form's field: an API key
    csrf: Annotated[str, Form(max_length=100)] = "",
    next: Annotated[str, Form(max_length=500)] = "/",
) -> Response:
    settings = request.app.state.settings
    login = normal_login(login)
    password = password or key
    buckets = _login_buckets(request, login, password.strip())
    target = _safe_next(next)
    address = client_address(request)
    if any(ratelimit.peek(session, bucket, settings.login_window_s) >= limit for bucket, limit in buckets):
        retry = str(settings.login_window_s)
        record(session, _failed_actor(session, login, password), "sign-in-failed", {"reason": "throttled"},
               address=address)
        return _login_page(request, "로그인 실패가 너무 많습니다. 잠시 후 다시 시도하세요.", 429, target,
                           {"Retry-After": retry})
    expected = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    if not expected or not hmac.compare_digest(csrf, expected):
        return _login_page(request, "로그인 양식이 만료되었습니다. 다시 입력하세요.", 403, target)
    who = authenticate_user(session, login, password) if login else authenticate(session, password.strip())
    if who is None:
        for bucket, limit in buckets:
            ratelimit.hit(session, bucket, limit, settings.login_window_s)
        record(session, _failed_actor(session, login, password), "sign-in-failed", {"reason": "wrong credentials"},
               address=address)
        message = "아이디 또는 비밀번호가 올바르지 않습니다." if login else "키가 올바르지 않거나 만료·폐기되었습니다."
        return _login_page(request, message, 401, target)
    token, expires = start_session(session, who, dt.timedelta(hours=settings.session_hours), _idle(request))
    record(session, who, "sign-in", {"via": "password" if login else "key"}, address=address)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, token, expires=expires, httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", path="/")
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


def _failed_actor(session: Db, login: str, password: str) -> str:
    """Whom a failed sign-in is recorded under: an existing account's login, or the key id the password field
    named; anything else as ``(unknown)``, so a password typed into the login field never reaches the log."""
    if login:
        return login if known_login(session, login) else "(unknown)"
    match = KEY_RE.match(password.strip())
    return f"key:{match.group(1)}" if match else "(unknown)"


@router.post("/logout")
def logout(request: Request, session: Db, viewer: Annotated[Viewer, Depends(check_csrf)]) -> Response:
    end_session(session, viewer.token)
    record(session, viewer.principal, "sign-out", address=client_address(request))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response
