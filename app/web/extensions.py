"""How other features plug pages into the web app: a :class:`PageSet` is a router, its nav links and
(optionally) a folder of templates that extend ``base.html``.

A new page set: write an ``APIRouter`` whose handlers depend on ``require_user`` or ``require_admin``
(:mod:`evaluator.app.web.auth`) and answer with ``render(...)``; then list it in
:func:`~evaluator.app.web.app.default_extensions` (what ``evaluator serve`` uses) or pass it to
``create_web_app(extensions=...)``. This module only declares the shapes, so the page sets import it and it imports
none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter


@dataclass(frozen=True)
class NavLink:
    path: str
    label: str  # Korean, as shown in the top bar
    admin_only: bool = False


@dataclass(frozen=True)
class PageSet:
    router: APIRouter
    nav: tuple[NavLink, ...] = ()
    templates: Path | None = None  # searched after the web app's own templates/


# 운용사 ratings, when a feature provides them: (session, principal) -> rows, each a dict with at least
# "company", "grade" (or "grade_label") and "funds_rated"; the stored ratings in `evaluator serve`
# (web/company_pages.py). None hides /companies, the company pages and their links.
CompanyRatings = Callable[[Any, Any], list[dict[str, Any]]]


@dataclass
class Extensions:
    page_sets: list[PageSet] = field(default_factory=list)
    company_ratings: CompanyRatings | None = None
