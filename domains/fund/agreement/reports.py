"""Reading a ``fund evaluate`` batch for the agreement: grades from ``summary.json``, details from reports.

``summary.json`` is the batch's index (every fund with its status, grade, 유형 and, after ``--model``, the
model's grade), so it is the one file that must be sound. The per-fund ``<code>.json`` reports are read
only for the funds shown in the disagreement lists (their metrics and Korean summary); a damaged report
costs that fund its details, never the batch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.reports import report_schema, scale_problems, summary_schema
from evaluator.domains.fund.types import DataError
from evaluator.methodology.rubric import PERIODS

METRIC_KEYS = ("annualized_return", "annualized_volatility", "sharpe", "max_drawdown", "information_ratio")


@dataclass(frozen=True)
class EngineFund:
    """One fund of the batch as the agreement sees it."""

    fund_code: str
    fund_name: str | None
    type: str | None
    status: str
    grade: int | None
    score: float | None
    peer_percentile: float | None
    file: str | None
    model_grade: int | None


@dataclass
class Batch:
    folder: Path
    as_of: str
    rubric: dict[str, str]
    funds: dict[str, EngineFund]
    model: str | None

    @property
    def has_model(self) -> bool:
        return self.model is not None


def read_batch(folder: str | Path) -> Batch:
    """The batch in ``folder`` (written by ``evaluator fund evaluate``); DataError when it is not one."""
    root = Path(folder)
    path = root / "summary.json"
    if not root.is_dir():
        raise DataError(f"reports folder {root} does not exist")
    if not path.is_file():
        raise DataError(f"{root} has no summary.json; give the --out folder of `evaluator fund evaluate`")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not readable JSON ({exc})") from exc
    scale = {"grade_scale": summary["grade_scale"]} if isinstance(summary, dict) and summary.get("grade_scale") else {}
    problems = schema_problems(summary, summary_schema()) or scale_problems(summary, scale)
    if problems:
        raise DataError(f"{path} is not a fund evaluation summary: " + "; ".join(problems[:3]))
    block = summary.get("model_evaluation")
    funds: dict[str, EngineFund] = {}
    for line in summary["funds"]:
        funds[line["fund_code"]] = EngineFund(
            fund_code=line["fund_code"],
            fund_name=line["fund_name"],
            type=line["type"],
            # a provisional grade (가등급) ranks on another window: it is kept out of the agreement statistics
            status="provisional" if line.get("provisional") else line["status"],
            grade=line["grade"] if line["status"] == "ok" and not line.get("provisional") else None,
            score=line["score"],
            peer_percentile=line["peer_percentile"],
            file=line["file"],
            model_grade=line.get("model_grade"),
        )
    return Batch(
        folder=root,
        as_of=summary["as_of"],
        rubric=dict(summary["rubric"]),
        funds=funds,
        model=block["model"] if block else None,
    )


def main_window(report: dict[str, Any]) -> str | None:
    """The window a summary quotes: the largest period weight, else the longest window with numbers."""
    weights = report.get("period_weights") or {}
    if weights:
        return max(weights, key=lambda p: (weights[p], PERIODS.get(p, 0)))
    with_numbers = [p for p in PERIODS if (report.get("metrics") or {}).get(p)]
    return with_numbers[-1] if with_numbers else None


def fund_details(batch: Batch, fund: EngineFund) -> dict[str, Any]:
    """Metrics summary of one fund from its report: main window's headline metrics and ``summary_ko``."""
    if not fund.file:
        return {
            "metrics": None,
            "summary_ko": None,
            "detail_error": "no report file was written for this fund",
        }
    path = batch.folder / Path(fund.file).name
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {"metrics": None, "summary_ko": None, "detail_error": f"{path.name} is not readable ({exc})"}
    problems = schema_problems(report, report_schema())
    if problems or report.get("fund_code") != fund.fund_code:
        why = problems[0] if problems else f"it is the report of {report.get('fund_code')!r}"
        return {"metrics": None, "summary_ko": None, "detail_error": f"{path.name} is not valid: {why}"}
    window = main_window(report)
    values = (report["metrics"].get(window) or {}) if window else {}
    metrics = {"window": window, **{k: values.get(k) for k in METRIC_KEYS}} if values else None
    return {"metrics": metrics, "summary_ko": report["summary_ko"]}
