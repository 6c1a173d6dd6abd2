"""Each chart's data as a table: the text alternative a screen reader (or anyone) reads instead of the plot.

Built from the same Plotly spec the chart draws, so the table can never say something the chart does not:
one row per x value, one column per trace (a trace's ``text`` wins over its number, e.g. ``2등급``).
"""

from __future__ import annotations

from typing import Any


def _cell(value: Any, text: Any, percent: bool) -> str:
    if text is not None:
        return str(text)
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value * 100:.2f}%" if percent else f"{value:,.2f}".rstrip("0").rstrip(".")


def chart_table(spec: dict[str, Any]) -> dict[str, Any]:
    """``{"columns": ["항목", trace names…], "rows": [[x, cell…]…], "title": the chart's own title}``."""
    traces = [t for t in spec.get("data", []) if isinstance(t, dict)]
    layout = spec.get("layout") or {}
    percent = "%" in str((layout.get("yaxis") or {}).get("tickformat", ""))
    xs: list[Any] = []
    cells: dict[Any, dict[int, str]] = {}
    for k, trace in enumerate(traces):
        texts = trace.get("text") if isinstance(trace.get("text"), list) else None
        for i, (x, y) in enumerate(zip(trace.get("x") or [], trace.get("y") or [], strict=False)):
            if x not in cells:
                xs.append(x)
                cells[x] = {}
            cells[x][k] = _cell(y, texts[i] if texts and i < len(texts) else None, percent)
    names = [str(t.get("name") or "값") for t in traces]
    rows = [[str(x), *(cells[x].get(k, "–") for k in range(len(traces)))] for x in xs]
    title = layout.get("title")
    title = title.get("text") if isinstance(title, dict) else title
    return {"columns": ["항목", *names], "rows": rows, "title": str(title) if title else None}
