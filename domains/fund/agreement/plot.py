"""Confusion heat maps for ``fund agreement``: analysts' grade (rows) against the engine's or model's.

Pure drawing on a plain matplotlib ``Figure`` (no pyplot state). The caller picks the font and writes the
PNG (``methodology.plotting.style`` / ``save_png``, the same Hangul font choice as every other plot);
``hangul=False`` (no Hangul font installed) switches the labels to English instead of drawing empty boxes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CELL_IN = 0.62


def _texts(hangul: bool) -> dict[str, str]:
    if hangul:
        return {
            "expert": "전문가 등급",
            "engine": "엔진 등급",
            "model": "모델 등급",
            "all": "전체",
            "none": "비교할 펀드 없음",
        }
    return {"expert": "Analyst grade", "engine": "Engine grade", "model": "Model grade", "all": "All funds",
            "none": "no fund to compare"}  # fmt: skip


def _tick_labels(labels: list[str], hangul: bool) -> list[str]:
    return labels if hangul else [f"G{i}" for i in range(1, len(labels) + 1)]


def _panel(ax: Any, block: dict[str, Any], labels: list[str], title: str, xlabel: str, hangul: bool) -> Any:
    t = _texts(hangul)
    matrix = np.asarray(block["confusion"], dtype=float)
    k = len(labels)
    ticks = _tick_labels(labels, hangul)
    image = ax.imshow(matrix, cmap="Blues", vmin=0, vmax=max(1.0, matrix.max()))
    ax.grid(False)
    ax.set_xticks(range(k), ticks, fontsize=8)
    ax.set_yticks(range(k), ticks, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(t["expert"])
    top = matrix.max() or 1.0
    for i in range(k):
        for j in range(k):
            value = int(matrix[i, j])
            color = "white" if value > top * 0.6 else ("#1a1a1a" if value else "#9a9a9a")
            ax.text(j, i, str(value), ha="center", va="center", color=color, fontsize=9)
    kappa = block["kappa"]
    stats = f"n={block['pairs']}, κ={'-' if kappa is None else f'{kappa:.2f}'}"
    ax.set_title(f"{title}\n{stats}", fontsize=10)
    if not block["pairs"]:
        ax.text(0.5, -0.32, t["none"], transform=ax.transAxes, ha="center", fontsize=8, color="#8a4b00")
    return image


def confusion_figure(doc: dict[str, Any], hangul: bool) -> Any:
    """The overall heat map: engine against the analysts, and the model beside it when there is one."""
    from matplotlib.figure import Figure

    t = _texts(hangul)
    labels = doc["grades"]["labels"]
    sides = [s for s in ("engine", "model") if doc["overall"][s] is not None]
    size = max(3.6, CELL_IN * len(labels) + 1.6)
    fig = Figure(figsize=(size * len(sides) + 0.6, size + 0.4), dpi=100, layout="constrained")
    axes = fig.subplots(1, len(sides), squeeze=False)[0]
    for ax, side in zip(axes, sides, strict=True):
        name = t[side]
        image = _panel(ax, doc["overall"][side], labels, f"{t['all']}: {name} vs {t['expert']}", name, hangul)
    fig.colorbar(image, ax=list(axes), shrink=0.8)
    return fig


def by_type_figure(doc: dict[str, Any], hangul: bool, label: Any = str) -> Any | None:
    """One engine heat map per 유형 (``label`` turns a 유형 into text the font can show); None without --by.

    With no fund to compare at all, the one panel is the (empty) overall matrix, saying so.
    """
    from matplotlib.figure import Figure

    if doc.get("by_type") is None:
        return None
    t = _texts(hangul)
    groups = doc["by_type"] or {t["all"]: doc["overall"]}
    labels = doc["grades"]["labels"]
    ncols = min(3, len(groups))
    nrows = math.ceil(len(groups) / ncols)
    size = max(3.4, CELL_IN * len(labels) + 1.4)
    fig = Figure(figsize=(size * ncols, size * nrows + 0.3), dpi=100, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[len(groups) :]:
        ax.set_visible(False)
    for ax, (name, scope) in zip(axes, groups.items(), strict=False):
        _panel(ax, scope["engine"], labels, f"{label(name)}: {t['engine']}", t["engine"], hangul)
    return fig
