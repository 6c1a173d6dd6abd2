"""What a folder or JSON file is (training run, SFT run, evaluation, comparison, experiment) and its list row.

Only cheap facts are read here, since a scan looks at every run: the config, ``best.json``, the summary, the
last line of ``metrics.jsonl`` (its tail only), a report's headline. The pages read the rest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evaluator.app.run_folders.documents import DocCache, dict_or_error
from evaluator.app.run_folders.jsonl import last_row
from evaluator.evaluation.report import folder_problems

RUN_MARKERS = {"run_config.yaml", "metrics.jsonl", "completions.jsonl", "run_summary.json"}
KNOWN_JSON = {
    "report.json", "results.json", "run_summary.json", "best.json", "adapter_config.json", "config.json",
    "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
    "trainer_state.json", "memory_plan.json", "chat_template.json", "vocab.json", "added_tokens.json",
}
PEEK = 512
CONFIG_KEYS = ("domain", "model", "max_steps", "algorithm", "resolved")
KINDS = ("training", "sft", "evaluation", "comparison", "experiment")


@dataclass
class Entry:
    """One run as listed: where it is, what it is, and the few figures the list shows."""

    label: str
    rel: str
    path: Path
    kind: str
    domain: str | None = None
    model: str | None = None
    steps: int | None = None
    best: float | None = None
    best_note: str | None = None
    mtime: float = 0.0
    problems: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.label}/{self.rel}"

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.mtime, timezone.utc).strftime("%Y-%m-%d %H:%M") if self.mtime else "—"


def _mtime(*paths: Path) -> float:
    best = 0.0
    for p in paths:
        try:
            best = max(best, os.stat(p).st_mtime)
        except OSError:
            continue
    return best


def classify_dir(label: str, rel: str, folder: Path, names: set[str], docs: DocCache) -> Entry | None:
    if "results.json" in names:
        return _experiment(label, rel, folder, docs)
    if names & RUN_MARKERS:
        return _training(label, rel, folder, names, docs)
    if "report.json" in names or "samples.jsonl" in names:
        return _evaluation(label, rel, folder, folder / "report.json", docs)
    return None


def classify_file(label: str, rel: str, path: Path, docs: DocCache, siblings: set[str]) -> Entry | None:
    """A comparison (or a report written under another name), recognised by its first bytes, then parsed."""
    if path.name in KNOWN_JSON or path.name.startswith("tokenizer"):
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(PEEK)
    except OSError:
        return None
    if b'"schema_version"' not in head:
        return None
    doc, problems = dict_or_error(docs.read(path), path.name)
    if "results" in doc and "a" in doc and "b" in doc:
        return _comparison(label, rel, path, doc, problems)
    if "items" in doc and "accuracy" in doc:
        return _evaluation(label, rel, path, path, docs)
    return None


def _training(label: str, rel: str, folder: Path, names: set[str], docs: DocCache) -> Entry:
    cfg, problems = dict_or_error(docs.read(folder / "run_config.yaml", CONFIG_KEYS), "run_config.yaml")
    summary: dict[str, Any] = {}
    if "run_summary.json" in names:
        summary, more = dict_or_error(docs.read(folder / "run_summary.json"), "run_summary.json")
        problems += more
    resolved = cfg.get("resolved") if isinstance(cfg.get("resolved"), dict) else {}
    kind = "sft" if resolved.get("kind") == "sft" or summary.get("kind") == "sft" else "training"
    entry = Entry(label, rel, folder, kind, domain=_str(cfg.get("domain") or summary.get("domain")),
                  model=_str(cfg.get("model") or summary.get("model")), problems=problems)
    if "metrics.jsonl" not in names:
        entry.problems.append("metrics.jsonl is missing (no step was logged yet)")
    else:
        last = last_row(folder / "metrics.jsonl")
        entry.steps = last.get("step") if isinstance(last, dict) and isinstance(last.get("step"), int) else None
    if entry.steps is None and isinstance(summary.get("global_step"), int):
        entry.steps = summary["global_step"]
    if isinstance(cfg.get("max_steps"), int):
        entry.facts["max_steps"] = cfg["max_steps"]
    health = summary.get("health") if isinstance(summary.get("health"), dict) else {}
    if isinstance(health.get("verdict"), str):
        entry.facts["health"] = health["verdict"]
    algo = resolved.get("algorithm") if isinstance(resolved.get("algorithm"), dict) else {}
    entry.facts["algorithm"] = "sft" if kind == "sft" else str(algo.get("name") or cfg.get("algorithm") or "grpo")
    best_path = folder / "best_adapter" / "best.json"
    if os.path.exists(best_path):
        best, more = dict_or_error(docs.read(best_path), "best_adapter/best.json")
        entry.problems += more
        if best.get("metric") == "eval/accuracy" and isinstance(best.get("value"), (int, float)):
            entry.best, entry.best_note = float(best["value"]), f"at step {best.get('step')}"
        elif best:
            entry.best_note = "no held-out evaluation (best adapter chosen by reward)"
    entry.mtime = _mtime(folder / "metrics.jsonl", folder / "run_config.yaml", folder)
    return entry


def _evaluation(label: str, rel: str, path: Path, report_path: Path, docs: DocCache) -> Entry:
    """An evaluation: a folder with ``report.json`` (``path`` is the folder) or a report file itself."""
    report, problems = dict_or_error(docs.read(report_path), report_path.name)
    entry = Entry(label, rel, path, "evaluation", problems=problems)
    ident = report.get("identity") if isinstance(report.get("identity"), dict) else {}
    entry.domain = _str(report.get("domain"))
    model = _str(ident.get("model")) or _short(ident.get("predictions"))
    entry.model = f"{model} + {_short(ident['adapter'])}" if model and ident.get("adapter") else model
    entry.steps = None
    headline = headline_value(report)
    if headline is not None:
        entry.facts["headline"], entry.facts["headline_value"] = headline
    entry.facts["n_items"] = report.get("n_items")
    if report_path.name == "report.json":  # a folder's parts that may not belong together are flagged
        entry.problems += folder_problems(report_path.parent, report, read_samples=False)
    entry.mtime = _mtime(report_path, report_path.parent / "samples.jsonl")
    return entry


def headline_value(report: dict[str, Any]) -> tuple[str, float] | None:
    """The report's headline metric and its value (strict/flexible accuracy for a version-1 report)."""
    metrics = report.get("metrics") if isinstance(report.get("metrics"), dict) else {}
    name = report.get("headline") if isinstance(report.get("headline"), str) else None
    if name and isinstance(metrics.get(name), dict) and isinstance(metrics[name].get("value"), (int, float)):
        return name, float(metrics[name]["value"])
    acc = report.get("accuracy") if isinstance(report.get("accuracy"), dict) else {}
    mode = report.get("extract") if report.get("extract") in ("strict", "flexible") else "strict"
    block = acc.get(mode) if isinstance(acc.get(mode), dict) else {}
    value = block.get("value")
    return (f"accuracy ({mode})", float(value)) if isinstance(value, (int, float)) else None


def _comparison(label: str, rel: str, path: Path, doc: dict[str, Any], problems: list[str]) -> Entry:
    entry = Entry(label, rel, path, "comparison", domain=_str(doc.get("domain")), problems=problems)
    a, b = doc.get("a") if isinstance(doc.get("a"), dict) else {}, doc.get("b") if isinstance(doc.get("b"), dict) else {}
    entry.model = " → ".join(_side_name(x) for x in (a, b))
    strict = (doc.get("results") or {}).get("strict") if isinstance(doc.get("results"), dict) else None
    if isinstance(strict, dict) and isinstance(strict.get("delta"), (int, float)):
        entry.facts["delta"] = float(strict["delta"])
    entry.facts["n_common"] = doc.get("n_common")
    entry.mtime = _mtime(path)
    return entry


def _experiment(label: str, rel: str, folder: Path, docs: DocCache) -> Entry:
    doc, problems = dict_or_error(docs.read(folder / "results.json"), "results.json")
    entry = Entry(label, rel, folder, "experiment", problems=problems)
    arms = doc.get("arms") if isinstance(doc.get("arms"), list) else []
    if doc and not arms:
        entry.problems.append("results.json lists no arms")
    entry.facts["name"] = _str(doc.get("name"))
    entry.facts["arms"] = len(arms)
    base = (doc.get("spec") or {}).get("base") if isinstance(doc.get("spec"), dict) else None
    if isinstance(base, dict):
        entry.domain, entry.model = _str(base.get("domain")), _str(base.get("model"))
    entry.mtime = _mtime(folder / "results.json", folder)
    return entry


def _short(path: Any, parts: int = 2) -> str | None:
    """The last folders of a path: enough to tell runs apart in a list, without the machine's layout."""
    if not isinstance(path, str) or not path:
        return None
    return "/".join(Path(path).parts[-parts:])


def _side_name(side: dict[str, Any]) -> str:
    model = side.get("model") or _short(side.get("predictions")) or _short(side.get("label")) or "?"
    return f"{model} + {_short(side['adapter'])}" if side.get("adapter") else str(model)


def _str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):  # a multi-pack domain mix: {gsm8k: 0.5, fund: 0.5}
        return ",".join(str(k) for k in value)
    return str(value)
