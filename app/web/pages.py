"""The pages: overview and fund page (the list: fund_list.py; 운용사: company_pages.py). Every query is the API's scoped query, so a
client key sees exactly what its API scope allows; anything else is absent (the same 404 as unknown)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException

from evaluator.app.api.read_routes import CODE_RE
from evaluator.app.storage import nav_series, overview, queries, scales
from evaluator.app.storage.apikeys import Principal
from evaluator.app.web.auth import Db, User
from evaluator.app.web.charts import (
    column_value,
    criteria_chart,
    distribution_chart,
    grade_columns,
    history_chart,
    metrics_chart,
    nav_chart,
)
from evaluator.app.web.render import render
from evaluator.methodology.rubric_scale import DEFAULT_SCALE

router = APIRouter(include_in_schema=False)


def overview_context(session: Session, who: Principal) -> dict[str, Any]:
    """Everything the overview shows, for one scope (cached until a batch is stored: see ScopeCache)."""
    dates = overview.latest_dates(session, who)
    latest = dates[0] if dates else None
    previous = dates[1] if len(dates) > 1 else None
    view = scales.in_view(session, who, latest)
    dist = queries.summary(session, who, latest, view) if latest else {}
    changes = overview.migrations(session, who, previous, latest) if previous and latest else None
    mine = overview.grade_changes(session, who, previous, latest) if previous and latest and not who.admin else None
    warnings = overview.new_batch_warnings(session, previous, latest) if latest and who.admin else []
    columns = grade_columns(dist, view.scale)
    table = {t: [column_value(row, c["key"]) for c in columns] for t, row in dist.items()}
    return {
        "latest": latest, "previous": previous, "dist": dist, "runs": queries.list_runs(session, who)[:20],
        "changes": changes, "my_changes": mine, "warnings": warnings, "chart": distribution_chart(dist, view.scale) if dist else None,
        "columns": columns, "table": table, "scale_note": view.message(), "default_scale": DEFAULT_SCALE.spec(),
    }


@router.get("/")
def overview_page(request: Request, viewer: User, session: Db) -> Response:
    who = viewer.principal
    cache = request.app.state.page_cache
    return render(request, "overview.html", cache.get(session, who, "overview", lambda: overview_context(session, who)))


METRIC_LABELS = {
    "annualized_return": "연환산 수익률", "annualized_volatility": "변동성", "sharpe": "샤프지수",
    "sortino": "소르티노", "mrar": "MRAR", "max_drawdown": "최대낙폭", "calmar": "칼마",
    "beta": "베타", "jensen_alpha": "젠센 알파", "tracking_error": "추적오차", "information_ratio": "정보비율",
}
PERCENT_METRICS = {"annualized_return", "annualized_volatility", "mrar", "max_drawdown", "jensen_alpha",
                   "tracking_error"}
CRITERION_LABELS = {"return": "수익률", "risk_adjusted": "위험조정수익", "risk": "위험", "benchmark": "벤치마크"}


def metrics_table(metrics: dict[str, Any]) -> dict[str, Any]:
    windows = [w for w, values in metrics.items() if values]
    names = [m for m in METRIC_LABELS if any(m in (metrics[w] or {}) for w in windows)]
    rows = [{"name": m, "label": METRIC_LABELS[m], "percent": m in PERCENT_METRICS,
             "values": [(metrics[w] or {}).get(m) for w in windows]} for m in names]
    return {"windows": windows, "rows": rows}


@router.get("/funds/{code:anytext}")  # the convertor is registered by read_routes
def fund_page(request: Request, code: str, viewer: User, session: Db) -> Response:
    found = nav_series.fund_report_and_series(session, viewer.principal, code) if CODE_RE.match(code) else None
    if found is None:
        raise HTTPException(404, "no such fund")
    report, series = json.loads(found[0]), nav_series.chart_document(found[1])
    history = queries.fund_history(session, viewer.principal, code)
    hist_view = scales.ScaleView.of(h["grade_scale"] for h in reversed(history))  # newest batch's scale first
    metrics = report.get("metrics") or {}
    criteria = {CRITERION_LABELS.get(k, k): v for k, v in (report.get("criterion_scores") or {}).items()}
    model = report.get("model_evaluation")
    return render(request, "fund.html", {
        "r": report, "history": history, "table": metrics_table(metrics), "criteria": criteria,
        "series": series,
        "charts": {
            "nav": nav_chart(series) if series else None,
            "history": history_chart(history, hist_view.scale) if history else None,
            "criteria": criteria_chart(criteria) if criteria else None,
            "metrics": metrics_chart(metrics, METRIC_LABELS) if metrics else None,
        },
        "model": model, "scale_note": hist_view.message(),
        "model_grade": scales.label(hist_view.scale, (model or {}).get("grade")) or "–",
        "grade_color": hist_view.scale.colors().get(report.get("grade")) if report.get("status") == "ok" else None,
        "grade_best": report.get("status") == "ok" and report.get("grade") == hist_view.scale.best_grade(),
    })

