"""Comparison and experiment pages as plain data: paired differences, items gained and lost, arms side by side.

Experiments (``results.json``) are read as far as their shape is present: a missing ``mean``, ``ci``,
``cost`` or ``comparisons`` leaves its column empty and is named, never guessed.
"""

from __future__ import annotations

from typing import Any

from evaluator.app.run_folders.classify import Entry
from evaluator.app.run_folders.documents import dict_or_error

COST_COLUMNS = ("seconds", "steps", "seconds_per_step", "peak_memory_mib", "judge_calls", "judge_tokens",
                "judge_bytes_sent", "failures")
SHOWN_ITEMS = 200
COMPARISON_KEYS = ("arm", "baseline", "metric", "arm_mean", "baseline_mean", "diff", "ci_low", "ci_high", "p",
                   "p_adjusted", "n_items")


def comparison(viewer: Any, entry: Entry) -> dict[str, Any]:
    doc, problems = dict_or_error(viewer.docs.read(entry.path), entry.path.name)
    problems = list(dict.fromkeys(problems + entry.problems))
    results = doc.get("results") if isinstance(doc.get("results"), dict) else {}
    modes = []
    for mode in ("strict", "flexible"):
        r = results.get(mode)
        if not isinstance(r, dict):
            if doc:
                problems.append(f"the comparison has no {mode} result")
            continue
        modes.append({
            "mode": mode, "a": r.get("accuracy_a"), "b": r.get("accuracy_b"), "delta": r.get("delta"),
            "ci": _pair(r.get("ci95")), "p": r.get("mcnemar_p"), "n_gained": r.get("n_gained"),
            "n_lost": r.get("n_lost"), "both_correct": r.get("both_correct"), "both_wrong": r.get("both_wrong"),
            "gained": _ids(r.get("gained")), "lost": _ids(r.get("lost")),
        })
    metrics = []
    for name, r in (doc.get("metrics") or {}).items() if isinstance(doc.get("metrics"), dict) else []:
        if isinstance(r, dict):
            metrics.append({"name": name, **{k: r.get(k) for k in (
                "a", "b", "delta", "n", "mcnemar_p", "n_better", "n_worse", "headline", "higher_is_better")},
                "ci": _pair(r.get("ci95"))})
    sides = {k: doc.get(k) if isinstance(doc.get(k), dict) else {} for k in ("a", "b")}
    links = {k: _report_link(viewer, entry, sides[k]) for k in ("a", "b")}
    return {"entry": entry, "doc": doc, "modes": modes, "metrics": metrics, "sides": sides, "links": links,
            "warnings": [str(w) for w in doc["warnings"]] if isinstance(doc.get("warnings"), list) else [],
            "problems": problems,
            "shown_items": SHOWN_ITEMS}


def _report_link(viewer: Any, entry: Entry, side: dict[str, Any]) -> Entry | None:
    """The evaluation entry whose adapter/model a side names, when one was scanned in the same folder tree."""
    label = side.get("label")
    if isinstance(label, str) and label:
        found = viewer.catalog.entry_for_path(label, entry.path.parent)
        if found is not None and found.kind == "evaluation":
            return found
    return None


def experiment(viewer: Any, entry: Entry) -> dict[str, Any]:
    doc, problems = dict_or_error(viewer.docs.read(entry.path / "results.json"), "results.json")
    problems = list(dict.fromkeys(problems + entry.problems))
    arms_doc = doc.get("arms") if isinstance(doc.get("arms"), list) else []
    metric_names: list[str] = []
    arms = []
    for arm in arms_doc:
        if not isinstance(arm, dict):
            problems.append("an arm of results.json is not an object; skipped")
            continue
        mean = arm.get("mean") if isinstance(arm.get("mean"), dict) else {}
        ci = arm.get("ci") if isinstance(arm.get("ci"), dict) else {}
        seeds = []
        for seed in arm.get("seeds") if isinstance(arm.get("seeds"), list) else []:
            if not isinstance(seed, dict):
                continue
            metrics = seed.get("metrics") if isinstance(seed.get("metrics"), dict) else {}
            cost = seed.get("cost") if isinstance(seed.get("cost"), dict) else {}
            for name in list(metrics) + list(mean):
                if name not in metric_names:
                    metric_names.append(name)
            run = seed.get("run_dir")
            seeds.append({"seed": seed.get("seed"), "run_dir": run, "metrics": metrics, "cost": cost,
                          "error": seed.get("error"), "status": seed.get("status"), "reused": seed.get("reused"),
                          "run": viewer.catalog.entry_for_path(run, entry.path) if isinstance(run, str) else None,
                          "evals": _seed_evals(viewer, entry, seed)})
        for name in mean:
            if name not in metric_names:
                metric_names.append(name)
        arms.append({"name": arm.get("name"), "spec": arm.get("spec"), "mean": mean, "algorithm": arm.get("algorithm"),
                     "ci": {k: _pair(v) for k, v in ci.items()}, "seeds": seeds,
                     "cost": _cost_means([s["cost"] for s in seeds])})
    raw = doc.get("comparisons") if isinstance(doc.get("comparisons"), list) else []
    comparisons = [{**{k: c.get(k) for k in COMPARISON_KEYS},
                    "seeds": [s for s in c.get("seeds") or [] if isinstance(s, int)]
                    if isinstance(c.get("seeds"), list) else []}
                   for c in raw if isinstance(c, dict)]
    if doc and "comparisons" not in doc:
        problems.append("results.json has no comparisons")
    statistics = doc.get("statistics") if isinstance(doc.get("statistics"), dict) else {}
    warm = doc.get("warm_start") if isinstance(doc.get("warm_start"), dict) else None
    return {"entry": entry, "doc": doc, "arms": arms, "metric_names": metric_names,
            "comparisons": comparisons, "cost_columns": COST_COLUMNS, "problems": problems,
            "statistics": statistics, "correction": statistics.get("correction") or doc.get("correction"),
            "failures": [f for f in doc.get("failures") or [] if isinstance(f, dict)],
            "warm_start": warm, "warm_run": viewer.catalog.entry_for_path(warm["run_dir"], entry.path)
            if warm and isinstance(warm.get("run_dir"), str) else None,
            "notes": [str(n) for n in doc.get("notes") or [] if n] if isinstance(doc.get("notes"), list) else []}


def _seed_evals(viewer: Any, entry: Entry, seed: dict[str, Any]) -> list[Entry]:
    """The seed's evaluation reports: ``<run_dir>/eval`` (or one per pack, ``eval/<pack>``) when scanned."""
    run = seed.get("run_dir")
    if not isinstance(run, str) or not run:
        return []
    base = viewer.catalog.entry_for_path(run, entry.path)
    if base is None:
        return []
    found = viewer.catalog.get(base.label, f"{base.rel}/eval")
    if found is not None and found.kind == "evaluation":
        return [found]
    prefix = f"{base.key}/eval/"
    return [e for k, e in sorted(viewer.catalog.entries.items()) if k.startswith(prefix) and e.kind == "evaluation"]


def _cost_means(costs: list[dict[str, Any]]) -> dict[str, float | None]:
    """Each cost column's mean over the seeds that report it (sums for counts would hide seed numbers)."""
    out: dict[str, float | None] = {}
    for col in COST_COLUMNS:
        vals = [c[col] for c in costs if isinstance(c.get(col), (int, float)) and not isinstance(c.get(col), bool)]
        out[col] = sum(vals) / len(vals) if vals else None
    return out


def _pair(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return float(value[0]), float(value[1])
    if isinstance(value, dict) and isinstance(value.get("low"), (int, float)) and isinstance(value.get("high"), (int, float)):
        return float(value["low"]), float(value["high"])
    return None


def _ids(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []
