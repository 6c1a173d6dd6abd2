"""Company grades at every as-of date of a grade history (``fund history``), and the fund → company map.

Each date is rated exactly as ``fund companies`` rates a report folder of that date: the history row's
status and score per fund, with 운용사, 설정원본 and 대표펀드코드 from META as it is today (the same
point-in-time caveat as 유형 in the backtest). A qualitative row applies from its date on (a row
without a date to every date), so a later assessment never grades an earlier month.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.companies.qualitative import Qualitative, read_qualitative
from evaluator.domains.fund.companies.rating import blend, grade_companies, qualitative_scores, sized_funds
from evaluator.domains.fund.companies.rule import CompanyRule, company_rule
from evaluator.domains.fund.companies.stacked import company_sums
from evaluator.domains.fund.types import NOT_RATED, OK

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


def company_history(
    table: pd.DataFrame, members: pd.DataFrame, rule: CompanyRule, qualitative: Qualitative | None = None
) -> pd.DataFrame:
    """One row per (as-of date, company) from the fund history ``table`` and the fund → company map.

    All dates in one pass (``stacked.py``); each date's rows equal :func:`rate_companies` on that date's
    funds (the rows of ``table`` in their order), as ``fund companies`` rates a report folder of that date.
    """
    if len(table) == 0:
        return pd.DataFrame(columns=list(COLUMNS))
    base = members.drop_duplicates("fund_code").set_index("fund_code")
    names = sorted({str(c) for c in base["company"].dropna()})
    company_of = np.r_[pd.Index(names).get_indexer(base["company"].to_numpy(dtype=object)), -1]
    day_codes, day_names = pd.factorize(table["as_of"].astype(str), sort=True)
    days = [str(d) for d in day_names]
    order = np.argsort(day_codes, kind="stable")  # date by date, each date's rows in the table's order
    day = day_codes[order]
    fund, funds = pd.factorize(table["fund_code"].astype(str))  # 15,000 codes looked up, not 900,000 rows
    member = base.index.get_indexer(np.asarray(funds, dtype=object))[fund[order]]
    member[member < 0] = len(base)  # a fund the map lacks: no company, no size (the last, extra entry)
    company = company_of[member]
    status = (table["status"].astype(str) == OK).to_numpy(dtype=bool, na_value=False)[order]
    score = table["score"].to_numpy(dtype=float, na_value=np.nan)[order]
    provisional = (
        table["provisional"].fillna(False).to_numpy(dtype=bool)[order]
        if "provisional" in table.columns
        else np.zeros(len(table), dtype=bool)
    )
    weighs = rule.size_field == "set_amount_krw"
    size = np.r_[base["set_amount_krw"].to_numpy(dtype=float), np.nan][member] if weighs else np.ones(len(table))
    counted = status & np.isfinite(score) & ~provisional & sized_funds(size, rule) & (company >= 0)
    # a fund's portfolio: its 대표펀드코드, else the fund itself; a pair of (company, portfolio) is one group
    portfolio = base["portfolio_code"].where(base["portfolio_code"].notna(), base.index.to_series())
    code = np.r_[pd.factorize(portfolio.to_numpy(dtype=object))[0], -1]
    pair = np.unique(company_of.astype(np.int64) * (len(base) + 1) + code, return_inverse=True)[1].ravel()
    sums = company_sums(
        day[counted], company[counted], pair[member][counted], score[counted], size[counted],
        len(days), len(names),
    )  # fmt: skip
    # the companies each date rates: those its funds name, counted or not
    named = company >= 0
    present = np.bincount(day[named] * len(names) + company[named], minlength=len(days) * len(names)) > 0
    cells = np.flatnonzero(present)
    at_day, at_company = np.divmod(cells, max(len(names), 1))
    quant = sums.quantitative[cells]
    n_ports = sums.portfolios[cells]
    qual = _qualitative(qualitative, rule, names, at_company, [days[d] for d in at_day.tolist()])
    final, rated, *_ = blend(quant, qual, n_ports, rule)
    top, grade = grade_companies(final, rated, at_day, rule)
    out = pd.DataFrame(
        {
            "as_of": np.asarray([days[d] for d in at_day.tolist()], dtype=object),
            "company": np.asarray([names[c] for c in at_company.tolist()], dtype=object),
            "status": np.where(rated, OK, NOT_RATED).astype(object),
            "grade": np.where(rated, grade, np.nan).astype(object),
            "score": np.where(rated, final, np.nan).astype(object),
            "quantitative_score": quant.astype(object),
            "qualitative_score": qual.astype(object),
            "top_percent": np.where(rated, top, np.nan).astype(object),
            "funds_rated": n_ports.astype(object),
            "aum_krw": (sums.size[cells] if weighs else np.full(len(cells), np.nan)).astype(object),
        }
    )
    for c in ("score", "quantitative_score", "qualitative_score", "top_percent", "aum_krw"):
        out[c] = out[c].astype(float)
    out["grade"] = pd.array(out["grade"].astype(float), dtype="Int64")
    out["funds_rated"] = out["funds_rated"].astype(int)
    return out


def _qualitative(
    qualitative: Qualitative | None, rule: CompanyRule, names: list[str], company: np.ndarray, days: list[str]
) -> np.ndarray:
    """Per (date, company) cell its qualitative score: the company's row applies from its date on."""
    if qualitative is None:
        return np.full(len(company), np.nan)
    scores = qualitative_scores(names, rule, qualitative)
    since = [qualitative.rows[n].date if n in qualitative.rows else None for n in names]
    applies = [since[c] is None or since[c] <= d for c, d in zip(company.tolist(), days, strict=True)]
    return np.where(np.asarray(applies, dtype=bool), scores[company], np.nan)
