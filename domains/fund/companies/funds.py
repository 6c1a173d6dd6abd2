"""The funds a company rating reads: a ``fund evaluate`` report folder (its ``summary.json``, else each
report), with ``--meta`` overriding 설정원본, 운용사 and 대표펀드코드.

A folder written since reports carry ``company`` and ``set_amount_krw`` is read from ``summary.json``
alone (one file, fast); an older folder, or one whose summary does not mark provisional grades that its
reports may carry, is read report by report.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data import load_meta
from evaluator.domains.fund.types import DataError

COLUMNS = (
    "fund_code",
    "fund_name",
    "company",
    "type",
    "status",
    "grade",
    "score",
    "set_amount_krw",
    "portfolio_code",
    "provisional",
)


@dataclass
class Funds:
    """One row per fund of the batch, plus the batch's date and rubric."""

    frame: pd.DataFrame
    as_of: dt.date
    rubric: dict[str, Any]
    source: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{what} {path} is not readable JSON ({type(exc).__name__}: {exc})") from exc


def _summary_is_enough(summary: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
    if not entries:
        return True
    if not all("company" in e and "set_amount_krw" in e for e in entries):
        return False
    marks_provisional = any("provisional" in str(k) for k in summary)
    return not marks_provisional or all("provisional" in e for e in entries)


def _from_reports(folder: Path, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for e in entries:
        name = e.get("file")
        if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
            rows.append(dict(e))  # no report (write error): the summary's line is all there is
            continue
        doc = _read_json(folder / name, "report")
        rows.append({**e, **{k: doc.get(k) for k in COLUMNS if k in doc}})
    return rows


def _day(text: Any) -> dt.date | None:
    """The summary's ``as_of`` (written YYYY-MM-DD by ``fund evaluate``) as a date; None when it is not one."""
    try:
        return dt.date.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None


def read_funds(folder: str | os.PathLike[str]) -> Funds:
    """Every fund of a report folder; a clear :class:`DataError` when it is not one."""
    base = Path(folder)
    if not (base / "summary.json").is_file():
        raise DataError(f"{base} has no summary.json; give the --out folder of `evaluator fund evaluate`")
    summary = _read_json(base / "summary.json", "summary")
    entries = summary.get("funds") if isinstance(summary, dict) else None
    as_of = _day(summary.get("as_of")) if isinstance(summary, dict) else None
    if not isinstance(entries, list) or as_of is None:
        raise DataError(
            f"{base}/summary.json has no as_of or no funds list: it is not a `fund evaluate` summary"
        )
    fast = _summary_is_enough(summary, entries)
    rows = entries if fast else _from_reports(base, entries)
    text = ("fund_code", "fund_name", "company", "type", "status", "portfolio_code")
    columns = {c: [_clean(r.get(c)) for r in rows] if c in text else [r.get(c) for r in rows] for c in COLUMNS}
    frame = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in columns.items()}, columns=list(COLUMNS))
    notes = []
    if "set_amount_krw" not in (entries[0] if entries else {}) and not frame["set_amount_krw"].notna().any():
        notes.append("보고서에 설정원본(set_amount_krw)이 없습니다: --meta로 설정원본을 주어야 가중 평균을 낼 수 있습니다")
    frame["score"] = pd.to_numeric(frame["score"], errors="coerce").astype(float)
    frame["set_amount_krw"] = pd.to_numeric(frame["set_amount_krw"], errors="coerce").astype(float)
    frame["provisional"] = np.array([v is True for v in columns["provisional"]], dtype=bool)
    source = {"folder": str(base), "read_from": "summary.json" if fast else "reports"}
    rubric = summary.get("rubric") if isinstance(summary.get("rubric"), dict) else {}
    if isinstance(summary.get("grade_scale"), dict):  # the funds' grades are on it (★★★★★ best …)
        rubric = {**rubric, "grade_scale": summary["grade_scale"]}
    return Funds(frame=frame, as_of=as_of, rubric=dict(rubric), source=source, notes=notes)


def _clean(value: Any) -> str | None:
    """Stripped text, None when blank or missing."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    return text or None


def _text(values: pd.Series) -> pd.Series:
    """Stripped text per cell, None where blank or missing (vectorised: 15,000 funds × 6 columns)."""
    raw = values.astype(object)
    missing = raw.isna().to_numpy()
    text = raw.where(missing, raw.astype(str).str.strip()).astype(object)
    blank = missing | (text == "").to_numpy()
    return text.where(~blank, None)


def apply_meta(funds: Funds, meta_path: str | os.PathLike[str]) -> list[str]:
    """``--meta``: its 설정원본 (else 순자산), 운용사 and 대표펀드코드 replace the reports' values where it has them."""
    meta, warnings, info = load_meta(meta_path)
    frame = funds.frame
    codes = frame["fund_code"]
    known = codes.isin(meta.index)
    if "set_amount" in meta.columns or "net_assets" in meta.columns:
        amount = _numbers(meta, "set_amount", codes)
        if "net_assets" in meta.columns:
            amount = np.where(np.isfinite(amount), amount, _numbers(meta, "net_assets", codes))
        frame["set_amount_krw"] = np.where(
            np.isfinite(amount), amount, frame["set_amount_krw"].to_numpy(dtype=float)
        )
    for column, target in (("company", "company"), ("family_code", "portfolio_code")):
        if column in meta.columns:
            given = _text(meta[column].reindex(codes).reset_index(drop=True))
            frame[target] = given.where(given.notna(), frame[target].reset_index(drop=True)).to_numpy()
    funds.source["meta"] = {**info, "funds_matched": int(known.sum())}
    unmatched = int((~known).sum())
    if unmatched:
        warnings.append(
            f"META has no row for {unmatched} fund(s) of the reports; their reports' values are kept"
        )
    return warnings


def _numbers(meta: pd.DataFrame, column: str, codes: pd.Series) -> np.ndarray:
    """A money column of META (already in 원: ``load_meta`` applied the header's unit) per fund code."""
    if column not in meta.columns:
        return np.full(len(codes), np.nan)
    return pd.to_numeric(meta[column].reindex(codes.to_numpy()), errors="coerce").to_numpy(dtype=float)
