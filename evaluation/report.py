"""Evaluation reports: assemble, validate against the shipped schema, write atomically, print.

``report.json`` is the one document a before/after comparison needs: it carries per-item correctness
(matched across reports by item id), the identity of what was evaluated and how it was generated.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evaluator.core.outputs import atomic_write_json, atomic_write_jsonl
from evaluator.core.schemas import load_schema, validate_or_raise

SCHEMA_PACKAGE = "evaluator.evaluation"
REPORT_SCHEMA = "report.schema.json"
SAMPLES_SCHEMA = "samples.schema.json"
REPORT_NAME = "report.json"
SCHEMA_VERSION = 2
"""2: the pack's declared metrics (``metrics``, ``headline``, ``items[].metrics``). Version 1 is still read."""
SAMPLES_NAME = "samples.jsonl"
PARTIAL_NAME = "generations.partial.jsonl"
"""Generations appended as batches finish; gone once the report is written, so its presence means unfinished."""


def report_schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PACKAGE, REPORT_SCHEMA)


def samples_schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PACKAGE, SAMPLES_SCHEMA)


def file_sha256(path: str | os.PathLike[str] | None) -> str | None:
    """First 16 hex digits of a file's SHA-256 (None when there is no such file)."""
    if path is None or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def adapter_sha256(adapter: str | os.PathLike[str] | None) -> str | None:
    """Hash of an adapter's weights and config, so two reports can prove they used the same adapter."""
    if adapter is None:
        return None
    folder = Path(adapter)
    parts = [
        file_sha256(folder / name)
        for name in ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin")
    ]
    present = [p for p in parts if p]
    return hashlib.sha256("".join(present).encode()).hexdigest()[:16] if present else None


def items_sha256(items: Iterable[Mapping[str, Any]]) -> str:
    """Hash of the ordered (id, key) pairs: equal when two reports graded the same items."""
    text = "\n".join(f"{it['id']}\x1f{it['key']}" for it in items)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def evaluator_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("evaluator")
    except Exception:
        return None


def finalize_report(
    summary: Mapping[str, Any],
    *,
    kind: str,
    identity: Mapping[str, Any],
    generation: Mapping[str, Any] | None,
    timing: Mapping[str, Any],
    samples_file: str | None,
    warnings: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Add identity, settings and timing to a scoring summary and validate the result."""
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "evaluator_version": evaluator_version(),
        "extract_modes": ["strict", "flexible"],
        **summary,
        "identity": {**identity, "items_sha256": items_sha256(summary["items"])},
        "generation": dict(generation) if generation is not None else None,
        "timing": dict(timing),
        "samples_file": samples_file,
        "warnings": list(warnings),
        **dict(extra or {}),
    }
    validate_or_raise(report, report_schema(), "evaluation report")
    return report


def write_report(path: str | os.PathLike[str], report: Mapping[str, Any]) -> Path:
    """Validate again (callers may have edited it) and write atomically."""
    validate_or_raise(dict(report), report_schema(), "evaluation report")
    return atomic_write_json(path, report)


def write_samples(path: str | os.PathLike[str], samples: Iterable[Mapping[str, Any]]) -> Path:
    return atomic_write_jsonl(path, samples)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _ci(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def render_report(report: Mapping[str, Any], console: Any) -> None:
    """A compact console table of the headline figures."""
    from rich.table import Table

    ident = report.get("identity", {})
    who = ident.get("model") or ident.get("predictions") or "?"
    if ident.get("adapter"):
        who += f" + {ident['adapter']}"
    table = Table(title=f"{report['domain']} · {who} · {report['n_items']} items × {report['n_samples']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    for mode in ("strict", "flexible"):
        acc = report["accuracy"][mode]
        table.add_row(f"accuracy ({mode})", _pct(acc["value"]), _ci(acc["ci95"]))
    table.add_row(
        "format compliance", _pct(report["format_rate"]["value"]), _ci(report["format_rate"]["ci95"])
    )
    for name, est in (report.get("metrics") or {}).items():
        if name == "accuracy" and est.get("binary"):
            continue  # the same figure as strict/flexible accuracy above
        mark = " ★" if est.get("headline") else ""
        table.add_row(f"{name}{mark}", _pct(est.get("value")), _ci(est.get("ci95")))
    for kind in ("pass_at_k", "maj_at_k"):
        block = report.get(kind)
        if not block:
            continue
        label = kind.split("_")[0]
        if kind == "pass_at_k":
            for kk, est in block["strict"].items():
                table.add_row(f"{label}@{kk} (strict)", _pct(est["value"]), _ci(est["ci95"]))
        else:
            table.add_row(
                f"{label}@{block['k']} (strict)", _pct(block["strict"]["value"]), _ci(block["strict"]["ci95"])
            )
    for name, value in report.get("reward_means", {}).items():
        table.add_row(f"reward {name}", "—" if value is None else f"{value:.3f}", "")
    timing = report.get("timing", {})
    if timing.get("tokens_per_second"):
        table.add_row("tokens/s", f"{timing['tokens_per_second']:.1f}", "")
    table.add_row("seconds", f"{timing.get('seconds', 0):.1f}", "")
    if report.get("n_errors"):
        table.add_row("items with errors", str(report["n_errors"]), "")
    console.print(table)
    for warning in report.get("warnings", []):
        console.print(f"[yellow]warning:[/] {warning}")


def folder_problems(folder: Path, report: Mapping[str, Any], *, read_samples: bool = True) -> list[str]:
    """Why the parts of an evaluation folder may not belong together (empty when they agree).

    A folder written by an older release, or by hand, can hold a finished ``report.json`` beside the
    generations of a later run that never finished, or samples of another run: presenting that report
    as the folder's result would be stale.
    """
    problems = []
    if (folder / PARTIAL_NAME).exists():
        problems.append(
            f"{PARTIAL_NAME} lies beside {REPORT_NAME}: a later evaluation into this folder did not finish, so "
            f"{REPORT_NAME} may be an earlier run's; rerun the evaluation or remove the stale files"
        )
    samples = folder / Path(str(report.get("samples_file") or SAMPLES_NAME)).name
    if not read_samples or not samples.is_file() or not isinstance(report.get("items"), list):
        return problems
    import json

    ids: dict[str, int] = {}
    with open(samples, encoding="utf-8") as fh:
        for line in fh:
            try:
                key = str(json.loads(line).get("id"))
            except (ValueError, AttributeError):
                continue
            ids[key] = ids.get(key, 0) + 1
    want = {str(it.get("id")) for it in report["items"] if isinstance(it, Mapping)}
    if set(ids) != want:
        problems.append(
            f"{samples.name} holds items that {REPORT_NAME} does not ({len(set(ids) - want)}) or misses some of its "
            f"items ({len(want - set(ids))}): the two files come from different runs"
        )
    return problems
