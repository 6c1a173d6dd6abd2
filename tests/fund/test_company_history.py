"""A grade history's 운용사 ratings (all dates in one numpy pass) equal the single-date rating of each date.

The reference is ``rate_companies`` (what ``fund companies`` runs on one report folder), called date by
date on that date's fund rows; the history's pass must give the same rows, bit for bit, on varied
universes: several 유형, companies with one fund, funds without a company, unrated / error / provisional
funds, missing or zero 설정원본, share classes (some spread over two companies), funds missing on some
dates, rows in a different order at each date, dated qualitative rows and every kind of company rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.companies.history import COLUMNS, company_history
from evaluator.domains.fund.companies.qualitative import Qualitative, QualitativeRow
from evaluator.domains.fund.companies.rating import rate_companies
from evaluator.domains.fund.companies.rule import CompanyRule, company_rule
from evaluator.domains.fund.companies.stacked import kahan_sums
from evaluator.domains.fund.rubric import default_rubric

TYPES = ("국내주식형", "해외주식형", "채권형", "혼합형", None)


def single_date_history(
    table: pd.DataFrame, members: pd.DataFrame, rule: CompanyRule, qualitative: Qualitative | None
) -> pd.DataFrame:
    """Each date rated on its own by ``rate_companies``, its rows in the table's order."""
    base = members.set_index("fund_code")
    parts: list[dict[str, Any]] = []
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
                "provisional": rows["provisional"].fillna(False).to_numpy(dtype=bool),
            }
        )
        own = None
        if qualitative is not None:
            applies = {c: r for c, r in qualitative.rows.items() if r.date is None or r.date <= day}
            own = dataclasses.replace(qualitative, rows=applies)
        r = rate_companies(frame, rule, own)
        rated = np.array([s == "ok" for s in r.status], dtype=bool)
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
    out = pd.DataFrame({c: np.concatenate([np.asarray(p[c], dtype=object) for p in parts]) for c in COLUMNS})
    for c in ("score", "quantitative_score", "qualitative_score", "top_percent", "aum_krw"):
        out[c] = out[c].astype(float)
    out["grade"] = pd.array(out["grade"].astype(float), dtype="Int64")
    out["funds_rated"] = out["funds_rated"].astype(int)
    return out


def universe(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(history table, fund → company map, dates) of a random universe."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    n_companies = int(rng.integers(1, 25))
    companies = [f"운용사{c:02d}" for c in range(n_companies)]
    codes = [f"KR5{i:09d}" for i in range(n)]
    company = np.array([companies[c] for c in rng.integers(0, n_companies, n)], dtype=object)
    company[rng.random(n) < 0.08] = None  # no 운용사 in META
    if n > 3:
        company[0] = "단일펀드운용"  # a company with one fund
    family = np.empty(n, dtype=object)
    i = 0
    while i < n:  # share-class portfolios of 1–5 classes; some with no 대표펀드코드
        k = int(rng.integers(1, 6))
        family[i : i + k] = None if rng.random() < 0.2 else f"P{i:05d}"
        i += k
    if n > 6:
        family[5] = family[6] = "P-shared"  # one portfolio code under two companies
        company[5], company[6] = companies[0], companies[-1]
    scale = 10.0 ** rng.uniform(7, 13, n)  # 설정원본 of very different sizes, so the sums round
    size = np.round(scale * rng.random(n), int(rng.integers(-3, 3)))
    size[rng.random(n) < 0.07] = np.nan
    size[rng.random(n) < 0.03] = 0.0
    members = pd.DataFrame(
        {"fund_code": codes, "company": company, "set_amount_krw": size, "portfolio_code": family}
    )
    days = sorted(
        {f"202{int(rng.integers(0, 5))}-{m:02d}-28" for m in rng.integers(1, 13, int(rng.integers(1, 9)))}
    )
    parts = []
    for day in days:
        here = rng.permutation(n)[: int(n * rng.uniform(0.6, 1.0)) or 1]  # funds missing, order shuffled
        m = len(here)
        status = rng.choice(["ok", "ok", "ok", "ok", "not_rated", "error"], m)
        score = rng.uniform(0, 100, m) * rng.choice([1.0, 1 / 3, 1e-7], m)
        score[rng.random(m) < 0.05] = np.nan
        parts.append(
            pd.DataFrame(
                {
                    "fund_code": [codes[j] for j in here],
                    "as_of": day,
                    "status": status,
                    "grade": pd.array(np.where(status == "ok", rng.integers(1, 6, m), -1), dtype="Int64"),
                    "score": score,
                    "type": [TYPES[t] for t in rng.integers(0, len(TYPES), m)],
                    "provisional": rng.random(m) < 0.1,
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    if rng.random() < 0.5:  # dates interleaved in the table, each date's rows still in their order
        table = table.iloc[rng.permutation(len(table))].sort_values("fund_code", kind="stable")
        table = table.iloc[np.argsort(rng.random(len(table)))].reset_index(drop=True)
    return table, members, days


def rules(seed: int) -> list[CompanyRule]:
    base = company_rule(default_rubric())
    rng = np.random.default_rng(seed)
    return [
        base,
        dataclasses.replace(base, min_funds=1),
        dataclasses.replace(base, min_funds=int(rng.integers(2, 6)), size_field="equal"),
        dataclasses.replace(base, require_qualitative=True),
        dataclasses.replace(base, quantitative_weight=100.0, qualitative_weight=0.0),
    ]


def qualitative_of(rule: CompanyRule, members: pd.DataFrame, days: list[str], seed: int) -> Qualitative:
    rng = np.random.default_rng(seed)
    names = sorted(members["company"].dropna().unique())
    rows = {}
    for k, name in enumerate(names):
        if rng.random() < 0.3:
            continue
        date = None if rng.random() < 0.4 else str(rng.choice([*days, "2019-01-01", "2030-01-01"]))
        scores = {p.id: float(rng.integers(1, 6)) for p in rule.pillars if rng.random() < 0.8}
        rows[name] = QualitativeRow(company=name, row=k + 2, date=date, analyst=None, scores=scores)
    return Qualitative(rows=rows, source={})


def assert_identical(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for c in ("score", "quantitative_score", "qualitative_score", "top_percent", "aum_krw"):
        a, b = got[c].to_numpy(dtype=float), want[c].to_numpy(dtype=float)
        assert np.array_equal(a.view(np.int64), b.view(np.int64)), c  # the same bits, NaN where NaN


@pytest.mark.parametrize("seed", range(12))
def test_history_company_rows_equal_rating_each_date_on_its_own(seed: int) -> None:
    table, members, days = universe(seed)
    for k, rule in enumerate(rules(seed)):
        for qual in (None, qualitative_of(rule, members, days, seed * 10 + k)):
            want = single_date_history(table, members, rule, qual)
            got = company_history(table, members, rule, qual)
            assert_identical(got, want)
    assert len(want) and (want["status"] == "ok").any()


def test_a_universe_without_companies_rates_none_at_every_date() -> None:
    table, members, _ = universe(3)
    members = members.assign(company=None)
    rule = company_rule(default_rubric())
    got = company_history(table, members, rule)
    assert got.empty and list(got.columns) == list(COLUMNS)
    assert_identical(got, single_date_history(table, members, rule, None))


def test_funds_missing_from_the_map_count_for_no_company() -> None:
    table, members, _ = universe(5)
    rule = dataclasses.replace(company_rule(default_rubric()), min_funds=1)
    part = members.iloc[: len(members) // 2]
    assert_identical(company_history(table, part, rule), single_date_history(table, part, rule, None))


def test_kahan_sums_add_as_pandas_does_where_a_plain_sum_rounds_differently() -> None:
    rng = np.random.default_rng(7)
    group = rng.integers(0, 40, 5000)
    values = rng.random(5000) * 10.0 ** rng.uniform(-4, 14, 5000)
    values[::97] = 1e16
    want = pd.Series(values).groupby(group).sum().reindex(range(40), fill_value=0.0).to_numpy()
    got = kahan_sums(group, values, 40)
    assert np.array_equal(got, want)
    assert not np.array_equal(np.bincount(group, values, minlength=40), want)  # the order of rounding matters
    assert np.array_equal(kahan_sums(np.array([0, 0, 0]), np.array([np.inf, 1.0, 2.0]), 1), [np.inf])
    assert np.array_equal(kahan_sums(np.zeros(0, dtype=int), np.zeros(0), 3), np.zeros(3))


def test_a_history_whose_meta_leaves_some_funds_without_a_company_rates_the_others() -> None:
    """META with blank 운용사 cells (pandas reads them as NaN, not None) once stopped the rating at the
    first date where such a fund was also left out; the history rates the other companies, as each date
    rated on its own does."""
    from evaluator.domains.fund.data.sample import sample_universe
    from evaluator.domains.fund.history.run import as_of_dates, parse_month, run_history

    u = sample_universe(funds=60, years=7, seed=11, realistic=True)
    names = u.meta["company"].astype(object).to_numpy().copy()
    names[::5] = None
    u.meta["company"] = names
    dates = as_of_dates(u, parse_month("2024-03", "--from"), parse_month("2025-06", "--to"), "Q")
    h = run_history(u, default_rubric(), dates)
    assert h.company_funds is not None and h.company_funds["company"].isna().sum() == 12
    assert h.companies is not None and (h.companies["status"] == "ok").any()
    rule = company_rule(default_rubric())
    assert_identical(h.companies, single_date_history(h.table, h.company_funds, rule, None))
