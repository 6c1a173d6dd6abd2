"""Paired comparison of two evaluation reports on the same items: delta, paired bootstrap CI, McNemar.

Every metric the reports declare gets a paired delta with a bootstrap CI over items (``metrics``); McNemar's
test only for binary ones. A version-1 report (before packs declared metrics) reads as one binary
``accuracy`` metric, its items' correctness under the report's extraction mode. Items are matched by id. An id whose content hash differs between the reports (same id, another
question) is left out and named, so a comparison across different datasets cannot pass silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from evaluator.core.schemas import load_schema, validate_or_raise
from evaluator.evaluation import stats

COMPARE_SCHEMA = "compare.schema.json"


def compare_schema() -> dict[str, Any]:
    return load_schema("evaluator.evaluation", COMPARE_SCHEMA)


def _index(report: Mapping[str, Any], label: str) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for item in report["items"]:
        if item["id"] in out:
            raise ValueError(f"report {label} lists item {item['id']!r} twice; items must have unique ids")
        out[item["id"]] = item
    return out


def _side(report: Mapping[str, Any], label: str) -> dict[str, Any]:
    ident = report.get("identity", {})
    return {
        "label": label,
        "kind": report.get("kind"),
        "model": ident.get("model"),
        "adapter": ident.get("adapter"),
        "predictions": ident.get("predictions"),
        "n_items": report["n_items"],
        "n_samples": report["n_samples"],
        "accuracy": {m: report["accuracy"][m]["value"] for m in ("strict", "flexible")},
    }


def _mode_result(
    ids: Sequence[str], a: Mapping[str, Any], b: Mapping[str, Any], mode: str, seed: int
) -> dict[str, Any]:
    field = f"correct_{mode}"
    va = [1.0 if a[i][field] else 0.0 for i in ids]
    vb = [1.0 if b[i][field] else 0.0 for i in ids]
    gained = [i for i, x, y in zip(ids, va, vb, strict=True) if not x and y]
    lost = [i for i, x, y in zip(ids, va, vb, strict=True) if x and not y]
    boot = stats.paired_bootstrap_delta(va, vb, seed=seed)
    n = len(ids)
    return {
        "accuracy_a": sum(va) / n,
        "accuracy_b": sum(vb) / n,
        "delta": boot["delta"],
        "ci95": boot["ci95"],
        "mcnemar_p": stats.mcnemar(len(lost), len(gained)),
        "both_correct": sum(1 for x, y in zip(va, vb, strict=True) if x and y),
        "both_wrong": sum(1 for x, y in zip(va, vb, strict=True) if not x and not y),
        "n_gained": len(gained),
        "n_lost": len(lost),
        "gained": gained,
        "lost": lost,
    }


V1_ACCURACY = {"aggregation": "mean", "higher_is_better": True, "headline": True, "binary": True}


def declared_metrics(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Name → declaration (higher_is_better, binary, headline) of the report's metrics; v1: accuracy."""
    if isinstance(report.get("metrics"), Mapping):
        return dict(report["metrics"])
    return {"accuracy": V1_ACCURACY}


def item_metrics(item: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, float]:
    """One item's metric values (its first sample's); a v1 item's accuracy is its correctness."""
    if isinstance(item.get("metrics"), Mapping) and isinstance(report.get("metrics"), Mapping):
        return {str(k): float(v) for k, v in item["metrics"].items()}
    mode = report.get("extract") if report.get("extract") in ("strict", "flexible") else "strict"
    return {"accuracy": 1.0 if item.get(f"correct_{mode}") else 0.0}


def _metric_results(
    ids: Sequence[str], a: Mapping[str, Any], b: Mapping[str, Any], ra: Mapping[str, Any], rb: Mapping[str, Any],
    seed: int,
) -> dict[str, Any]:
    """A paired delta (B − A) with its bootstrap CI for every metric both reports declare."""
    da, db = declared_metrics(ra), declared_metrics(rb)
    out: dict[str, Any] = {}
    for name in [n for n in da if n in db]:
        decl = da[name]
        pairs = []
        for i in ids:
            va, vb = item_metrics(a[i], ra).get(name), item_metrics(b[i], rb).get(name)
            if va is not None and vb is not None:
                pairs.append((i, va, vb))
        if not pairs:
            continue
        xs, ys = [p[1] for p in pairs], [p[2] for p in pairs]
        boot = stats.paired_bootstrap_delta(xs, ys, seed=seed)
        better = [i for i, x, y in pairs if (y > x) == bool(decl.get("higher_is_better", True)) and x != y]
        worse = [i for i, x, y in pairs if x != y and i not in set(better)]
        binary = bool(decl.get("binary")) and bool(db[name].get("binary"))
        out[name] = {
            "a": sum(xs) / len(xs),
            "b": sum(ys) / len(ys),
            "delta": boot["delta"],
            "ci95": boot["ci95"],
            "n": len(pairs),
            "higher_is_better": bool(decl.get("higher_is_better", True)),
            "headline": bool(decl.get("headline")),
            "binary": binary,
            "mcnemar_p": stats.mcnemar(len(worse), len(better)) if binary else None,
            "n_better": len(better),
            "n_worse": len(worse),
        }
    return out


def compare_reports(
    a: Mapping[str, Any], b: Mapping[str, Any], seed: int = 0, *, labels: tuple[str, str] = ("A", "B")
) -> dict[str, Any]:
    """Compare report ``b`` against ``a`` (delta = B - A) on the items both graded; validated result.

    ``gained`` are items B gets right and A wrong; ``lost`` the reverse.
    """
    if a.get("domain") != b.get("domain"):
        raise ValueError(f"cannot compare a {a.get('domain')} report with a {b.get('domain')} report")
    ia, ib = _index(a, labels[0]), _index(b, labels[1])
    common = [i for i in ia if i in ib]
    mismatched = [i for i in common if ia[i].get("key") != ib[i].get("key")]
    ids = [i for i in common if i not in set(mismatched)]
    if not ids:
        raise ValueError(
            f"reports {labels[0]} and {labels[1]} share no items with the same id and content; "
            "were they run on the same data and split?"
        )
    warnings: list[str] = []
    if mismatched:
        warnings.append(
            f"{len(mismatched)} item id(s) hold different questions in the two reports and were left out"
        )
    only_a = [i for i in ia if i not in ib]
    only_b = [i for i in ib if i not in ia]
    if only_a or only_b:
        warnings.append(
            f"compared on the {len(ids)} shared items ({len(only_a)} only in {labels[0]}, "
            f"{len(only_b)} only in {labels[1]})"
        )
    id_a, id_b = a.get("identity", {}), b.get("identity", {})
    for key in ("data", "split"):
        if id_a.get(key) != id_b.get(key) and id_a.get(key) is not None and id_b.get(key) is not None:
            warnings.append(f"{key} differs: {id_a.get(key)!r} vs {id_b.get(key)!r}")
    if a.get("n_samples", 1) > 1 or b.get("n_samples", 1) > 1:
        warnings.append(
            "a report drew several samples per item: the comparison uses each item's first sample"
        )
    result = {
        "schema_version": 2,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "domain": a.get("domain"),
        "seed": seed,
        "a": _side(a, labels[0]),
        "b": _side(b, labels[1]),
        "n_common": len(ids),
        "only_in_a": only_a,
        "only_in_b": only_b,
        "content_mismatch": mismatched,
        "results": {mode: _mode_result(ids, ia, ib, mode, seed) for mode in ("strict", "flexible")},
        "metrics": _metric_results(ids, ia, ib, a, b, seed),
        "warnings": warnings,
    }
    validate_or_raise(result, compare_schema(), "comparison")
    return result


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render_comparison(result: Mapping[str, Any], console: Any) -> None:
    """A console table: accuracies, delta with its CI, McNemar p, flips each way."""
    from rich.table import Table

    a, b = result["a"], result["b"]
    table = Table(
        title=f"{result['domain']}: {b['label']} vs {a['label']} on {result['n_common']} paired items"
    )
    for col in ("extraction", a["label"], b["label"], "Δ (B−A)", "95% CI", "McNemar p", "gained", "lost"):
        table.add_column(col, justify="left" if col == "extraction" else "right")
    for mode, r in result["results"].items():
        lo, hi = r["ci95"]
        table.add_row(
            mode,
            _pct(r["accuracy_a"]),
            _pct(r["accuracy_b"]),
            f"{100 * r['delta']:+.1f} pp",
            f"[{100 * lo:+.1f}, {100 * hi:+.1f}]",
            f"{r['mcnemar_p']:.3g}",
            str(r["n_gained"]),
            str(r["n_lost"]),
        )
    console.print(table)
    metrics = {n: r for n, r in (result.get("metrics") or {}).items() if not (n == "accuracy" and r["binary"])}
    if metrics:
        mt = Table(title="declared metrics (B − A, paired over items)")
        for col in ("metric", a["label"], b["label"], "Δ (B−A)", "95% CI", "McNemar p", "better", "worse"):
            mt.add_column(col, justify="left" if col == "metric" else "right")
        for name, r in metrics.items():
            lo, hi = r["ci95"]
            mt.add_row(
                name + (" ★" if r["headline"] else "") + ("" if r["higher_is_better"] else " (lower is better)"),
                f"{r['a']:.3f}", f"{r['b']:.3f}", f"{r['delta']:+.3f}", f"[{lo:+.3f}, {hi:+.3f}]",
                "—" if r["mcnemar_p"] is None else f"{r['mcnemar_p']:.3g}", str(r["n_better"]), str(r["n_worse"]),
            )
        console.print(mt)
    for mode in ("strict",):
        r = result["results"][mode]
        for name, ids in (("gained", r["gained"]), ("lost", r["lost"])):
            if ids:
                shown = ", ".join(ids[:10]) + (f" … (+{len(ids) - 10})" if len(ids) > 10 else "")
                console.print(f"{name} ({mode}): {shown}")
    for warning in result.get("warnings", []):
        console.print(f"[yellow]warning:[/] {warning}")
