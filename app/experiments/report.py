"""``results.md``: the side-by-side table of an experiment, measured columns instead of adjectives."""

from __future__ import annotations

from typing import Any

COST_COLUMNS = (
    ("seconds", "train s", "{:.1f}"),
    ("steps", "steps", "{:.0f}"),
    ("seconds_per_step", "s/step", "{:.3f}"),
    ("peak_memory_mib", "peak MiB", "{:.0f}"),
    ("judge_calls", "judge calls", "{:.0f}"),
    ("judge_tokens", "judge tokens", "{:.0f}"),
    ("judge_bytes_sent", "bytes sent", "{:.0f}"),
    ("failures", "judge failures", "{:.0f}"),
)


def _mean_cost(arm: dict[str, Any], key: str) -> float | None:
    values = [s["cost"].get(key) for s in arm["seeds"] if s["status"] == "ok" and s["cost"].get(key) is not None]
    return sum(values) / len(values) if values else None


def _fmt(value: float | None, pattern: str) -> str:
    return "—" if value is None else pattern.format(value)


def headline_metric(results: dict[str, Any]) -> str:
    metrics = results.get("metrics") or {}
    for name, decl in metrics.items():
        if decl.get("headline"):
            return name
    return next(iter(metrics), "accuracy")


def _all_metrics(results: dict[str, Any]) -> list[str]:
    """Every declared metric of every arm against the baseline (a format rate that collapsed shows here)."""
    comps = results["comparisons"]
    if not comps:
        return []
    lines = ["", "Every declared metric against the baseline:", "",
             "| arm | metric | arm | baseline | Δ (95% CI) | p (Holm) |", "|---|---|---|---|---|---|"]
    for c in comps:
        lines.append(
            f"| {c['arm']} | {c['metric']} | {c['arm_mean']:.4g} | {c['baseline_mean']:.4g} | "
            f"{c['diff']:+.4g} ({c['ci_low']:+.4g} to {c['ci_high']:+.4g}) | {c['p']:.3g} ({c['p_adjusted']:.3g}) |"
        )
    return lines


def render_markdown(results: dict[str, Any]) -> str:
    """The table (one row per arm: headline metric with CI, difference from the baseline, cost) and notes."""
    metric = headline_metric(results)
    comps = {c["arm"]: c for c in results["comparisons"] if c["metric"] == metric}
    lines = [
        f"# {results['name']}",
        "",
        f"{len(results['seeds'])} seed(s) {results['seeds']}, {results['eval'].get('n_items')} held-out items "
        f"(split {results['eval'].get('split')}), baseline **{results['baseline']}**. Cost columns are means over "
        "the arm's finished seeds.",
        "",
        "| arm | algorithm | seeds ok | " + f"{metric} (95% CI) | Δ vs baseline (95% CI) | p (Holm) | "
        + " | ".join(c[1] for c in COST_COLUMNS) + " |",
        "|" + "---|" * (6 + len(COST_COLUMNS)),
    ]
    for arm in results["arms"]:
        mean, ci = arm["mean"].get(metric), arm["ci"].get(metric)
        shown = "—" if mean is None else f"{100 * mean:.1f} % ({100 * ci[0]:.1f}–{100 * ci[1]:.1f})"
        comp = comps.get(arm["name"])
        if arm["name"] == results["baseline"]:
            delta, p = "(baseline)", ""
        elif comp is None:
            delta, p = "—", "—"
        else:
            delta = f"{100 * comp['diff']:+.1f} pp ({100 * comp['ci_low']:+.1f} to {100 * comp['ci_high']:+.1f})"
            p = f"{comp['p']:.3g} ({comp['p_adjusted']:.3g})"
        costs = [_fmt(_mean_cost(arm, key), pattern) for key, _, pattern in COST_COLUMNS]
        name = arm["name"] + (f" ⚠ not learning (seeds {arm['not_learning']})" if arm.get("not_learning") else "")
        row = [name, arm["algorithm"], f"{arm['n_seeds_ok']}/{len(arm['seeds'])}", shown, delta, p, *costs]
        lines.append("| " + " | ".join(row) + " |")
    lines += _all_metrics(results)
    lines += ["", "Per seed:", "", f"| arm | seed | {metric} | train s | steps | reused | run health |",
              "|---|---|---|---|---|---|---|"]
    for arm in results["arms"]:
        for s in arm["seeds"]:
            value = s["metrics"].get(metric)
            health = s.get("health") or {}
            shown_health = f"{health['verdict']}: {health.get('reason', '')}" if health.get("verdict") else "—"
            lines.append(
                f"| {arm['name']} | {s['seed']} | {'—' if value is None else f'{100 * value:.1f} %'} | "
                f"{_fmt(s['cost'].get('seconds'), '{:.1f}')} | {_fmt(s['cost'].get('steps'), '{:.0f}')} | "
                f"{'yes' if s.get('reused') else 'no'} | {shown_health} |"
            )
    reached = [(a["name"], s) for a in results["arms"] for s in a["seeds"] if s.get("to_baseline_accuracy")]
    if reached:
        lines += ["", "First held-out point at the baseline's final held-out accuracy (same seed):", "",
                  "| arm | seed | target | step | train s |", "|---|---|---|---|---|"]
        for name, s in reached:
            t = s["to_baseline_accuracy"]
            lines.append(f"| {name} | {s['seed']} | {100 * t['target']:.1f} % | {_fmt(t['step'], '{:.0f}')} | "
                         f"{_fmt(t['seconds'], '{:.1f}')} |")
    st = results["statistics"]
    lines += ["", "## Statistics", "", f"- interval: {st['interval']}", f"- test: {st['test']}",
              f"- correction: {st['correction']} over {st['family_size']} comparison(s) (arms × metrics)"]
    if results.get("warm_start"):
        w = results["warm_start"]
        lines.append(f"- warm start ({w.get('status')}): {metric} {w.get('metrics', {}).get(metric)}")
    for note in results.get("notes", []):
        lines.append(f"- {note}")
    for f in results.get("failures", []):
        lines.append(f"- **{f.get('status', 'failed')}** {f['job']}: {f['error']}")
    return "\n".join(lines) + "\n"
