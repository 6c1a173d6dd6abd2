"""Rating companies: the quantitative score from their funds, the blend with the pillars, the grades.

Conventions (also in ``domains/fund/README.md``):

* A fund counts when it is graded ``ok`` with a score, its grade is not provisional (가등급), it names its
  운용사, and (under ``size_field: set_amount_krw``) its 설정원본 is known and positive.
* Share classes of one portfolio (``portfolio_code``, else the fund itself) count once: the portfolio
  weighs the sum of its classes' 설정원본 and scores the plain mean of its classes' scores.
* Quantitative score = Σ size_p · score_p / Σ size_p over the company's portfolios (``equal``: their mean);
  so each class weighs (size_p / Σ size) / k_p. A company needs ``min_funds`` portfolios, else ``not_rated``.
* Qualitative score = the pillar weights over the pillars scored, each ``(s − 1) · 25``. Final score =
  (w_quant · quantitative + w_qual · qualitative) / 100 when the company has a row; without one the
  quantitative score alone (said in ``reasons``), or ``not_rated`` when the rule requires the pillars.
* Grades: the fund scorer's own ``top_percent`` (top percent = 100 · rank / count, ties share the best
  rank) and ``assign_grades`` over all rated companies, with the rule's bands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.companies.qualitative import Qualitative
from evaluator.domains.fund.companies.rule import CompanyRule
from evaluator.domains.fund.engine import assign_grades, top_percent
from evaluator.domains.fund.types import NOT_RATED, OK


@dataclass
class Ratings:
    """Per company (sorted by name) the arrays, plus each counted fund's weight (NaN for the others)."""

    companies: list[str]
    quantitative: np.ndarray
    qualitative: np.ndarray
    score: np.ndarray
    top_percent: np.ndarray
    grade: np.ndarray
    funds_rated: np.ndarray
    classes_rated: np.ndarray
    aum: np.ndarray
    status: list[str]
    reasons: list[list[str]]
    fund_weight: np.ndarray
    excluded: list[str | None]
    _types: tuple[pd.DataFrame, pd.DataFrame] = field(repr=False)

    @cached_property
    def by_type(self) -> dict[str, list[dict[str, Any]]]:
        """Per company its 유형 rows (see :func:`_by_type`), worked out when a report asks: a grade history
        rates every company at every date and reads none of them."""
        return _by_type(*self._types)


def sized_funds(size: np.ndarray, rule: CompanyRule) -> np.ndarray:
    """Which funds have the size the rule weighs by (a known, positive 설정원본 under ``set_amount_krw``)."""
    if rule.size_field != "set_amount_krw":
        return np.ones(len(size), dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.isfinite(size) & (size > 0)


def _exclusions(f: pd.DataFrame, rule: CompanyRule) -> tuple[np.ndarray, list[str | None]]:
    """Which funds count, and the Korean reason each other fund of a company does not."""
    ok = (f["status"] == OK).to_numpy() & np.isfinite(f["score"].to_numpy(dtype=float))
    provisional = f["provisional"].to_numpy(dtype=bool)
    sized = sized_funds(f["set_amount_krw"].to_numpy(dtype=float), rule)
    counted = ok & ~provisional & sized & f["company"].notna().to_numpy()
    why: list[str | None] = [None] * len(f)
    status = f["status"].tolist()
    for i in np.flatnonzero(~counted).tolist():
        if not ok[i]:
            why[i] = (
                "등급 미부여(평가 제외)"
                if status[i] == NOT_RATED
                else "등급 미부여(데이터 오류)"
                if status[i] == "error"
                else "등급 미부여"
            )
        elif provisional[i]:
            why[i] = "가등급(잠정 등급)이라 제외"
        elif not sized[i]:
            why[i] = "설정원본 정보가 없어 가중치를 정할 수 없음"
    return counted, why


def rate_companies(funds: pd.DataFrame, rule: CompanyRule, qualitative: Qualitative | None = None) -> Ratings:
    """Score, blend and grade every company named by a fund of ``funds`` (see the module notes)."""
    f = funds.reset_index(drop=True)
    counted, excluded = _exclusions(f, rule)
    size = (
        f["set_amount_krw"].to_numpy(dtype=float) if rule.size_field == "set_amount_krw" else np.ones(len(f))
    )
    portfolio = f["portfolio_code"].where(f["portfolio_code"].notna(), f["fund_code"])
    c = pd.DataFrame(
        {"company": f["company"], "portfolio": portfolio, "size": size, "score": f["score"].astype(float)}
    )[counted]
    port = c.groupby(["company", "portfolio"], sort=False).agg(
        size=("size", "sum"), score=("score", "mean"), k=("score", "size")
    )
    comp_size = port.groupby(level=0)["size"].transform("sum")
    port["w"] = port["size"] / comp_size
    by = port.groupby(level=0)
    quant = (port["w"] * port["score"]).groupby(level=0).sum()
    names = sorted({str(x) for x in f["company"].dropna()})
    quant_arr = quant.reindex(names).to_numpy(dtype=float)
    n_ports = by.size().reindex(names).fillna(0).to_numpy(dtype=int)
    n_classes = by["k"].sum().reindex(names).fillna(0).to_numpy(dtype=int)
    aum = (
        by["size"].sum().reindex(names).to_numpy(dtype=float)
        if rule.size_field == "set_amount_krw"
        else np.full(len(names), np.nan)
    )
    weight = np.full(len(f), np.nan)
    key = pd.MultiIndex.from_arrays([c["company"], c["portfolio"]])
    weight[np.flatnonzero(counted)] = (port["w"] / port["k"]).reindex(key).to_numpy(dtype=float)
    qual = qualitative_scores(names, rule, qualitative)
    score, status, reasons = _blend(names, quant_arr, qual, n_ports, rule, qualitative is not None)
    rated = np.array([s == OK for s in status], dtype=bool)
    top, grade = grade_companies(score, rated, np.zeros(len(names), dtype=int), rule)
    _explain_exclusions(f, excluded, names, reasons)
    return Ratings(
        companies=names,
        quantitative=quant_arr,
        qualitative=qual,
        score=np.where(rated, score, np.nan),
        top_percent=top,
        grade=np.where(rated, grade, -1),
        funds_rated=n_ports,
        classes_rated=n_classes,
        aum=aum,
        status=status,
        reasons=reasons,
        fund_weight=weight,
        excluded=excluded,
        _types=(c.assign(type=f["type"][counted]), port),
    )


def qualitative_scores(names: list[str], rule: CompanyRule, qualitative: Qualitative | None) -> np.ndarray:
    """Per company its qualitative score from the pillars it was scored on (NaN without a row)."""
    out = np.full(len(names), np.nan)
    if qualitative is None:
        return out
    for i, name in enumerate(names):
        row = qualitative.rows.get(name)
        if row is None:
            continue
        pairs = [((row.scores[p.id] - 1.0) * 25.0, p.weight) for p in rule.pillars if p.id in row.scores]
        if pairs:
            values, weights = np.array(pairs).T
            out[i] = float((values * weights).sum() / weights.sum())
    return out


def blend(
    quant: np.ndarray, qual: np.ndarray, n_ports: np.ndarray, rule: CompanyRule
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(final score, rated, too few portfolios, pillars required but missing, blended) per company.

    Rated companies with a qualitative score blend it in (``blended``); the other rated ones keep the
    quantitative score.
    """
    wq, wl = rule.quantitative_weight / 100.0, rule.qualitative_weight / 100.0
    few = n_ports < rule.min_funds
    mixed = ~few & np.isfinite(qual) & (wl > 0)
    needs = ~few & ~mixed & rule.require_qualitative
    alone = ~few & ~mixed & ~needs
    score = np.full(len(quant), np.nan)
    score[mixed] = wq * quant[mixed] + wl * qual[mixed]
    score[alone] = quant[alone]
    return score, mixed | alone, few, needs, mixed


def grade_companies(
    score: np.ndarray, rated: np.ndarray, groups: np.ndarray, rule: CompanyRule
) -> tuple[np.ndarray, np.ndarray]:
    """(top percent, grade) of each rated company among the rated ones of its group (an as-of date)."""
    top, _ = top_percent(score, groups, rated)
    return top, assign_grades(top, {"grade_bands": list(rule.bands)})


def _blend(
    names: list[str],
    quant: np.ndarray,
    qual: np.ndarray,
    n_ports: np.ndarray,
    rule: CompanyRule,
    has_file: bool,
) -> tuple[np.ndarray, list[str], list[list[str]]]:
    score, rated, few, needs, blended = blend(quant, qual, n_ports, rule)
    quant_only = rated & ~blended & (rule.qualitative_weight / 100.0 > 0)
    status: list[str] = []
    reasons: list[list[str]] = []
    for i in range(len(names)):
        why: list[str] = []
        if few[i]:
            why.append(
                f"평가 가능한 펀드가 {n_ports[i]}개(종류형 클래스는 한 펀드로 계산)로 최소 {rule.min_funds}개에 못 미칩니다"
            )
        elif needs[i]:
            why.append("방법론이 정성평가를 요구하지만 이 운용사의 정성평가 행이 없습니다")
        elif quant_only[i]:
            why.append(
                "정성평가 행이 없어 계량 점수만으로 평가했습니다"
                if has_file
                else "정성평가 파일이 없어 계량 점수만으로 평가했습니다"
            )
        status.append(OK if rated[i] else NOT_RATED)
        reasons.append(why)
    return score, status, reasons


def _explain_exclusions(
    f: pd.DataFrame, excluded: list[str | None], names: list[str], reasons: list[list[str]]
) -> None:
    """Add to each company's reasons how many of its funds were left out and why (counted per reason)."""
    at = {n: i for i, n in enumerate(names)}
    tally: dict[tuple[str, str], int] = {}
    for company, why in zip(f["company"].tolist(), excluded, strict=True):
        if why is not None and pd.notna(company):  # no company: NaN as well as None (pandas' str columns)
            tally[(str(company), why)] = tally.get((str(company), why), 0) + 1
    for (company, why), n in sorted(tally.items()):
        reasons[at[company]].append(f"제외된 펀드 {n}개: {why}")


def _by_type(c: pd.DataFrame, port: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Per company and 유형: portfolios, size, size-weighted score, and the 유형's mean portfolio score.

    A portfolio's 유형 is its first class's (classes of one portfolio share their 유형)."""
    first = c.drop_duplicates(["company", "portfolio"]).set_index(["company", "portfolio"])["type"]
    p = pd.DataFrame(
        {
            "company": port.index.get_level_values(0),
            "type": first.reindex(port.index).fillna("(유형 없음)").to_numpy(),
            "size": port["size"].to_numpy(),
            "score": port["score"].to_numpy(),
        }
    )
    type_mean = p.groupby("type")["score"].mean()
    p["ws"] = p["size"] * p["score"]
    g = p.groupby(["company", "type"], sort=True).agg(funds=("score", "size"), aum=("size", "sum"), ws=("ws", "sum"))
    companies = g.index.get_level_values(0).tolist()
    types = g.index.get_level_values(1).tolist()
    score = (g["ws"] / g["aum"]).tolist()
    mean = type_mean.reindex(types).tolist()
    out: dict[str, list[dict[str, Any]]] = {}
    for company, fund_type, n, aum, s, m in zip(
        companies, types, g["funds"].tolist(), g["aum"].tolist(), score, mean, strict=True
    ):
        out.setdefault(str(company), []).append(
            {"type": str(fund_type), "funds": int(n), "aum_krw": float(aum), "score": float(s),
             "type_mean_score": float(m), "difference": float(s) - float(m)}
        )  # fmt: skip
    return out
