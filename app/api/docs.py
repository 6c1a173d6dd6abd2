"""``/docs`` with Swagger UI 5 served from this server (the ``fastapi-offline`` package ships the files),
so the page works on a network with no internet (망분리). Assets get long cache headers and gzip.

The page has its own Content-Security-Policy: Swagger UI starts from one inline script (allowed by a nonce
made for each response, so no other inline script runs) and sets inline styles on its widgets
(``style-src 'unsafe-inline'``, this page only); scripts, fonts and images still come only from this server."""

from __future__ import annotations

import secrets
from importlib import resources

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from evaluator.app.api.assets import AssetStore

SWAGGER_FILES = {"swagger-ui-bundle.js": "application/javascript", "swagger-ui.css": "text/css",
                 "favicon.png": "image/png"}


def add_offline_docs(app: FastAPI, assets: AssetStore) -> None:
    """Register /docs on ``app`` (created with docs_url=None) and its files in ``assets``."""
    folder = resources.files("fastapi_offline") / "static"
    for name, media in SWAGGER_FILES.items():
        assets.add(f"swagger/{name}", folder / name, media)

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{assets.url('swagger/swagger-ui-bundle.js')}",
            swagger_css_url=f"{root}{assets.url('swagger/swagger-ui.css')}",
            swagger_favicon_url=f"{root}{assets.url('swagger/favicon.png')}",
        )
        nonce = secrets.token_urlsafe(16)
        body = bytes(page.body).decode("utf-8").replace("<script>", f'<script nonce="{nonce}">')
        return HTMLResponse(body, headers={"Content-Security-Policy": docs_csp(nonce)})


def docs_csp(nonce: str) -> str:
    return (f"default-src 'none'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; "
            "frame-ancestors 'none'")
