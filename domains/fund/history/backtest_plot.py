"""Pictures of a grade backtest (``backtest.json``): excess by grade with CIs, IC over time, migration.

Pure drawing on plain matplotlib ``Figure`` objects (no pyplot state); the caller picks the font and
writes the PNGs (``core.plotting.style`` / ``save_png``, the Hangul font every plot uses).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.core.plotting import NothingToPlotError, Plan, save_png, style

PNG_NAMES = {
    "excess": "backtest_excess_by_grade.png",
    "ic": "backtest_ic.png",
    "migration": "backtest_migration.png",
}


def _figure(width: float, height: float) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    return fig, fig.add_subplot(1, 1, 1)


def _grades(doc: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The document's grades, best first (its own order), and how the firm writes them (★★★★★, 1등급)."""
    keys = list(doc["all"]["grades"])
    labels = doc.get("grade_labels") or {}
    return keys, [str(labels.get(g, f"{g}등급")) for g in keys]


def excess_figure(doc: Mapping[str, Any]) -> Any:
    """Mean forward excess return per grade (best first) with its 95 % block-bootstrap interval."""
    grades = doc["all"]["grades"]
    keys, names = _grades(doc)
    fig, ax = _figure(6.4, 4.0)
    for k, g in enumerate(keys):
        block = grades[g]
        mean = block.get("mean_excess")
        if mean is None:
            continue
        ci = block.get("mean_excess_ci95")
        err = None if ci is None else [[max(mean - ci[0], 0.0)], [max(ci[1] - mean, 0.0)]]
        ax.bar(k, mean * 100, color="#4c72b0" if mean >= 0 else "#c44e52")
        if err is not None:
            ax.errorbar(k, mean * 100, yerr=np.array(err) * 100, color="black", capsize=4)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(keys)), names)
    ax.set_ylabel(f"{doc['horizon_months']}개월 동류 중앙값 대비 초과수익률 (%)")
    ax.set_title("등급별 미래 초과수익률 (95% 블록 부트스트랩 구간)")
    fig.tight_layout()
    return fig


def ic_figure(doc: Mapping[str, Any]) -> Any:
    """Spearman rank IC per as-of date, with its mean."""
    ic = doc["all"]["ic"]
    points = [(p["as_of"], p["ic"]) for p in ic["by_date"] if p["ic"] is not None]
    fig, ax = _figure(7.2, 3.6)
    if points:
        xs = np.arange(len(points))
        ax.bar(xs, [v for _, v in points], color=["#4c72b0" if v >= 0 else "#c44e52" for _, v in points])
        step = max(1, len(points) // 8)
        ax.set_xticks(xs[::step], [d for d, _ in points][::step], rotation=30, ha="right")
    if ic.get("mean") is not None:
        ax.axhline(ic["mean"], color="black", linestyle="--", linewidth=1, label=f"평균 {ic['mean']:.3f}")
        ax.legend(loc="upper right")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_ylabel("순위 IC (스피어만)")
    ax.set_title(f"기준일별 점수–{doc['horizon_months']}개월 초과수익률 순위상관")
    fig.tight_layout()
    return fig


def migration_figure(doc: Mapping[str, Any]) -> Any:
    """Row-normalised grade migration t → t+horizon (counts in the cells)."""
    matrix = doc["all"]["migration"]["matrix"]
    keys, names = _grades(doc)
    cols = [*keys, "unrated"]
    counts = np.array([[matrix[g][c] for c in cols] for g in keys], dtype=float)
    share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    fig, ax = _figure(6.0, 4.8)
    image = ax.imshow(share, cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(len(keys)):
        for j in range(len(cols)):
            ax.text(j, i, f"{int(counts[i, j])}", ha="center", va="center",
                    color="white" if share[i, j] > 0.5 else "black", fontsize=8)  # fmt: skip
    ax.set_xticks(range(len(cols)), [*names, "미평가"])
    ax.set_yticks(range(len(keys)), names)
    ax.set_xlabel(f"{doc['horizon_months']}개월 후 등급")
    ax.set_ylabel("기준일 등급")
    ax.grid(False)
    ax.set_title("등급 이동 (행 기준 비율, 칸 안은 건수)")
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    return fig


def figures(doc: Mapping[str, Any]) -> dict[str, Any]:
    """File name → figure for every backtest picture."""
    return {
        PNG_NAMES["excess"]: excess_figure(doc),
        PNG_NAMES["ic"]: ic_figure(doc),
        PNG_NAMES["migration"]: migration_figure(doc),
    }


def looks_like_backtest(folder: Path) -> bool:
    """A folder ``evaluator fund backtest`` wrote."""
    return (Path(folder) / "backtest.json").is_file()


def plan_backtest(folder: Path, out_dir: Path, *, prefix: str = "", warn: Any = None) -> Plan:
    """Plan the three backtest PNGs of ``folder`` (``evaluator plot BT``); a bad file is a ValueError."""
    import json

    source = Path(folder) / "backtest.json"
    try:
        doc = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or "all" not in doc:
        raise NothingToPlotError(f"{source} is not a fund backtest document")
    targets = {name: Path(out_dir) / f"{prefix}{name}" for name in PNG_NAMES.values()}

    def draw() -> list[Path]:
        with style():
            return [save_png(fig, targets[name]) for name, fig in figures(doc).items()]

    return Plan(Path(folder), list(targets.values()), draw)
