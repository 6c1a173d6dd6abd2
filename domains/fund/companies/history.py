"""Company grades at every as-of date of a grade history (``fund history``), and the fund → company map.

Each date is rated exactly as ``fund companies`` rates a report folder of that date: the history row's
status and score per fund, with 운용사, 설정원본 and 대표펀드코드 from META as it is today (the same
point-in-time caveat as 유형 in the backtest). A qualitative row applies from its date on (a row
without a date to every date), so a later assessment never grades an earlier month.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.companies.qualitative import Qualitative, read_qualitative
from evaluator.domains.fund.companies.rating import rate_companies
from evaluator.domains.fund.companies.rule import CompanyRule, company_rule

COLUMNS = (
    "as_of", "company", "status", "grade", "score", "quantitative_score", "qualitative_score", "top_percent",
    "funds_rated", "aum_krw",
)  # fmt: skip


def fund_companies(meta: pd.DataFrame, codes: Sequence[str]) -> pd.DataFrame:
    """Per fund: 운용사, 설정원본 (else 순자산) and portfolio, as the engine reads META."""

    def column(name: str) -> pd.Series:
        if name not in meta.columns:
            return pd.Series([None] * len(codes), index=list(codes), dtype=object)
        return meta[name].reindex(list(codes))

    def text(values: pd.Series) -> list[str | None]:
        return [None if v is None or (isinstance(v, float) and np.isnan(v)) or not str(v).strip() else str(v).strip()
                for v in values.tolist()]  # fmt: skip

    amount = pd.to_numeric(column("set_amount"), errors="coerce").to_numpy(dtype=float)
    net = pd.to_numeric(column("net_assets"), errors="coerce").to_numpy(dtype=float)
    return pd.DataFrame(
        {
            "fund_code": list(codes),
            "company": text(column("company")),
            "set_amount_krw": np.where(np.isfinite(amount), amount, net),
            "portfolio_code": text(column("family_code")),
        }
    )


def company_history_for(
    table: pd.DataFrame,
    meta: pd.DataFrame,
    rubric: Mapping[str, Any],
    qualitative: str | os.PathLike[str] | None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(company rows per date, fund → company map) for a fund history under ``rubric``'s company rule."""
    rule = company_rule(rubric)
    members = fund_companies(meta, sorted(table["fund_code"].astype(str).unique()))
    names = members["company"].dropna().unique().tolist()
    qual = read_qualitative(qualitative, rule, names) if qualitative is not None else None
    return company_history(table, members, rule, qual), members


def _as_of(qualitative: Qualitative | None, day: str) -> Qualitative | None:
    if qualitative is None:
        return None
    rows = {c: r for c, r in qualitative.rows.items() if r.date is None or r.date <= day}
    return dataclasses.replace(qualitative, rows=rows)


def company_history(
    table: pd.DataFrame, members: pd.DataFrame, rule: CompanyRule, qualitative: Qualitative | None = None
) -> pd.DataFrame:
    """One row per (as-of date, company) from the fund history ``table`` and the fund → company map."""
    base = members.set_index("fund_code")
    parts: list[dict[str, Any]] = []
    provisional = "provisional" in table.columns
    for day, rows in table.groupby(table["as_of"].astype(str), sort=True):
        codes = rows["fund_code"].astype(str).to_numpy()
        info = base.reindex(codes)
        frame = pd.DataFrame(
            {
                "fund_code": codes,
                "fund_name": None,
                "company": info["company"].to_numpy(dtype=object),
                "type": rows["type"].astype(object).to_numpy(),
                "status": rows["status"].astype(str).to_numpy(),
                "grade": rows["grade"].to_numpy(dtype=object),
                "score": rows["score"].to_numpy(dtype=float),
                "set_amount_krw": info["set_amount_krw"].to_numpy(dtype=float),
                "portfolio_code": info["portfolio_code"].to_numpy(dtype=object),
                "provisional": rows["provisional"].fillna(False).to_numpy(dtype=bool)
                if provisional
                else False,
            }
        )
        r = rate_companies(frame, rule, _as_of(qualitative, day))
        rated = np.array([s == "ok" for s in r.status])
        parts.append(
            {
                "as_of": [day] * len(r.companies),
                "company": r.companies,
                "status": r.status,
                "grade": np.where(rated, r.grade, np.nan),
                "score": r.score,
                "quantitative_score": r.quantitative,
                "qualitative_score": r.qualitative,
                "top_percent": np.where(rated, r.top_percent, np.nan),
                "funds_rated": r.funds_rated,
                "aum_krw": r.aum,
            }
        )
    if not parts:
        return pd.DataFrame(columns=list(COLUMNS))
    out = pd.DataFrame({c: np.concatenate([np.asarray(p[c], dtype=object) for p in parts]) for c in COLUMNS})
    for c in ("score", "quantitative_score", "qualitative_score", "top_percent", "aum_krw"):
        out[c] = out[c].astype(float)
    out["grade"] = pd.array(out["grade"].astype(float), dtype="Int64")
    out["funds_rated"] = out["funds_rated"].astype(int)
    return out
