"""``results.json``: every arm's seeds with metrics and cost, and each arm against the baseline, paired.

Comparisons pair the same held-out items and the same seeds: the difference matrix (seeds × items, arm −
baseline) gets a two-stage bootstrap interval clustered by item (items drawn with replacement, every seed's
value kept per item; seeds drawn too) and a paired sign-flip test on the per-item differences averaged over
seeds. The p-values of all comparisons (arms × metrics) are Holm-adjusted together; both are reported.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.app.experiments.jobs import WARM
from evaluator.app.experiments.spec import ExperimentSpec
from evaluator.core.outputs import read_jsonl
from evaluator.core.schemas import load_schema, validate_or_raise
from evaluator.evaluation import stats
from evaluator.evaluation.compare import declared_metrics, item_metrics

RESULTS_NAME = "results.json"
SCHEMA_NAME = "results.schema.json"
PPO_NOTE = (
    "TRL 1.16 has no PPOTrainer (neither top level nor trl.experimental): a PPO-style comparison is answered "
    "with RLOO, the critic-free leave-one-out trainer TRL does ship"
)
STATS_NOTE = {
    "interval": "95% two-stage bootstrap clustered by item (items with replacement, all seeds of an item kept; "
    "seeds with replacement)",
    "test": "paired sign-flip permutation test on per-item differences averaged over the paired seeds "
    "(exact up to 16 non-zero items, else 10,000 Monte Carlo flips)",
    "correction": "holm",
}


def results_schema() -> dict[str, Any]:
    return load_schema("evaluator.app.experiments", SCHEMA_NAME)


def _items(run_dir: str) -> tuple[dict[str, dict[str, float]], dict[str, str], dict[str, Any]]:
    """(item id → metric values, item id → content key, declared metrics) of a job's evaluation.

    A mixed-pack run has one report per pack (``eval/<pack>/report.json``): its metrics are named
    ``<pack>/<metric>`` and its items ``<pack>:<id>``, so each pack is compared on its own items.
    """
    root = Path(run_dir) / "eval"
    single = root / "report.json"
    paths = [("", single)] if single.is_file() else [(p.parent.name, p) for p in sorted(root.glob("*/report.json"))]
    if not paths:
        raise FileNotFoundError(f"no evaluation report under {root}")
    values: dict[str, dict[str, float]] = {}
    keys: dict[str, str] = {}
    declared: dict[str, Any] = {}
    for pack, path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        name = f"{pack}/" if pack else ""
        ident = f"{pack}:" if pack else ""
        for it in report["items"]:
            values[ident + str(it["id"])] = {name + k: v for k, v in item_metrics(it, report).items()}
            keys[ident + str(it["id"])] = str(it.get("key"))
        declared.update({name + k: v for k, v in declared_metrics(report).items()})
    return values, keys, declared


def _matrix(per_seed: dict[int, dict[str, dict[str, float]]], seeds: list[int], ids: list[str], metric: str) -> np.ndarray:
    return np.array([[per_seed[s][i][metric] for i in ids] for s in seeds], dtype=float)


def build_results(spec: ExperimentSpec, records: dict[str, dict[str, Any]], spec_text: str) -> dict[str, Any]:
    """The results document (validated against its schema)."""
    loaded: dict[str, dict[int, tuple[Any, ...]]] = {}
    declared: dict[str, Any] = {}
    for key, rec in records.items():
        if key == WARM or rec.get("status") != "ok":
            continue
        try:
            values, keys, decl = _items(rec["run_dir"])
        except (OSError, ValueError, KeyError) as exc:
            rec.update(status="failed", error=f"its evaluation report could not be read: {exc}")
            continue
        loaded.setdefault(rec["arm"], {})[int(rec["seed"])] = (values, keys)
        declared.update({k: v for k, v in decl.items() if k not in declared})
    arms = [_arm_entry(spec, arm, records, loaded) for arm in spec.arms]
    _time_to_baseline(spec, arms)
    comparisons = _comparisons(spec, loaded, declared)
    n_items = {len(v[0]) for per in loaded.values() for v in per.values()}
    doc = {
        "schema_version": 1,
        "name": spec.name,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "spec_sha256": hashlib.sha256(spec_text.encode("utf-8")).hexdigest(),
        "baseline": spec.baseline,
        "seeds": spec.seeds,
        "eval": {**spec.eval, "n_items": max(n_items) if n_items else 0},
        "metrics": {k: {f: bool(v.get(f)) for f in ("higher_is_better", "binary", "headline")} for k, v in declared.items()},
        "warm_start": _warm_entry(records.get(WARM)),
        "arms": arms,
        "comparisons": comparisons,
        "statistics": {**STATS_NOTE, "family_size": len(comparisons), "n_boot": stats.N_BOOT, "level": 0.95},
        "notes": [PPO_NOTE] if any(a.algorithm == "rloo" for a in spec.arms) else [],
        "failures": [
            {"job": k, "status": r.get("status", "failed"), "error": r.get("error")}
            for k, r in sorted(records.items()) if r.get("status") != "ok"
        ],
    }
    validate_or_raise(doc, results_schema(), "experiment results")
    return doc


def _warm_entry(rec: dict[str, Any] | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    keys = ("status", "run_dir", "metrics", "cost", "error")
    return {k: rec.get(k) for k in keys if k in rec}


def _arm_entry(spec: ExperimentSpec, arm: Any, records: dict[str, dict[str, Any]], loaded: dict[str, Any]) -> dict[str, Any]:
    seeds = []
    for seed in spec.seeds:
        rec = records.get(f"{arm.name}/seed-{seed}", {})
        seeds.append({
            "seed": seed,
            "status": rec.get("status", "missing"),
            "reused": bool(rec.get("reused")),
            "run_dir": rec.get("run_dir"),
            "metrics": rec.get("metrics") or {},
            "cost": rec.get("cost") or {},
            "error": rec.get("error"),
            "algorithm": rec.get("algorithm"),
            "dynamic_sampling": rec.get("dynamic_sampling"),
            "health": rec.get("health"),
        })
    mean: dict[str, float] = {}
    ci: dict[str, list[float]] = {}
    per = loaded.get(arm.name, {})
    ok = sorted(per)
    if ok:
        ids = sorted(set.intersection(*(set(per[s][0]) for s in ok)))
        values = {s: per[s][0] for s in ok}
        for metric in sorted({m for s in ok for i in ids for m in values[s][i]}):
            scored = [i for i in ids if all(metric in values[s][i] for s in ok)]  # a pack's metric: its items
            if scored:
                boot = stats.clustered_bootstrap(_matrix(values, ok, scored, metric), seed=0)
                mean[metric], ci[metric] = boot["mean"], [boot["ci_low"], boot["ci_high"]]
    not_learning = [s["seed"] for s in seeds if (s["health"] or {}).get("verdict") not in (None, "learning")]
    return {"name": arm.name, "algorithm": arm.algorithm, "spec": arm.overrides, "seeds": seeds,
            "n_seeds_ok": len(ok), "not_learning": not_learning, "mean": mean, "ci": ci}


def _comparisons(spec: ExperimentSpec, loaded: dict[str, Any], declared: dict[str, Any]) -> list[dict[str, Any]]:
    base = loaded.get(spec.baseline, {})
    out: list[dict[str, Any]] = []
    for arm in spec.arms:
        if arm.name == spec.baseline:
            continue
        mine = loaded.get(arm.name, {})
        seeds = sorted(set(mine) & set(base))
        if not seeds:
            continue
        ids = sorted(
            i for i in set.intersection(*(set(mine[s][0]) & set(base[s][0]) for s in seeds))
            if all(mine[s][1][i] == base[s][1][i] for s in seeds)  # same id, same question
        )
        if not ids:
            continue
        for metric in declared:
            scored = [i for i in ids if all(metric in mine[s][0][i] and metric in base[s][0][i] for s in seeds)]
            if not scored:
                continue
            a = _matrix({s: base[s][0] for s in seeds}, seeds, scored, metric)
            b = _matrix({s: mine[s][0] for s in seeds}, seeds, scored, metric)
            boot = stats.clustered_bootstrap(b - a, seed=0)
            out.append({
                "arm": arm.name, "baseline": spec.baseline, "metric": metric,
                "arm_mean": float(b.mean()), "baseline_mean": float(a.mean()),
                "diff": boot["mean"], "ci_low": boot["ci_low"], "ci_high": boot["ci_high"],
                "p": stats.paired_sign_flip((b - a).mean(axis=0), seed=0),
                "n_items": len(scored), "seeds": seeds,
            })
    for row, adjusted in zip(out, stats.holm([r["p"] for r in out]), strict=True):
        row["p_adjusted"] = adjusted
    return out


def held_out_curve(run_dir: str | None) -> list[dict[str, float]]:
    """(step, training seconds, held-out accuracy) at each in-training evaluation (``eval_every``) of a run."""
    path = Path(run_dir or "") / "metrics.jsonl"
    if not run_dir or not path.is_file():
        return []
    rows = read_jsonl(path)
    start = next((r["time"] for r in rows if isinstance(r.get("time"), (int, float))), None)
    return [
        {"step": int(r["step"]), "seconds": round(float(r["time"]) - float(start), 3), "accuracy": float(r["eval/accuracy"])}
        for r in rows
        if isinstance(r.get("eval/accuracy"), (int, float)) and start is not None
    ]


def _time_to_baseline(spec: ExperimentSpec, arms: list[dict[str, Any]]) -> None:
    """Where runs evaluated during training: the first step (and seconds) each seed reached the baseline's
    final held-out accuracy of the same seed — how dynamic sampling (or any arm) is judged on cost."""
    base = next(a for a in arms if a["name"] == spec.baseline)
    targets = {s["seed"]: curve[-1]["accuracy"] for s in base["seeds"] if (curve := held_out_curve(s["run_dir"]))}
    for arm in arms:
        for seed in arm["seeds"]:
            curve = held_out_curve(seed["run_dir"]) if seed["status"] == "ok" else []
            target = targets.get(seed["seed"])
            if not curve or target is None:
                continue
            hit = next((p for p in curve if p["accuracy"] >= target - 1e-12), None)
            seed["to_baseline_accuracy"] = {
                "target": target, "step": hit["step"] if hit else None, "seconds": hit["seconds"] if hit else None,
            }
