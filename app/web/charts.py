"""Plotly figure specs (plain dicts, drawn in the browser by the self-hosted plotly.min.js)."""

from __future__ import annotations

from typing import Any

from evaluator.methodology.rubric_scale import ERROR_COLOR, NOT_RATED_COLOR, PROVISIONAL_COLOR, GradeScale

# Axis titles are {"text": …}: plotly.js 3+ (the package ships 4.x) ignores a bare string there.
FONT = {"family": "NanumGothic, sans-serif", "size": 13}
DATE_AXIS = {
    "type": "date",
    "hoverformat": "%Y-%m-%d",
    "tickformatstops": [
        {"dtickrange": [None, 27 * 86_400_000], "value": "%Y-%m-%d"},  # ticks closer than a month
        {"dtickrange": ["M1", None], "value": "%Y-%m"},
    ],
}
"""Dates as numbers: plotly.js's default month names are English ("Jul 2020") and it ships no Korean locale;
days appear only when ticks are closer than a month, so two ticks never read the same."""


def _layout(**extra: Any) -> dict[str, Any]:
    """A chart's layout; every axis grows its margin to fit its tick labels and title (``automargin``), so a
    title never sits on the ticks and long 유형 names on a phone push the plot up instead of overlapping."""
    layout = {"font": FONT, "margin": {"l": 50, "r": 20, "t": 30, "b": 60}, "height": 320, **extra}
    for axis in ("xaxis", "yaxis", *(k for k in extra if k.startswith(("xaxis", "yaxis")))):
        layout[axis] = {"automargin": True, **layout.get(axis, {})}
    return layout


def grade_columns(dist: dict[str, dict[str, int]], scale: GradeScale) -> list[dict[str, str]]:
    """The distribution's grade columns, best first: every grade of the scale, any other grade in the rows (a
    batch on another scale, which the page names), then 가등급 when any is held.

    With the 미평가, 오류 columns they add up to each row's total (합계)."""
    colors = scale.colors()
    cols = [{"key": str(g), "label": scale.label(g), "color": colors[g]} for g in scale.best_first()]
    keys = {k for row in dist.values() for k in row}
    others = sorted((k for k in keys if k.isdigit() and not scale.contains(int(k))), key=int)
    cols += [{"key": k, "label": f"{k} (다른 등급 체계)", "color": "#9e9e9e"} for k in others]
    if any(n for row in dist.values() for k, n in row.items() if k.startswith("p")):
        cols.append({"key": "provisional", "label": "가등급", "color": PROVISIONAL_COLOR})
    return cols


def column_value(row: dict[str, int], key: str) -> int:
    """One cell: a grade's count, or (``provisional``) every provisional grade's (``p1``, ``p2`` …)."""
    if key != "provisional":
        return int(row.get(key, 0))
    return sum(int(n) for k, n in row.items() if k.startswith("p"))


def distribution_chart(dist: dict[str, dict[str, int]], scale: GradeScale) -> dict[str, Any]:
    types = list(dist)
    traces = [{"type": "bar", "name": c["label"], "x": types, "y": [column_value(dist[t], c["key"]) for t in types],
               "marker": {"color": c["color"]}} for c in grade_columns(dist, scale)]
    traces.append({"type": "bar", "name": "미평가", "x": types, "y": [dist[t]["not_rated"] for t in types],
                   "marker": {"color": NOT_RATED_COLOR}})
    traces.append({"type": "bar", "name": "오류", "x": types, "y": [dist[t]["error"] for t in types],
                   "marker": {"color": ERROR_COLOR}})
    most = max((row.get("total", 0) for row in dist.values()), default=0)
    return {"data": traces, "layout": _layout(barmode="stack", yaxis={"title": {"text": "펀드 수"}, **count_ticks(most)})}


def count_ticks(most: int) -> dict[str, Any]:
    """Whole-number ticks for counts (no "2.5 funds"): a tick every 1, 2, 5, 10 … about eight up the axis."""
    dtick = 1
    while most / dtick > 8:
        dtick = dtick * 5 // 2 if str(dtick)[0] == "2" else dtick * 2
    return {"tickformat": "d", "tick0": 0, "dtick": dtick}


def history_chart(history: list[dict[str, Any]], scale: GradeScale) -> dict[str, Any]:
    """Score and grade over time; the grade axis is the scale's, best at the top, labelled as the firm writes.

    Only results on ``scale`` are drawn on the grade axis (a batch on another scale is not mixed in)."""
    rated = [h for h in history if h["status"] == "ok"]
    graded = [h for h in rated if h.get("grade_scale") in (None, scale.spec())]
    order = scale.best_first()
    top, bottom = order[0], order[-1]
    step = 0.5 if top < bottom else -0.5
    layout = _layout(xaxis=DATE_AXIS, yaxis={"title": {"text": "점수"}, "range": [0, 100]},
                     yaxis2={"title": {"text": "등급"}, "overlaying": "y", "side": "right",
                             "range": [bottom + step, top - step], "tickmode": "array",
                             "tickvals": list(order), "ticktext": [scale.label(g) for g in order]},
                     legend={"orientation": "h", "y": -0.2})  # below: the grade axis keeps its labels
    layout["margin"] = {**layout["margin"], "r": 90}  # room for the grade labels and their axis title
    return {
        "data": [
            {"type": "scatter", "mode": "lines+markers", "name": "종합 점수", "x": [h["as_of"] for h in rated],
             "y": [h["score"] for h in rated]},
            {"type": "scatter", "mode": "lines+markers", "name": "등급", "yaxis": "y2",
             "x": [h["as_of"] for h in graded], "y": [h["grade"] for h in graded],
             "text": [scale.label(h["grade"]) for h in graded], "hovertemplate": "%{x}: %{text}<extra></extra>"},
        ],
        "layout": layout,
    }


def criteria_chart(criteria: dict[str, float | None]) -> dict[str, Any]:
    names = [k for k, v in criteria.items() if v is not None]
    return {"data": [{"type": "bar", "x": names, "y": [criteria[k] for k in names], "marker": {"color": "#2166ac"}}],
            "layout": _layout(yaxis={"title": {"text": "점수"}})}


def metrics_chart(metrics: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    windows = [w for w, v in metrics.items() if v]
    traces = [
        {"type": "bar", "name": labels[m], "x": windows, "y": [(metrics[w] or {}).get(m) for w in windows]}
        for m in ("annualized_return", "annualized_volatility", "max_drawdown")
    ]
    return {"data": traces, "layout": _layout(barmode="group", yaxis={"title": {"text": "연율"}, "tickformat": ".0%"})}


NAV_FUND_LABEL = "펀드 (수정기준가, 총수익 기준)"
NAV_BENCHMARK_LABEL = "벤치마크"


def nav_chart(series: dict[str, Any]) -> dict[str, Any]:
    """The fund's total-return index against its benchmark over the evaluation window, both 100 at the start."""
    traces = [{"type": "scatter", "mode": "lines", "name": NAV_FUND_LABEL, "x": series["dates"],
               "y": series["fund"], "line": {"color": "#2166ac", "width": 2}}]
    if series.get("benchmark") is not None:
        traces.append({"type": "scatter", "mode": "lines", "name": NAV_BENCHMARK_LABEL, "x": series["dates"],
                       "y": series["benchmark"], "line": {"color": "#888", "width": 1.5, "dash": "dot"}})
    layout = _layout(xaxis=DATE_AXIS, yaxis={"title": {"text": "지수 (시작일 = 100)"}}, hovermode="x unified",
                     legend={"orientation": "h", "y": -0.2})
    return {"data": traces, "layout": layout}


def plotly_text(spec: Any) -> Any:
    """``spec`` with every string's ``& < >`` written as entities: Plotly renders a subset of HTML in labels
    (``<b>``, ``<a href>``), and names come from uploaded files, so no tag from data may reach it. Plotly
    turns the entities back into plain characters; formats and colours contain none of the three."""
    if isinstance(spec, str):
        return spec.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if isinstance(spec, dict):
        return {k: plotly_text(v) for k, v in spec.items()}
    if isinstance(spec, list | tuple):
        return [plotly_text(v) for v in spec]
    return spec
