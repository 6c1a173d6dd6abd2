"""Evaluation pictures: accuracy before and after training, with 95% intervals, from ``report.json`` files.

Bars show strict and flexible accuracy (plus format rate and maj@k/pass@k when the reports have them)
with each report's bootstrap interval. The paired difference comes from ``compare.json`` when one
sits beside the reports, else it is computed from the reports' per-item results; that paired
interval (not the overlap of the two bars) is what says whether training helped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluator.core.plotting import (
    Plan,
    Warn,
    as_warner,
    check_targets,
    new_figure,
    num,
    save_png,
    style,
)
from evaluator.evaluation.compare import compare_reports

REPORT_FILE = "report.json"
COMPARE_FILE = "compare.json"
PAIR_PNG = "eval_accuracy.png"
SIDE_COLORS = ("#7f8c9d", "#e8710a", "#1f77b4", "#2ca02c")


def load_report(path: Path) -> dict[str, Any]:
    """A report as a dict; a clear ValueError when the file is not an evaluation report."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("accuracy"), Mapping):
        raise ValueError(f"{path} is not an evaluation report (it has no 'accuracy' section)")
    return doc


def estimate(entry: Any) -> tuple[float, float, float]:
    """(value, low, high) from ``{"value", "ci95"}`` or a bare number; NaN for whatever is missing."""
    if isinstance(entry, Mapping):
        value = num(entry.get("value"))
        ci = entry.get("ci95")
        if isinstance(ci, Sequence) and not isinstance(ci, str) and len(ci) == 2:
            return value, num(ci[0]), num(ci[1])
        return value, math.nan, math.nan
    return num(entry), math.nan, math.nan


def measures(reports: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[tuple[float, float, float]]]]:
    """The bar groups: (name, one estimate per report). Strict and flexible accuracy always, then every metric
    the reports declare, format rate and pass/maj@k when present."""
    out = []
    for mode in ("strict", "flexible"):
        out.append((f"{mode} accuracy", [estimate((r.get("accuracy") or {}).get(mode)) for r in reports]))
    extra: list[tuple[str, list[tuple[float, float, float]]]] = []
    declared: list[str] = []
    for r in reports:  # the pack's declared metrics (report version 2); binary accuracy is drawn above
        for name, decl in (r.get("metrics") or {}).items():
            if name not in declared and not (name == "accuracy" and (decl or {}).get("binary")):
                declared.append(name)
    for name in declared:
        extra.append((name, [estimate((r.get("metrics") or {}).get(name)) for r in reports]))
    extra.append(("format rate", [estimate(r.get("format_rate")) for r in reports]))
    for field, name in (("maj_at_k", "maj"), ("pass_at_k", "pass")):
        ks = {(r.get(field) or {}).get("k") for r in reports if isinstance(r.get(field), Mapping)}
        if len(ks) == 1 and None not in ks:
            k = ks.pop()
            entries = [(r.get(field) or {}).get("strict") for r in reports]
            if field == "pass_at_k":
                entries = [(e or {}).get(str(k)) if isinstance(e, Mapping) else None for e in entries]
            extra.append((f"{name}@{k} (strict)", [estimate(e) for e in entries]))
    out.extend(m for m in extra if any(not math.isnan(v) for v, _, _ in m[1]))
    return out


def paired_result(
    before: Mapping[str, Any], after: Mapping[str, Any], compare: Path | None, warn: Warn
) -> Mapping[str, Any] | None:
    """``results`` of a comparison: from ``compare.json`` if given and readable, else computed."""
    if compare is not None and Path(compare).is_file():
        try:
            doc = json.loads(Path(compare).read_text(encoding="utf-8"))
            if isinstance(doc.get("results"), Mapping):
                return doc["results"]
        except (OSError, ValueError, AttributeError):
            pass
        warn(
            f"{compare} could not be read as a comparison; the paired difference is computed from the reports"
        )
    try:
        return compare_reports(before, after, labels=("before", "after"))["results"]
    except (ValueError, KeyError, TypeError) as exc:
        warn(f"no paired before/after difference shown: {exc}")
        return None


def _delta_text(results: Mapping[str, Any] | None) -> str:
    if not results:
        return "paired difference unavailable"
    parts = []
    for mode in ("strict", "flexible"):
        r = results.get(mode)
        if not isinstance(r, Mapping):
            continue
        delta, ci, p = num(r.get("delta")), r.get("ci95") or [None, None], num(r.get("mcnemar_p"))
        text = f"{mode}: Δ {100 * delta:+.1f} pp"
        if len(ci) == 2 and not math.isnan(num(ci[0])):
            text += f" [95% CI {100 * num(ci[0]):+.1f}, {100 * num(ci[1]):+.1f}]"
        if not math.isnan(p):
            text += f", McNemar p={p:.3g}"
        parts.append(text)
    return "\n".join(parts) or "paired difference unavailable"


def _side_label(name: str, report: Mapping[str, Any]) -> str:
    ident = report.get("identity") or {}
    what = ident.get("adapter") or ident.get("model") or ident.get("predictions")
    n = report.get("n_items")
    tail = f" (n={n})" if isinstance(n, int) else ""
    return f"{name}: {Path(str(what)).name}{tail}" if what else f"{name}{tail}"


def draw_reports(
    sides: Sequence[tuple[str, Mapping[str, Any]]], target: Path, warn: Warn, *, subtitle: str | None = None
) -> Path:
    """Grouped bars (one group per measure, one bar per report) with 95% interval whiskers."""
    groups = measures([r for _, r in sides])
    width = 0.8 / len(sides)
    with style():
        from matplotlib.ticker import PercentFormatter

        fig = new_figure(max(8.0, 2.2 * len(groups) + 2), 5.6)
        ax = fig.subplots()
        for s, (name, report) in enumerate(sides):
            xs, vals, err_lo, err_hi = [], [], [], []
            for g, (measure, ests) in enumerate(groups):
                x = g - 0.4 + width * (s + 0.5)
                value, lo, hi = ests[s]
                if math.isnan(value):
                    ax.text(x, 0.02, "n/a", ha="center", fontsize=9, color="#8a4b00")
                    warn(f"{name} report has no value for {measure}")
                    continue
                xs.append(x)
                vals.append(value)
                err_lo.append(max(0.0, value - lo) if not math.isnan(lo) else 0.0)
                err_hi.append(max(0.0, hi - value) if not math.isnan(hi) else 0.0)
                ax.text(
                    x,
                    (hi if not math.isnan(hi) else value) + 0.015,
                    f"{100 * value:.1f}%",
                    ha="center",
                    va="bottom",
                    fontsize=8,
                )
            ax.bar(
                xs,
                vals,
                width * 0.95,
                color=SIDE_COLORS[s % len(SIDE_COLORS)],
                label=_side_label(name, report),
                yerr=[err_lo, err_hi],
                capsize=4,
                error_kw={"elinewidth": 1.2, "ecolor": "#333333"},
            )
        ax.set_xticks(range(len(groups)), [m for m, _ in groups])
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylim(0, 1.12)
        ax.yaxis.set_major_formatter(PercentFormatter(xmax=1))
        ax.set_ylabel("share of items (whiskers: 95% bootstrap CI)")
        ax.legend(loc="upper left", fontsize=9)
        ax.grid(axis="x", visible=False)
        domain = next((r.get("domain") for _, r in sides if r.get("domain")), None)
        title = "Accuracy before / after training" if len(sides) == 2 else "Accuracy"
        fig.suptitle(f"{title} — {domain}" if domain else title, fontsize=12)
        if subtitle:
            ax.set_title(subtitle, fontsize=9)
        return save_png(fig, target)


def plan_eval_pair(
    before_report: Path,
    after_report: Path,
    out_png: Path,
    *,
    compare: Path | None = None,
    warn: Warn | None = None,
) -> Plan:
    """Read both reports now (so a bad file fails before anything is drawn) and plan one PNG."""
    warner = as_warner(warn)
    before, after = load_report(before_report), load_report(after_report)
    b_items = (before.get("identity") or {}).get("items_sha256")
    a_items = (after.get("identity") or {}).get("items_sha256")
    if b_items and a_items and b_items != a_items:
        warner("the before and after reports graded different items; only shared items are paired")

    def draw() -> list[Path]:
        subtitle = _delta_text(paired_result(before, after, compare, warner))
        return [
            draw_reports([("before", before), ("after", after)], Path(out_png), warner, subtitle=subtitle)
        ]

    return Plan(Path(after_report).parent, [Path(out_png)], draw)


def plan_eval_report(report: Path, out_png: Path, *, warn: Warn | None = None) -> Plan:
    """One report on its own: its accuracy bars with intervals."""
    warner = as_warner(warn)
    doc = load_report(report)
    return Plan(
        Path(report).parent, [Path(out_png)], lambda: [draw_reports([("report", doc)], Path(out_png), warner)]
    )


def plot_eval_pair(
    before_report: Path,
    after_report: Path,
    out_png: Path,
    *,
    compare: Path | None = None,
    force: bool = False,
    warn: Warn | None = None,
) -> Path:
    """Write the before/after accuracy chart of two ``report.json`` files to ``out_png``."""
    plan = plan_eval_pair(before_report, after_report, out_png, compare=compare, warn=warn)
    check_targets(plan.targets, force)
    return plan.draw()[0]
