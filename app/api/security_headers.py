"""Security headers on every response (pure ASGI, so streaming and file responses pass untouched).

The Content-Security-Policy allows only this server's own scripts, styles, fonts and images (everything is
served from ``/assets/``; no inline script anywhere: chart specs travel as ``application/json`` data blocks
that are never executed). ``/docs`` sets its own policy (see :mod:`evaluator.app.api.docs`): Swagger UI boots
from one inline script, allowed there by a per-response nonce, and styles its widgets inline.
``Cache-Control: no-store`` goes on everything but the content-hashed assets, so no signed-in page or API
answer is kept by a browser or proxy. HSTS is sent only over HTTPS.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; font-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""``img-src data:``: plotly's modebar draws its icons as data: SVG images."""
HSTS = "max-age=31536000; includeSubDomains"
CACHED_PREFIX = "/assets/"


def fixed_headers(https: bool) -> dict[str, str]:
    headers = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
               "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY"}
    if https:
        headers["Strict-Transport-Security"] = HSTS
    return headers


class SecurityHeaders:
    """Adds :func:`fixed_headers` (a header a route set itself wins) and ``no-store`` outside /assets/."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = fixed_headers(scope.get("scheme") == "https")
        if not scope.get("path", "").startswith(CACHED_PREFIX):
            extra["Cache-Control"] = "no-store"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                present = {name.lower() for name, _ in raw}
                raw += [(k.lower().encode(), v.encode()) for k, v in extra.items()
                        if k.lower().encode() not in present]
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, send_with_headers)
