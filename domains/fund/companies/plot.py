"""The picture of a company rating: each company's score against its number of rated funds, coloured by grade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.core.plotting import label, new_figure, note, save_png, style
from evaluator.methodology.rubric_scale import NOT_RATED_COLOR, GradeScale

PNG = "companies.png"


def draw_companies(doc: dict[str, Any], target: Path) -> Path:
    """Scatter of score vs funds rated (log x), one colour per grade; not-rated companies as grey crosses."""
    import matplotlib
    import matplotlib.ticker

    rows = doc["companies"]
    scale = len(doc["rule"]["bands"])
    labels = {int(b["grade"]): str(b["label"]) for b in doc["rule"]["bands"]}
    with style():
        fig = new_figure(8.0, 5.2)
        ax = fig.subplots()
        rated = [r for r in rows if r["status"] == "ok"]
        if not rows:
            note(ax, "no company to show")
            return save_png(fig, target)
        colors = GradeScale(scale).colors()  # the one grade palette, 1 best, as on the pages
        for g in range(1, scale + 1):
            pts = [r for r in rated if r["grade"] == g]
            if pts:
                color = colors[g]
                ax.scatter([r["funds_rated"] for r in pts], [r["score"] for r in pts], s=28, color=color,
                           edgecolor="black", linewidth=0.4, label=f"{label(labels[g])} ({len(pts)})")  # fmt: skip
        others = [r for r in rows if r["status"] != "ok" and r["quantitative_score"] is not None]
        if others:
            ax.scatter([max(r["funds_rated"], 1) for r in others], [r["quantitative_score"] for r in others],
                       marker="x", color=NOT_RATED_COLOR, label=f"not rated ({len(others)})")  # fmt: skip
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_formatter(matplotlib.ticker.ScalarFormatter())
        if len(rated) <= 30:  # few enough to name each company without covering the points
            for r in rated:
                ax.annotate(label(r["company"]), (r["funds_rated"], r["score"]), fontsize=7,
                            xytext=(4, 3), textcoords="offset points")  # fmt: skip
        ax.set_xlabel("rated funds (share classes counted once, log scale)")
        ax.set_ylabel("company score (0-100)")
        ax.set_title(
            f"Company ratings as of {doc['as_of']}: {len(rated)} rated, {len(rows) - len(rated)} not rated"
        )
        ax.legend(fontsize=8, loc="best")
        return save_png(fig, target)
