"""An experiment's PNGs: each metric per arm with its CI, and every arm's curves overlaid.

``metric_<name>.png``: the arm means (all seeds, clustered-bootstrap 95 % CI) with each seed as a dot.
``reward_curves.png`` / ``heldout_curves.png``: training reward and held-out accuracy by step, the mean over
an arm's seeds as a line (seeds faint), one colour per arm. Held-out curves exist only where the runs
evaluated during training (``eval_every``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluator.core.outputs import read_jsonl
from evaluator.core.plotting import new_figure, save_png, style


def plot_experiment(folder: Path, out_dir: Path) -> list[Path]:
    """Draw every PNG the experiment's ``results.json`` supports; returns the files written."""
    path = folder / "results.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: run `evaluator experiment run` (or `report`) first")
    results = json.loads(path.read_text(encoding="utf-8"))
    written: list[Path] = []
    with style():
        for metric in results.get("metrics") or {}:
            written.append(_metric_plot(results, metric, out_dir / f"metric_{metric}.png"))
        curves = {arm["name"]: _curves(arm) for arm in results["arms"]}
        for key, name, title in (("reward", "reward_curves.png", "training reward"),
                                 ("eval/accuracy", "heldout_curves.png", "held-out accuracy")):
            if any(series.get(key) for per_seed in curves.values() for series in per_seed):
                written.append(_curve_plot(curves, key, title, out_dir / name))
    if not written:
        raise ValueError(f"{folder}: nothing to plot (no finished arm)")
    return written


def _metric_plot(results: dict[str, Any], metric: str, target: Path) -> Path:
    arms = results["arms"]
    fig = new_figure(max(4.0, 1.3 * len(arms) + 1.5), 3.6)
    ax = fig.add_subplot()
    for x, arm in enumerate(arms):
        mean, ci = arm["mean"].get(metric), arm["ci"].get(metric)
        if mean is not None and ci is not None:
            ax.errorbar([x], [mean], yerr=[[mean - ci[0]], [ci[1] - mean]], fmt="o", capsize=6, ms=8,
                        color="C0" if arm["name"] != results["baseline"] else "C3")
        seeds = [s["metrics"].get(metric) for s in arm["seeds"] if s["status"] == "ok"]
        ax.scatter([x + 0.15] * len([v for v in seeds if v is not None]), [v for v in seeds if v is not None],
                   s=14, color="grey", alpha=0.7)
    ax.set_xticks(range(len(arms)), [a["name"] for a in arms], rotation=20)
    ax.set_ylabel(metric)
    ax.set_title(f"{results['name']}: {metric} per arm\n95% CI; grey dots: seeds; red: baseline", fontsize="medium")
    return save_png(fig, target)


def _curves(arm: dict[str, Any]) -> list[dict[str, list[tuple[int, float]]]]:
    out = []
    for seed in arm["seeds"]:
        path = Path(seed["run_dir"] or "") / "metrics.jsonl"
        if seed["status"] != "ok" or not path.is_file():
            continue
        rows = read_jsonl(path)
        series: dict[str, list[tuple[int, float]]] = {}
        for key in ("reward", "eval/accuracy"):
            series[key] = [(int(r["step"]), float(r[key])) for r in rows if isinstance(r.get(key), (int, float))]
        out.append(series)
    return out


def _curve_plot(curves: dict[str, list[dict[str, Any]]], key: str, title: str, target: Path) -> Path:
    fig = new_figure(7.0, 4.0)
    ax = fig.add_subplot()
    for colour, (arm, per_seed) in enumerate(curves.items()):
        by_step: dict[int, list[float]] = {}
        for series in per_seed:
            points = series.get(key) or []
            if points:
                ax.plot(*zip(*points, strict=True), color=f"C{colour}", alpha=0.2, lw=0.8)
            for step, value in points:
                by_step.setdefault(step, []).append(value)
        if by_step:
            steps = sorted(by_step)
            ax.plot(steps, [sum(by_step[s]) / len(by_step[s]) for s in steps], color=f"C{colour}", lw=2, label=arm)
    ax.set_xlabel("step")
    ax.set_ylabel(key)
    ax.set_title(f"{title} by step (mean over seeds; faint: each seed)")
    ax.legend(fontsize="small")
    return save_png(fig, target)
