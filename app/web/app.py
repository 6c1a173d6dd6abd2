"""One server: the API (unchanged paths and JSON errors) plus the pages, on the same keys and queries.

``create_web_app`` builds the API app, then adds the web's assets, sign-in, pages and any page sets
(:mod:`evaluator.app.web.extensions`). Errors on page paths are HTML pages; on API paths they stay JSON.
"""

from __future__ import annotations

import logging
import os
from functools import partial
from importlib import resources

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from sqlalchemy import Engine
from starlette.exceptions import HTTPException

from evaluator.app.api.errors import RateLimited, allow_header
from evaluator.app.api.server import create_app
from evaluator.app.api.settings import Settings
from evaluator.app.storage.database import ENV_URL
from evaluator.app.web import audit_page, auth, company_pages, exports, fund_list, fund_page, pages, uploads
from evaluator.app.web.auth import LoginRequired, login_redirect
from evaluator.app.web.cache import ScopeCache
from evaluator.app.web.extensions import Extensions
from evaluator.app.web.fonts import shared_font
from evaluator.app.web.grade_styles import grades_css
from evaluator.app.web.plotly_style import plotly_style
from evaluator.app.web.render import make_templates, render
from evaluator.app.web.run_pages import runs_page_set_from_env


def default_extensions() -> Extensions:
    """The page sets ``evaluator serve`` includes. Add new ones here."""
    ext = Extensions(company_ratings=company_pages.stored_company_ratings)
    runs = runs_page_set_from_env()  # `serve --runs DIR`: the run viewer, admin keys only
    if runs is not None:
        ext.page_sets.append(runs)
    return ext


API_PREFIXES = ("/api/", "/assets/", "/docs", "/openapi.json", "/healthz")
TITLES = {404: "찾을 수 없습니다", 403: "허용되지 않습니다", 405: "허용되지 않는 요청입니다",
          422: "요청이 올바르지 않습니다", 429: "요청이 너무 많습니다", 413: "파일이 너무 큽니다"}


def _register_assets(app: FastAPI) -> None:
    assets = app.state.assets
    web = resources.files("evaluator.app.web") / "static"
    assets.add("web/app.css", web / "app.css", "text/css")
    assets.add("web/layout.css", web / "layout.css", "text/css")
    assets.add("web/runs.css", web / "runs.css", "text/css")
    assets.add("web/charts.js", web / "charts.js", "application/javascript")
    assets.add("plotly.min.js", resources.files("plotly") / "package_data" / "plotly.min.js",
               "application/javascript")
    font = shared_font()
    for name in font.slices:
        assets.add_made(name, partial(font.body, name), "font/woff2", font.version(name))
    # a file, not an inline <style>: the CSP allows no inline style
    assets.add("web/fonts.css", web / "app.css", "text/css", lambda _raw: font.css(assets.url))
    assets.add("plotly-style.css", web / "app.css", "text/css", lambda _raw: plotly_style()[1])
    assets.add("plotly-rules.css", web / "app.css", "text/css", lambda _raw: b"/* Plotly inserts its rules */\n")
    assets.add("web/grades.css", web / "app.css", "text/css", lambda _raw: grades_css())


def _is_page(request: Request) -> bool:
    return not request.url.path.startswith(API_PREFIXES)


def _html_errors(app: FastAPI) -> None:
    """Page paths get HTML error pages; API paths keep the API's JSON handlers."""
    json_http = app.exception_handlers[HTTPException]
    json_invalid = app.exception_handlers[RequestValidationError]
    json_limited = app.exception_handlers[RateLimited]

    def page(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        return render(request, "error.html", {"status": status, "title": TITLES.get(status, "오류"),
                                              "message": message}, status=status, headers=headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if not _is_page(request):
            return await json_http(request, exc)
        message = "요청한 페이지나 펀드가 없습니다." if exc.status_code == 404 else str(exc.detail)
        return page(request, exc.status_code, message, allow_header(request, exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if not _is_page(request):
            return await json_invalid(request, exc)
        names = sorted({str(e.get("loc", ("", ""))[-1]) for e in exc.errors()})
        return page(request, 422, "올바르지 않은 값: " + ", ".join(names))

    @app.exception_handler(RateLimited)
    async def limited(request: Request, exc: RateLimited) -> Response:
        if not _is_page(request):
            return await json_limited(request, exc)
        return page(request, 429, "잠시 후 다시 시도하세요.", {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, _exc: LoginRequired) -> Response:
        return login_redirect(request)


def create_web_app(
    url: str | None = None,
    *,
    engine: Engine | None = None,
    settings: Settings | None = None,
    extensions: Extensions | None = None,
) -> FastAPI:
    """The API plus the pages. ``extensions`` adds page sets (default: :func:`default_extensions`)."""
    app = create_app(url, engine=engine, settings=settings)
    ext = extensions if extensions is not None else default_extensions()
    app.state.extensions = ext
    app.state.web_nav = [link for ps in ext.page_sets for link in ps.nav]
    app.state.page_cache = ScopeCache()
    app.state.templates = make_templates([ps.templates for ps in ext.page_sets if ps.templates])
    _register_assets(app)
    app.state.templates.env.globals["plotly_style_id"] = plotly_style()[0]
    app.state.templates.env.globals["company_href"] = company_pages.company_href
    _html_errors(app)
    app.include_router(auth.router)
    app.include_router(pages.router)
    app.include_router(company_pages.router)
    app.include_router(fund_list.router)
    app.include_router(exports.router)
    app.include_router(fund_page.router)
    app.include_router(uploads.router)
    app.include_router(audit_page.router)
    for page_set in ext.page_sets:
        app.include_router(page_set.router)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` workers: the URL comes from ``EVALUATOR_DB``."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return create_web_app(os.environ.get(ENV_URL))
