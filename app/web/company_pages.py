"""운용사 pages: ``/companies`` (each visible company's newest rating) and ``/companies/{name}`` (one company:
scores, its funds with their grades, 강점과 약점 as in the Korean report, pillar scores, grade history).

The rows come from the API's own scoped queries (:mod:`evaluator.app.storage.companies`), so a client key sees
exactly the companies ``/api/v1/companies`` shows it: those it is scoped to, none for a key scoped to funds only.
Names may hold ``/`` (the API's ``anytext`` path part). A 운용사 grade is on the rating rule's own bands, which
the rubric checks number 1 (best) to N whatever the funds' scale (a star rubric still has a 1등급 운용사): it is
written with its band's label, ranked by its number, and never read on the funds' scale. The funds a company page
lists are graded on their batch's scale (★★★★★, 가2등급 …), as in the company's Korean report.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException

from evaluator.app.api.read_routes import CODE_RE
from evaluator.app.storage import companies as company_store
from evaluator.app.storage import scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.web.auth import Db, User
from evaluator.app.web.charts import DATE_AXIS, FONT
from evaluator.app.web.render import render
from evaluator.domains.fund.companies import pillar_verdicts, type_verdicts
from evaluator.methodology.rubric_scale import GradeScale

router = APIRouter(include_in_schema=False)


def stored_company_ratings(session: Session, principal: Principal) -> list[dict[str, Any]]:
    """The ``Extensions.company_ratings`` of ``evaluator serve``: the stored ratings the key may see."""
    return company_store.list_companies(session, principal)


def company_href(request: Request, name: str | None) -> str | None:
    """The 운용사 page of ``name`` when the viewer may open it (a template global: the fund page links it)."""
    viewer = getattr(request.state, "viewer", None)
    if not name or viewer is None or request.app.state.extensions.company_ratings is None:
        return None
    with request.app.state.sessions() as session:
        if not company_store.rated_company(session, viewer.principal, name):
            return None
    return "/companies/" + quote(name, safe="")


def _company_badge(grade: int | None, label: str | None) -> dict[str, Any]:
    """A 운용사 grade as the page shows it: its band's label; rank = the grade (bands run from 1, the best)."""
    if grade is None:
        return {"label": "미평가", "rank": None}
    return {"label": label or f"{grade}등급", "rank": grade}


def company_history_chart(history: list[dict[str, Any]]) -> dict[str, Any]:
    """Score and 운용사 grade per as-of date; the grade axis runs from 1 (the best band) at the top, labelled with
    the bands' own labels (a Plotly spec, like the fund page's history)."""
    rated = [h for h in history if h["status"] == "ok" and h["grade"] is not None]
    labels = {h["grade"]: h["badge"]["label"] for h in rated}
    worst = max([5, *labels])
    ticks = list(range(1, worst + 1))
    return {
        "data": [
            {"type": "scatter", "mode": "lines+markers", "name": "종합 점수", "x": [h["as_of"] for h in rated],
             "y": [h["score"] for h in rated]},
            {"type": "scatter", "mode": "lines+markers", "name": "등급", "yaxis": "y2",
             "x": [h["as_of"] for h in rated], "y": [h["grade"] for h in rated],
             "text": [h["badge"]["label"] for h in rated], "hovertemplate": "%{x}: %{text}<extra></extra>"},
        ],
        "layout": {"font": FONT, "margin": {"l": 50, "r": 60, "t": 30, "b": 60}, "height": 320, "xaxis": DATE_AXIS,
                   "yaxis": {"title": {"text": "점수"}, "range": [0, 100]},
                   "yaxis2": {"title": {"text": "등급"}, "overlaying": "y", "side": "right",
                              "range": [worst + 0.5, 0.5], "tickmode": "array", "tickvals": ticks,
                              "ticktext": [labels.get(g, f"{g}등급") for g in ticks]}},
    }


@router.get("/companies")
def companies_page(request: Request, viewer: User, session: Db) -> Response:
    """Every visible 운용사 rating, best first on its batch's scale."""
    provider = request.app.state.extensions.company_ratings
    if provider is None:
        raise HTTPException(404, "no such page")
    rows = [{**dict.fromkeys((*company_store.LIST_FIELDS, "as_of", "run_id")), **row}
            for row in provider(session, viewer.principal)]  # a provider may leave fields out
    for row in rows:
        row["badge"] = _company_badge(row.get("grade"), row.get("grade_label"))
        row["href"] = "/companies/" + quote(str(row["company"]), safe="")
    return render(request, "companies.html", {"rows": rows,
                                              "dates": sorted({r["as_of"] for r in rows if r.get("as_of")})})


def _funds(funds: list[dict[str, Any]], scale: GradeScale) -> list[dict[str, Any]]:
    out = []
    for f in funds:
        grade = f.get("grade")
        label = None
        if grade is not None and scale.contains(grade):
            label = scale.provisional_label(grade) if f.get("provisional") else scale.label(grade)
        status = f.get("status")
        shown = label or {"error": "오류"}.get(status or "", "미평가")
        out.append({**f, "grade_text": shown, "color": scale.colors().get(grade) if label else None,
                    "href": "/funds/" + quote(str(f["fund_code"]), safe="")})
    return out


@router.get("/companies/{name:anytext}")
def company_page(request: Request, name: str, viewer: User, session: Db) -> Response:
    """One 운용사: the newest rating the viewer may see; unknown and out of scope are the same 404."""
    if request.app.state.extensions.company_ratings is None or not CODE_RE.match(name):
        raise HTTPException(404, "no such company")
    text = company_store.company_document(session, viewer.principal, name)
    history = company_store.company_history(session, viewer.principal, name)
    if text is None or not history:
        raise HTTPException(404, "no such company")
    doc = json.loads(text)
    funds_view = scales.ScaleView.of(h["grade_scale"] for h in reversed(history))
    qual = doc.get("qualitative")
    for h in history:
        h["badge"] = _company_badge(h["grade"], h["grade_label"])
    return render(request, "company.html", {
        "c": doc, "badge": _company_badge(doc.get("grade"), doc.get("grade_label")),
        "funds": _funds(doc.get("funds") or [], scales.scale_of(history[-1]["grade_scale"])),
        "types": doc.get("by_type") or [], "type_verdicts": type_verdicts(doc.get("by_type") or []),
        "pillars": (qual or {}).get("pillars") or [], "pillar_verdicts": pillar_verdicts(qual), "qual": qual,
        "history": list(reversed(history)),
        "chart": company_history_chart(history) if len(history) > 1 else None,
        "scale_note": funds_view.message(),
    })
