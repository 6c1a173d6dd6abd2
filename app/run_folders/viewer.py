"""What each run page shows, as plain data: one ``RunViewer`` holds the catalog and the file caches.

Every builder returns a dict with a ``problems`` list: a missing or unreadable file is named there and the
rest of the page is still built from what is present.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from evaluator.app.run_folders.catalog import Catalog
from evaluator.app.run_folders.classify import Entry
from evaluator.app.run_folders.documents import DocCache, dict_or_error
from evaluator.app.run_folders.jsonl import IndexCache
from evaluator.app.run_folders.metrics import MetricsCache, chart_groups
from evaluator.app.run_folders.samples import Filter, JudgeIndex, extracted_answer, read_page, reward_names

JUDGE_LOG = "judge_evaluations.jsonl"


class RunViewer:
    def __init__(self, folders: list[str | os.PathLike[str]]) -> None:
        self.docs = DocCache()
        self.catalog = Catalog(folders, self.docs)
        self.indexes = IndexCache()
        self.metrics = MetricsCache(self.indexes)
        self.judges = JudgeIndex(self.indexes)

    def training(self, entry: Entry) -> dict[str, Any]:
        folder = entry.path
        problems = list(entry.problems)
        cfg_doc = self.docs.read(folder / "run_config.yaml")
        cfg, _ = dict_or_error(cfg_doc, "run_config.yaml")
        config_text = yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True) if cfg else None
        summary, more = dict_or_error(self.docs.read(folder / "run_summary.json"), "run_summary.json")
        if not (folder / "run_summary.json").exists():
            more = ["run_summary.json is missing (the run is still going, or stopped before its end)"]
        problems += [p for p in more if p not in problems]
        best: dict[str, Any] = {}
        if (folder / "best_adapter" / "best.json").exists():
            best, _ = dict_or_error(self.docs.read(folder / "best_adapter" / "best.json"), "best.json")
        table = self.metrics.get(folder / "metrics.jsonl")
        charts: list[dict[str, Any]] = []
        if table is not None:
            problems += table.bad_lines[:20] + table.partial
            if len(table.bad_lines) > 20:
                problems.append(f"… and {len(table.bad_lines) - 20} more unreadable metrics lines")
            charts = chart_groups(table)
        comp = self.indexes.get(folder / "completions.jsonl")
        if comp is None and entry.kind == "training":
            problems.append("completions.jsonl is missing (no completion was logged)")
        elif comp is not None:
            problems += comp.problems("completions.jsonl")
        held = table.best("eval/accuracy") if table is not None else None
        return {
            "entry": entry,
            "config": cfg,
            "config_text": config_text,
            "resolved": cfg.get("resolved") if isinstance(cfg.get("resolved"), dict) else {},
            "summary": summary,
            "best": best,
            "best_held_out": {"value": held[0], "step": held[1]} if held else None,
            "logged_rows": table.rows if table is not None else 0,
            "last": table.last if table is not None else {},
            "charts": charts,
            "completions": len(comp) if comp is not None else None,
            "judge_log": (folder / JUDGE_LOG).exists(),
            "problems": problems,
        }

    def completions(self, entry: Entry, flt: Filter, page: int, size: int) -> dict[str, Any]:
        folder = entry.path
        cfg, _ = dict_or_error(self.docs.read(folder / "run_config.yaml"), "run_config.yaml")
        resolved = cfg.get("resolved") if isinstance(cfg.get("resolved"), dict) else {}
        domain, style = cfg.get("domain"), resolved.get("style") or cfg.get("style")
        got = read_page(self.indexes, folder / "completions.jsonl", flt, page, size)
        if got is None:
            return {"entry": entry, "page": None, "items": [], "rewards": [],
                    "problems": ["completions.jsonl is missing (no completion was logged)"]}
        rows = [r.value if isinstance(r.value, dict) else {} for r in got.rows]
        texts = [str(v.get("completion") or "") for v in rows]
        judged = self.judges.judgements(folder / JUDGE_LOG, texts) if (folder / JUDGE_LOG).exists() else []
        items = []
        for k, (row, value) in enumerate(zip(got.rows, rows, strict=True)):
            judge = judged[k] if judged else None
            explanation = value.get("explanation") or value.get("judge_feedback")
            if "extracted" in value:
                known, extracted = True, value["extracted"]
            elif row.error:
                known, extracted = False, None
            else:
                known, extracted = extracted_answer(domain if isinstance(domain, str) else None, style, texts[k])
            items.append({
                "line": row.line, "error": row.error, "step": value.get("step"),
                "prompt": value.get("prompt"), "completion": value.get("completion"),
                "rewards": _numbers(value.get("rewards")),
                "advantage": value.get("advantage"),
                "extracted": extracted, "extracted_known": known,
                "explanation": explanation or (judge or {}).get("feedback"),
                "judge_score": (judge or {}).get("score"),
                "judge_error": (judge or {}).get("error"),
            })
        idx = self.indexes.get(folder / "completions.jsonl")
        return {"entry": entry, "page": got, "items": items, "problems": got.problems, "style": style,
                "rewards": reward_names(idx) if idx is not None else []}

    def evaluation(self, entry: Entry) -> dict[str, Any]:
        report_path = entry.path if entry.path.is_file() else entry.path / "report.json"
        report, problems = dict_or_error(self.docs.read(report_path), report_path.name)
        problems = list(dict.fromkeys(problems + entry.problems))
        samples = self._samples_path(entry, report)
        if samples is None or not samples.exists():
            problems.append("samples.jsonl is missing: the per-sample browser has nothing to show")
        metrics = report.get("metrics") if isinstance(report.get("metrics"), dict) else {}
        rows = _metric_rows(report, metrics)
        return {"entry": entry, "report": report, "metrics": rows, "problems": problems,
                "identity": report.get("identity") if isinstance(report.get("identity"), dict) else {},
                "timing": report.get("timing") if isinstance(report.get("timing"), dict) else {},
                "warnings": [str(w) for w in report.get("warnings") if w] if isinstance(report.get("warnings"), list) else [],
                "has_samples": samples is not None and samples.exists()}

    def _samples_path(self, entry: Entry, report: dict[str, Any]) -> Path | None:
        folder = entry.path.parent if entry.path.is_file() else entry.path
        name = report.get("samples_file")
        if isinstance(name, str) and name:
            candidate = Path(name).name  # only a file beside the report: a name cannot lead elsewhere
            if (folder / candidate).exists():
                return folder / candidate
        return folder / "samples.jsonl" if (folder / "samples.jsonl").exists() or not entry.path.is_file() else None

    def eval_samples(self, entry: Entry, flt: Filter, page: int, size: int) -> dict[str, Any]:
        report_path = entry.path if entry.path.is_file() else entry.path / "report.json"
        report, _ = dict_or_error(self.docs.read(report_path), report_path.name)
        path = self._samples_path(entry, report)
        got = read_page(self.indexes, path, flt, page, size) if path is not None else None
        if got is None:
            return {"entry": entry, "page": None, "items": [], "rewards": [],
                    "problems": ["samples.jsonl is missing: the per-sample browser has nothing to show"]}
        items = []
        for r in got.rows:
            value = r.value if isinstance(r.value, dict) else {}
            items.append({**value, "error_message": value.get("error"), "line": r.line, "error": r.error,
                          "scores": _numbers(value.get("scores")), "metrics": _numbers(value.get("metrics"))})
        idx = self.indexes.get(path)
        return {"entry": entry, "page": got, "items": items, "problems": got.problems,
                "rewards": reward_names(idx) if idx is not None else []}


def _metric_rows(report: dict[str, Any], metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Every declared metric with its CI; a version-1 report's strict/flexible accuracy and format rate."""
    rows = []
    for name, est in metrics.items():
        if isinstance(est, dict):
            rows.append({"name": name, "value": est.get("value"), "ci": _ci(est.get("ci95")), "n": est.get("n"),
                         "headline": bool(est.get("headline")), "higher_is_better": est.get("higher_is_better", True),
                         "description": est.get("description")})
    acc = report.get("accuracy") if isinstance(report.get("accuracy"), dict) else {}
    for mode in ("strict", "flexible"):
        est = acc.get(mode)
        if isinstance(est, dict):
            rows.append({"name": f"accuracy ({mode} extraction)", "value": est.get("value"), "ci": _ci(est.get("ci95")),
                         "n": est.get("n"), "headline": False, "higher_is_better": True, "description": None})
    rows += _sampling_rows(report)
    fmt = report.get("format_rate")
    if isinstance(fmt, dict):
        rows.append({"name": "format compliance", "value": fmt.get("value"), "ci": _ci(fmt.get("ci95")),
                     "n": fmt.get("n"), "headline": False, "higher_is_better": True, "description": None})
    return rows


def _sampling_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """pass@k and maj@k (reports drawn with ``--samples K``), strict extraction, with their CIs."""
    rows: list[dict[str, Any]] = []
    passk, majk = report.get("pass_at_k"), report.get("maj_at_k")
    if isinstance(passk, dict) and isinstance(passk.get("strict"), dict):
        for k, est in passk["strict"].items():
            if isinstance(est, dict):
                rows.append({"name": f"pass@{k} (strict)", "value": est.get("value"), "ci": _ci(est.get("ci95")),
                             "n": est.get("n"), "headline": False, "higher_is_better": True, "description": None})
    if isinstance(majk, dict) and isinstance(majk.get("strict"), dict):
        est = majk["strict"]
        rows.append({"name": f"maj@{majk.get('k')} (strict)", "value": est.get("value"), "ci": _ci(est.get("ci95")),
                     "n": est.get("n"), "headline": False, "higher_is_better": True, "description": None})
    return rows


def _numbers(value: Any) -> dict[str, Any]:
    """A name → score mapping as written, or empty when the line holds something else there."""
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _ci(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return float(value[0]), float(value[1])
    return None

