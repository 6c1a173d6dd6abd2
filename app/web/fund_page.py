"""The fund page: key facts, period returns against the 유형, NAV against the benchmark, grade history, metrics.

Everything comes from stored batches through the caller's scope (an out-of-scope fund is the same 404 as an
unknown one). The period returns are the fund engine's own figures, stored with the report when the batch
was graded (:mod:`evaluator.domains.fund.engine.period_returns`); the page only formats them. A fund that is
not rated shows why, and no chart is drawn from nothing.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from evaluator.app.api.read_routes import CODE_RE
from evaluator.app.storage import fund_page as facts
from evaluator.app.storage import nav_series, scales
from evaluator.app.web.auth import Db, User
from evaluator.app.web.charts import criteria_chart, history_chart, metrics_chart, nav_chart
from evaluator.app.web.render import render
from evaluator.domains.fund.engine import WINDOW_MONTHS

router = APIRouter(include_in_schema=False)

METRIC_LABELS = {
    "annualized_return": "연환산 수익률", "annualized_volatility": "변동성", "sharpe": "샤프지수",
    "sortino": "소르티노", "mrar": "MRAR", "max_drawdown": "최대낙폭", "calmar": "칼마",
    "beta": "베타", "jensen_alpha": "젠센 알파", "tracking_error": "추적오차", "information_ratio": "정보비율",
}
PERCENT_METRICS = {"annualized_return", "annualized_volatility", "mrar", "max_drawdown", "jensen_alpha",
                   "tracking_error"}
CRITERION_LABELS = {"return": "수익률", "risk_adjusted": "위험조정수익", "risk": "위험", "benchmark": "벤치마크"}
WINDOW_LABELS = {"1m": "1개월", "3m": "3개월", "6m": "6개월", "1y": "1년", "3y": "3년", "5y": "5년"}
assert set(WINDOW_LABELS) == set(WINDOW_MONTHS), "every engine window needs a Korean label"
QUARTILE_LABELS = {1: "1사분위 (상위 25%)", 2: "2사분위", 3: "3사분위", 4: "4사분위 (하위 25%)"}
EOK = 1e8  # 억원


def metrics_table(metrics: dict[str, Any]) -> dict[str, Any]:
    windows = [w for w, values in metrics.items() if values]
    names = [m for m in METRIC_LABELS if any(m in (metrics[w] or {}) for w in windows)]
    rows = [{"name": m, "label": METRIC_LABELS[m], "percent": m in PERCENT_METRICS,
             "values": [(metrics[w] or {}).get(m) for w in windows]} for m in names]
    return {"windows": windows, "rows": rows}


def returns_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The stored period returns in window order, with Korean labels; windows the data do not cover are absent."""
    stored = report.get("period_returns") or {}
    return [
        {"window": w, "label": WINDOW_LABELS[w], **stored[w],
         "quartile_label": QUARTILE_LABELS.get(stored[w].get("quartile"), "–")}
        for w in WINDOW_MONTHS if isinstance(stored.get(w), dict)
    ]


def key_facts(report: dict[str, Any], series: dict[str, Any] | None) -> dict[str, Any]:
    amount = report.get("set_amount_krw")
    return {
        "first_date": report.get("first_date"),
        "amount_eok": amount / EOK if isinstance(amount, int | float) else None,
        "benchmark": report.get("benchmark_name") or (series or {}).get("benchmark_name"),
    }


@router.get("/funds/{code:anytext}")  # the convertor is registered by read_routes
def fund_page(request: Request, code: str, viewer: User, session: Db) -> Response:
    who = viewer.principal
    found = nav_series.fund_report_and_series(session, who, code) if CODE_RE.match(code) else None
    if found is None:
        raise HTTPException(404, "no such fund")
    report, series = json.loads(found[0]), nav_series.chart_document(found[1])
    history = facts.grade_points(session, who, code)
    hist_view = scales.ScaleView.of(h["grade_scale"] for h in reversed(history))  # newest batch's scale first
    run_id = facts.current_run(session, who, code)
    classes = facts.share_classes(session, who, run_id, list(report.get("share_classes") or [])) if run_id else []
    metrics = report.get("metrics") or {}
    criteria = {CRITERION_LABELS.get(k, k): v for k, v in (report.get("criterion_scores") or {}).items()}
    model = report.get("model_evaluation")
    rated = report.get("status") == "ok"
    has_history = any(h["status"] == "ok" for h in history)
    return render(request, "fund.html", {
        "r": report, "history": history, "table": metrics_table(metrics), "criteria": criteria,
        "series": series, "facts": key_facts(report, series), "returns": returns_table(report),
        "classes": classes, "scale": hist_view.scale,
        "charts": {
            "nav": nav_chart(series) if series else None,
            "history": history_chart(history, hist_view.scale) if has_history else None,
            "criteria": criteria_chart(criteria) if any(v is not None for v in criteria.values()) else None,
            "metrics": metrics_chart(metrics, METRIC_LABELS) if any(metrics.values()) else None,
        },
        "model": model, "scale_note": hist_view.message(),
        "model_grade": scales.label(hist_view.scale, (model or {}).get("grade")) or "–",
        "grade_color": hist_view.scale.colors().get(report.get("grade")) if rated else None,
        "grade_best": rated and report.get("grade") == hist_view.scale.best_grade(),
    })
