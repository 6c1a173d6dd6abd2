"""Training-run pictures from ``metrics.jsonl``: rewards with a smoothed line, and the health of the run.

A GRPO run gets ``training_rewards.png`` (total reward and one panel per reward function, each with its
±std band) and ``training_stats.png`` (completion length, share of groups with zero reward spread, loss,
entropy, grad norm). An SFT run has no rewards and gets ``training_stats.png`` with its loss curve.
Steps logged again after a resume replace the earlier rows for the same step. Missing keys, nulls
and NaNs never stop a plot: the panel says what is missing and a warning names it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluator.core.plotting import (
    NothingToPlotError,
    Plan,
    Warn,
    as_warner,
    check_targets,
    grid,
    new_figure,
    note,
    num,
    save_png,
    smooth,
    style,
)

METRICS_FILE = "metrics.jsonl"
REWARDS_PNG = "training_rewards.png"
STATS_PNG = "training_stats.png"

# (key, title, band keys (lower, upper) or None); "expected" panels always appear, with a note when empty.
GRPO_EXPECTED = (
    ("completions/mean_length", "completion length (tokens)"),
    ("frac_reward_zero_std", "groups with zero reward spread (no learning signal)"),
)
GRPO_OPTIONAL = (
    ("loss", "loss"),
    ("entropy", "entropy"),
    ("grad_norm", "grad norm"),
    ("kl", "KL divergence"),
)
SFT_EXPECTED = (("loss", "loss"),)
SFT_OPTIONAL = (
    ("mean_token_accuracy", "token accuracy"),
    ("entropy", "entropy"),
    ("grad_norm", "grad norm"),
    ("learning_rate", "learning rate"),
)
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def load_metrics(path: Path, warn: Warn | None = None) -> list[dict[str, Any]]:
    """Rows of ``metrics.jsonl`` ordered by step; unreadable lines are left out with one warning."""
    warner = as_warner(warn)
    rows: list[dict[str, Any]] = []
    bad: list[int] = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            bad.append(lineno)
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            bad.append(lineno)
    if bad:
        warner(f"{path}: {len(bad)} line(s) are not JSON objects and were left out (first: line {bad[0]})")
    by_step: dict[float, dict[str, Any]] = {}
    missing_step = 0
    for index, row in enumerate(rows, 1):
        step = num(row.get("step"))
        if math.isnan(step):
            missing_step += 1
            step = float(index)
        by_step[step] = {**row, "step": step}  # a resumed run logs a step again: the later row wins
    if missing_step:
        warner(f"{path}: {missing_step} row(s) have no step number; their line order is used instead")
    return [by_step[s] for s in sorted(by_step)]


def series(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[list[float], list[float]]:
    """Steps and values of ``key`` where it is a finite number."""
    xs, ys = [], []
    for row in rows:
        y = num(row.get(key))
        if not math.isnan(y):
            xs.append(float(row["step"]))
            ys.append(y)
    return xs, ys


def reward_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for row in rows:
        for key in row:
            if key.startswith("rewards/") and key.endswith("/mean"):
                name = key[len("rewards/") : -len("/mean")]
                if name not in names:
                    names.append(name)
    return names


def is_grpo(rows: Sequence[Mapping[str, Any]]) -> bool:
    return any(k == "reward" or k.startswith("rewards/") for row in rows for k in row)


def _band(
    rows: Sequence[Mapping[str, Any]], xs: list[float], ys: list[float], std_key: str
) -> tuple[list, list, list]:
    std = {float(r["step"]): num(r.get(std_key)) for r in rows}
    keep = [(x, y, std.get(x, math.nan)) for x, y in zip(xs, ys, strict=True)]
    keep = [(x, y, s) for x, y, s in keep if not math.isnan(s)]
    return [k[0] for k in keep], [k[1] - k[2] for k in keep], [k[1] + k[2] for k in keep]


def curve(
    ax: Any,
    rows: Sequence[Mapping[str, Any]],
    key: str,
    title: str,
    warn: Warn,
    *,
    color: str = COLORS[0],
    std_key: str | None = None,
    range_keys: tuple[str, str] | None = None,
    ylim: tuple[float, float] | None = None,
) -> bool:
    """One panel: logged values (faint), a smoothed line (bold), a ±std or min–max band. False if empty."""
    from matplotlib.ticker import MaxNLocator

    xs, ys = series(rows, key)
    ax.set_title(title, fontsize=10)
    if not xs:
        present = any(key in r for r in rows)
        why = "only null/NaN values" if present else "no such key"
        note(ax, f"'{key}': {why} in {METRICS_FILE}")
        warn(f"'{key}' has {why}; its panel shows a note instead of a curve")
        return False
    if std_key:
        bx, lo, hi = _band(rows, xs, ys, std_key)
        if bx:
            ax.fill_between(bx, lo, hi, color=color, alpha=0.15, linewidth=0, label="±1 std")
    if range_keys:
        low = dict(zip(*series(rows, range_keys[0]), strict=True))
        high = dict(zip(*series(rows, range_keys[1]), strict=True))
        bx = [x for x in xs if x in low and x in high]
        if bx:
            ax.fill_between(
                bx,
                [low[x] for x in bx],
                [high[x] for x in bx],
                color=color,
                alpha=0.12,
                linewidth=0,
                label="min–max",
            )
    smoothed = len(xs) >= 3
    ax.plot(
        xs,
        ys,
        color=color,
        alpha=0.35 if smoothed else 1.0,
        linewidth=1,
        marker="o" if len(xs) <= 40 else None,
        markersize=3,
        label="logged",
    )
    if smoothed:
        ax.plot(xs, smooth(ys), color=color, linewidth=2.2, label="smoothed (EMA)")
    gaps = sum(1 for r in rows if key in r and math.isnan(num(r.get(key))))
    if gaps:
        ax.text(
            0.01, 0.02, f"{gaps} step(s) without a value", transform=ax.transAxes, fontsize=8, color="#8a4b00"
        )
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=7, loc="best")
    return True


def _stats_panels(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    expected, optional = (GRPO_EXPECTED, GRPO_OPTIONAL) if is_grpo(rows) else (SFT_EXPECTED, SFT_OPTIONAL)
    return list(expected) + [(k, t) for k, t in optional if series(rows, k)[0]]


def _draw_rewards(rows: Sequence[Mapping[str, Any]], run_name: str, target: Path, warn: Warn) -> Path:
    names = reward_names(rows)
    with style():
        n = 1 + len(names)
        ncols = 1 if n == 1 else 2
        fig = new_figure(7 * ncols if ncols > 1 else 9, 3.6 * math.ceil(n / ncols) + 0.6)
        axes = grid(fig, n, ncols)
        curve(axes[0], rows, "reward", "total reward (weighted sum)", warn, std_key="reward_std")
        for i, name in enumerate(names, 1):
            curve(
                axes[i],
                rows,
                f"rewards/{name}/mean",
                f"reward: {name}",
                warn,
                color=COLORS[i % len(COLORS)],
                std_key=f"rewards/{name}/std",
            )
        fig.suptitle(f"GRPO rewards — {run_name}", fontsize=12)
        return save_png(fig, target)


def _draw_stats(rows: Sequence[Mapping[str, Any]], run_name: str, target: Path, warn: Warn) -> Path:
    panels = _stats_panels(rows)
    with style():
        ncols = 1 if len(panels) == 1 else 2
        fig = new_figure(7 * ncols if ncols > 1 else 9, 3.6 * math.ceil(len(panels) / ncols) + 0.6)
        for i, (ax, (key, title)) in enumerate(zip(grid(fig, len(panels), ncols), panels, strict=True)):
            curve(
                ax,
                rows,
                key,
                title,
                warn,
                color=COLORS[(i + 2) % len(COLORS)],
                range_keys=("completions/min_length", "completions/max_length")
                if key.startswith("completions/")
                else None,
                ylim=(-0.05, 1.05) if key == "frac_reward_zero_std" else None,
            )
        kind = "GRPO" if is_grpo(rows) else "SFT"
        fig.suptitle(f"{kind} training — {run_name}", fontsize=12)
        return save_png(fig, target)


def plan_training(run_dir: Path, out_dir: Path, *, prefix: str = "", warn: Warn | None = None) -> Plan:
    """Read a run's ``metrics.jsonl`` and say which PNGs it gives; raises NothingToPlotError if none."""
    warner = as_warner(warn)
    run_dir = Path(run_dir)
    path = run_dir if run_dir.is_file() else run_dir / METRICS_FILE
    if not path.is_file():
        raise NothingToPlotError(f"{run_dir} has no {METRICS_FILE} (is it a training run folder?)")
    rows = load_metrics(path, warner)
    if not rows:
        raise NothingToPlotError(f"{path} holds no logged steps yet; nothing to plot")
    keys = {
        "reward",
        *(f"rewards/{n}/mean" for n in reward_names(rows)),
        *(k for k, _ in _stats_panels(rows)),
    }
    if not any(series(rows, k)[0] for k in keys):
        raise NothingToPlotError(
            f"{path} has {len(rows)} row(s) but no numeric reward or loss values to plot"
        )
    name = (run_dir.parent if run_dir.is_file() else run_dir).name
    out_dir = Path(out_dir)
    targets = ([out_dir / f"{prefix}{REWARDS_PNG}"] if is_grpo(rows) else []) + [
        out_dir / f"{prefix}{STATS_PNG}"
    ]

    def panel_warn(message: str) -> None:
        warner(f"{path}: {message}")

    def draw() -> list[Path]:
        written = []
        if is_grpo(rows):
            written.append(_draw_rewards(rows, name, targets[0], panel_warn))
        written.append(_draw_stats(rows, name, targets[-1], panel_warn))
        return written

    return Plan(path, targets, draw)


def plot_training(
    run_dir: Path, out_dir: Path, *, force: bool = False, warn: Warn | None = None
) -> list[Path]:
    """Write the training PNGs of ``run_dir`` (or of a ``metrics.jsonl`` path) into ``out_dir``."""
    plan = plan_training(run_dir, out_dir, warn=warn)
    check_targets(plan.targets, force)
    return plan.draw()
