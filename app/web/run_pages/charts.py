"""Plotly specs for the run pages (drawn by the web app's charts.js with the self-hosted plotly.min.js)."""

from __future__ import annotations

from typing import Any

from evaluator.app.web.charts import FONT, count_ticks

LABELS = {
    "reward": "총 보상 (가중합)",
    "eval/accuracy": "검증 정확도",
    "eval/format_rate": "검증 형식 준수율",
}
STEP_TITLE = "학습 단계 (step)"


def step_axis(steps: list[Any]) -> dict[str, Any]:
    """Whole-step ticks: a tick every 1, 2, 5, 10, 20, 50 … steps (about eight across), never 2.5."""
    numbers = [s for s in steps if isinstance(s, int | float) and not isinstance(s, bool)]
    span = (max(numbers) - min(numbers)) if numbers else 0
    return {"title": {"text": STEP_TITLE}, **count_ticks(span)}


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title, "font": {"size": 14}}, "font": FONT, "height": 320,
            "margin": {"l": 55, "r": 20, "t": 40, "b": 45}, "xaxis": {"title": {"text": STEP_TITLE}},
            "legend": {"orientation": "h", "y": -0.25}, **extra}


def _name(key: str) -> str:
    if key in LABELS:
        return LABELS[key]
    if key.startswith("rewards/") and key.endswith("/mean"):
        return key[len("rewards/") : -len("/mean")]
    return key.removeprefix("completions/")


def training_charts(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One spec per chart group; held-out points carry their 95% CI as error bars."""
    charts = []
    for n, group in enumerate(groups):
        traces = []
        for tr in group["traces"]:
            many = len(tr["x"]) > 200
            trace: dict[str, Any] = {"type": "scatter", "mode": "lines" if many else "lines+markers",
                                     "name": _name(tr["name"]), "x": tr["x"], "y": tr["y"]}
            if "ci_low" in tr:
                trace["error_y"] = {
                    "type": "data", "symmetric": False,
                    "array": [None if (h is None or v is None) else h - v for h, v in zip(tr["ci_high"], tr["y"], strict=False)],
                    "arrayminus": [None if (lo is None or v is None) else v - lo for lo, v in zip(tr["ci_low"], tr["y"], strict=False)],
                }
            traces.append(trace)
        note = f" (로깅된 단계 {group['stride']}개마다 하나)" if group["stride"] > 1 else ""
        steps = [x for tr in group["traces"] for x in tr["x"]]
        charts.append({"id": f"chart-{n}", "title": group["title"] + note,
                       "spec": {"data": traces, "layout": _layout(group["title"] + note, xaxis=step_axis(steps))}})
    return charts


def arms_chart(arms: list[dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """Each arm's mean of ``metric`` with its CI (when results.json gives one)."""
    names, means, plus, minus = [], [], [], []
    for arm in arms:
        value = arm["mean"].get(metric)
        if not isinstance(value, (int, float)):
            continue
        ci = arm["ci"].get(metric)
        names.append(str(arm["name"]))
        means.append(value)
        plus.append(ci[1] - value if ci else None)
        minus.append(value - ci[0] if ci else None)
    if not names:
        return None
    trace = {"type": "bar", "x": names, "y": means, "name": metric,
             "error_y": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus}}
    return {"data": [trace], "layout": _layout(f"{metric}: 실험군별 평균과 95% 신뢰구간",
                                               xaxis={"title": {"text": "실험군"}})}
