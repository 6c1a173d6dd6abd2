"""Rendering pages: one Jinja2 environment per app (the web app's templates, then each page set's),
autoescaped, with ``asset()`` (versioned, long-cached URLs) and the signed-in viewer in every page."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from evaluator.app.web.chart_text import chart_table
from evaluator.app.web.charts import plotly_text
from evaluator.app.web.extensions import NavLink
from evaluator.app.web.grade_styles import badge_class

BASE_NAV = (
    NavLink("/", "개요"),
    NavLink("/funds", "펀드"),
    NavLink("/uploads", "업로드", admin_only=True),
)
COMPANIES_NAV = NavLink("/companies", "운용사")


def make_templates(extra: list[Path]) -> Jinja2Templates:
    own = str(resources.files("evaluator.app.web") / "templates")
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader([own, *map(str, extra)])])
    env = jinja2.Environment(loader=loader, autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["plotly_text"] = plotly_text
    env.filters["chart_table"] = chart_table
    env.globals["badge_class"] = badge_class
    return Jinja2Templates(env=env)


def _num(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pct(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{value * 100:.{digits}f}%"


def nav_for(request: Request, viewer: Any) -> list[NavLink]:
    links = [*BASE_NAV, *request.app.state.web_nav]
    if request.app.state.extensions.company_ratings is not None:
        links.insert(2, COMPANIES_NAV)
    admin = bool(viewer is not None and viewer.principal.admin)
    return [link for link in links if admin or not link.admin_only]


def render(request: Request, name: str, context: dict[str, Any] | None = None, status: int = 200,
           headers: dict[str, str] | None = None) -> HTMLResponse:
    """Render ``name`` (a template extending base.html) with the viewer, nav and ``asset()``."""
    viewer = getattr(request.state, "viewer", None)
    ctx = {
        "viewer": viewer,
        "nav": nav_for(request, viewer),
        "asset": request.app.state.assets.url,
        "path": request.url.path,
        **(context or {}),
    }
    response = request.app.state.templates.TemplateResponse(request, name, ctx, status_code=status,
                                                            headers=headers)
    response.headers.setdefault("Cache-Control", "no-store")
    return response
