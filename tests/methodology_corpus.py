"""A corpus of firm-style methodology PDFs, built with reportlab at test time (no binary fixtures).

Each document differs in font, header words, units, merged cells, split tables, English/Korean mix and
prose-only rules, the way documents written by different firms' staff do. ``CORPUS`` pairs each builder
with the rubric it must read as (effective metric weights, period weights, band shares, eligibility) or
with the words its honest refusal must contain. Used by the tests and by ``benchmarks/methodology_ingest.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from methodology_docs import (
    english_fractions,
    hwp_letter_spaced,
    incell_lists,
    kofr_points_merged,
    percent_split_tables,
    prose_only,
    quant_qual_points,
    refused_no_weights,
    refused_two_tables,
    stated_total_50,
)
from methodology_docs_more import (
    fractions_within_points,
    hwp_char_spacing,
    months_and_definitions,
    refused_shared_weight,
    refused_star_ratings,
    refused_unread_qualitative,
    three_level_table,
)
from methodology_docs_rules import (
    association_types_prose,
    english_korean_edition,
    english_korean_spaced,
    english_prose_stars,
    provisional_prose,
    provisional_table_spaced,
    refused_mixed_cell_two_metrics,
    refused_provisional_no_window,
    refused_type_without_weights,
    seven_grades_prose,
    star_table,
    weights_per_type_categories,
    weights_per_type_columns,
    weights_per_type_tables,
)
from methodology_pdfdoc import EOK, Doc, spaced

__all__ = ["CORPUS", "Case", "Doc", "mismatches", "percent_split_tables", "spaced", "summary"]


@dataclass
class Case:
    name: str
    build: Callable[[], bytes]
    effective: dict[str, float] = field(default_factory=dict)
    qualitative_weight: float | None = None
    periods: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    bands: list[float] = field(default_factory=list)
    eligibility: dict[str, Any] = field(default_factory=dict)
    peer_groups: list[str] | None = field(default_factory=list)
    refusal: tuple[str, ...] = ()
    provisional: dict[str, Any] | None = None
    grade_scale: dict[str, Any] | None = None
    by_type: dict[str, dict[str, float]] | None = None
    """Effective metric weights per 유형, when they differ by 유형."""


STANDARD_BANDS = [10.0, 22.5, 35.0, 22.5, 10.0]
RANGE_BANDS = [10.0, 20.0, 40.0, 20.0, 10.0]
_RULES_ELIGIBILITY = {"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10}
_RULES_WEIGHTS = {"annualized_return": 0.4, "sharpe": 0.6}


def _rules_case(name: str, build: Callable[[], bytes], groups: list[str] | None, **kw: Any) -> Case:
    by_type = kw.get("by_type")
    effective = kw.pop("effective", _RULES_WEIGHTS) or next(iter(by_type.values()))
    return Case(
        name, build, effective=effective, periods=[(3, {"3y": 100})], bands=kw.pop("bands", STANDARD_BANDS),
        eligibility=_RULES_ELIGIBILITY, peer_groups=groups, **kw,
    )


RULE_CASES = [
    _rules_case("association_types_prose", association_types_prose, None),
    _rules_case(
        "provisional_prose", provisional_prose, ["국내주식형", "채권형", "혼합형"],
        provisional={"min_history_years": 1, "max_history_years": 3, "window": "1y"},
    ),
    _rules_case(
        "provisional_table_spaced", provisional_table_spaced, ["국내주식형", "채권형"],
        provisional={"min_history_years": 1, "max_history_years": 3, "window": "1y", "label_prefix": "잠정"},
    ),
    _rules_case(
        "star_table", star_table, ["국내주식형", "채권형", "혼합형"],
        grade_scale={"grades": 5, "best": "high", "style": "stars"},
    ),
    _rules_case(
        "seven_grades_prose", seven_grades_prose, ["국내주식형", "채권형"], bands=[5.0, 10, 15, 40, 15, 10, 5],
        grade_scale={"grades": 7, "best": "low", "style": "number"},
    ),
    _rules_case(
        "weights_per_type_columns", weights_per_type_columns, ["주식형", "채권형"],
        effective=None,
        by_type={
            "주식형": {"annualized_return": 0.4, "sharpe": 0.3, "annualized_volatility": 0.15, "max_drawdown": 0.15},
            "채권형": {"annualized_return": 0.2, "sharpe": 0.2, "annualized_volatility": 0.35, "max_drawdown": 0.25},
        },
    ),
    _rules_case(
        "weights_per_type_categories", weights_per_type_categories, ["주식형", "채권형"],
        effective=None,
        by_type={
            "주식형": {"annualized_return": 0.5, "annualized_volatility": 0.25, "max_drawdown": 0.25},
            "채권형": {"annualized_return": 0.3, "annualized_volatility": 0.4, "max_drawdown": 0.3},
        },
    ),
    _rules_case(
        "weights_per_type_tables", weights_per_type_tables, ["주식형", "채권형"],
        effective=None,
        by_type={"주식형": {"annualized_return": 0.6, "sharpe": 0.4},
                 "채권형": {"annualized_return": 0.3, "annualized_volatility": 0.7}},
    ),
    Case(
        "english_korean_edition", english_korean_edition,
        effective={"annualized_return": 0.4, "sharpe": 0.3, "sortino": 0.3},
        periods=[(3, {"3y": 100}), (5, {"3y": 50, "5y": 50}), (10, {"3y": 30, "5y": 30, "10y": 40})],
        bands=STANDARD_BANDS, peer_groups=["국내주식형", "해외주식형", "채권형"],
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 5},
    ),
    Case(
        "english_prose_stars", english_prose_stars,
        effective={"annualized_return": 0.3, "sharpe": 0.4, "max_drawdown": 0.3}, periods=[(3, {"3y": 100})],
        bands=STANDARD_BANDS, peer_groups=None,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 50 * EOK, "min_peer_group_size": 8},
        provisional={"min_history_years": 1, "max_history_years": 3, "window": "1y"},
        grade_scale={"grades": 5, "best": "high", "style": "stars"},
    ),
    Case(
        "english_korean_spaced", english_korean_spaced,
        effective={"sharpe": 0.5, "max_drawdown": 0.5}, periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60})],
        bands=STANDARD_BANDS, peer_groups=["주식형", "채권형"],
        eligibility={"min_history_years": 3, "min_set_amount_krw": 50 * EOK, "min_peer_group_size": 6},
    ),
    Case(
        "refused_mixed_cell_two_metrics", refused_mixed_cell_two_metrics,
        refusal=("'Sharpe ratio 표준편차' names two different metrics", "annualized_volatility and sharpe"),
    ),
    Case(
        "refused_type_without_weights", refused_type_without_weights,
        refusal=("[missing] criteria_by_type", "none are given for 혼합형"),
    ),
    Case(
        "refused_provisional_no_window", refused_provisional_no_window,
        refusal=("[missing] provisional", "names no window", "--fill"),
    ),
]

CORPUS: list[Case] = [
    Case(
        "kofr_points_merged", kofr_points_merged,
        effective={"annualized_return": 0.25, "sharpe": 0.20, "sortino": 0.15, "mrar": 0.10,
                   "annualized_volatility": 0.15, "max_drawdown": 0.15},
        periods=[(3, {"3y": 100}), (5, {"3y": 50, "5y": 50}), (10, {"3y": 30, "5y": 30, "10y": 40})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "해외주식형", "국내채권형", "혼합형"],
    ),
    Case(
        "percent_split_tables", percent_split_tables,
        effective={"annualized_return": 0.30, "sharpe": 0.16, "sortino": 0.12, "mrar": 0.12,
                   "annualized_volatility": 0.15, "max_drawdown": 0.15},
        periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60}), (10, {"3y": 20, "5y": 30, "10y": 50})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 50 * EOK, "min_peer_group_size": 6,
                     "overrides": {"채권형": {"min_set_amount_krw": 300 * EOK}}},
        peer_groups=["주식형", "채권형", "혼합형"],
    ),
    Case(
        "english_fractions", english_fractions,
        effective={"annualized_return": 0.2, "sharpe": 0.3, "information_ratio": 0.2, "tracking_error": 0.1,
                   "max_drawdown": 0.2},
        periods=[(3, {"3y": 100})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 10_000_000_000, "min_peer_group_size": 8},
        peer_groups=["국내주식형", "해외주식형", "채권형"],
    ),
    Case(
        "incell_lists", incell_lists,
        effective={"sharpe": 0.20, "sortino": 0.12, "calmar": 0.08, "annualized_return": 0.30,
                   "annualized_volatility": 0.15, "max_drawdown": 0.15},
        periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 15_000 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "국내채권형", "해외주식형"],
    ),
    Case(
        "quant_qual_points", quant_qual_points,
        effective={"annualized_return": 0.375, "sharpe": 0.375, "annualized_volatility": 0.25},
        qualitative_weight=20.0,
        periods=[(1, {"1y": 100}), (3, {"1y": 30, "3y": 70})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 1, "min_set_amount_krw": 30 * EOK, "min_peer_group_size": 5},
        peer_groups=["국내주식형", "해외주식형", "혼합형"],
    ),
    Case(
        "prose_only", prose_only,
        effective={"annualized_return": 0.3, "sharpe": 0.4, "max_drawdown": 0.3},
        periods=[(2, {"1y": 100}), (3, {"1y": 40, "3y": 60})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 2, "min_set_amount_krw": 200 * EOK, "min_peer_group_size": 7,
                     "overrides": {"혼합형": {"min_set_amount_krw": 100 * EOK}}},
        peer_groups=["주식형", "채권형", "혼합형"],
    ),
    Case(
        "hwp_letter_spaced", hwp_letter_spaced,
        effective={"annualized_return": 0.2, "sharpe": 0.3, "information_ratio": 0.2, "annualized_volatility": 0.3},
        periods=[(3, {"3y": 100})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 50 * EOK, "min_peer_group_size": 6},
        peer_groups=["국내주식형", "해외주식형", "채권형"],
    ),
    Case(
        "stated_total_50", stated_total_50,
        effective={"information_ratio": 0.4, "jensen_alpha": 0.2, "tracking_error": 0.2, "calmar": 0.2},
        periods=[(3, {"3y": 100})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 200 * EOK, "min_peer_group_size": 11},
        peer_groups=["해외주식형", "해외채권형", "글로벌자산배분형"],
    ),
    Case(
        "months_and_definitions", months_and_definitions,
        effective={"annualized_return": 0.3, "sharpe": 0.3, "sortino": 0.2, "max_drawdown": 0.2},
        periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60}), (10, {"3y": 20, "5y": 30, "10y": 50})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 200 * EOK, "min_peer_group_size": 11},
        peer_groups=["국내주식일반형", "국내주식인덱스형", "국내채권형", "해외주식형"],
    ),
    Case(
        "three_level_table", three_level_table,
        effective={"annualized_return": 2 / 7, "sharpe": 2 / 7, "jensen_alpha": 1 / 7, "max_drawdown": 2 / 7},
        qualitative_weight=30.0,
        periods=[(3, {"3y": 100})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "채권형", "혼합형"],
    ),
    Case(
        "fractions_within_points", fractions_within_points,
        effective={"annualized_return": 0.4, "sharpe": 0.3, "sortino": 0.3},
        periods=[(3, {"3y": 100})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "채권형", "혼합형"],
    ),
    Case(
        "hwp_char_spacing", hwp_char_spacing,
        effective={"sharpe": 0.4, "sortino": 0.3, "calmar": 0.3},
        periods=[(2, {"1y": 100}), (3, {"1y": 50, "3y": 50})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 2, "min_set_amount_krw": 1_000_000_000_000, "min_peer_group_size": 20},
        peer_groups=["국내주식형", "해외주식형", "채권혼합형"],
    ),
    Case("refused_no_weights", refused_no_weights, refusal=("have no weights", "ingest does not guess")),
    Case(
        "refused_shared_weight", refused_shared_weight,
        refusal=("lists 샤프지수, 소르티노 without weights", "does not split"),
    ),
    Case(
        "star_ratings_prose", refused_star_ratings,
        effective={"mrar": 1.0}, periods=[(3, {"3y": 100})], bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "채권형", "혼합형"], grade_scale={"grades": 5, "best": "high", "style": "stars"},
    ),
    *RULE_CASES,
    Case(
        "refused_unread_qualitative", refused_unread_qualitative,
        refusal=("[missing] qualitative", "(정성 평가항목 | 배점) looks like qualitative", "--fill"),
    ),
    Case(
        "refused_two_tables", refused_two_tables,
        refusal=("two candidate criteria tables that disagree", "table 1 on p.1", "table 2 on p.1"),
    ),
]


def _effective(criteria: list[dict[str, Any]]) -> dict[str, float]:
    effective: dict[str, float] = {}
    for c in criteria:
        for m in c["metrics"]:
            effective[m["metric"]] = effective.get(m["metric"], 0.0) + c["weight"] / 100 * m["weight"] / 100
    return effective


def summary(rubric: dict[str, Any]) -> dict[str, Any]:
    """What a case checks: effective metric weights (share of the quantitative score), periods, bands, eligibility."""
    effective = _effective(rubric["criteria"])
    qual = rubric.get("qualitative")
    return {
        "effective": effective,
        "qualitative_weight": qual["weight"] if qual else None,
        "periods": [(r["min_history_years"], r["weights"]) for r in rubric["period_weights"]],
        "bands": [b["share"] for b in rubric["grade_bands"]],
        "eligibility": rubric["eligibility"],
        "peer_groups": rubric.get("peer_groups"),
        "provisional": rubric.get("provisional"),
        "grade_scale": rubric.get("grade_scale"),
        "by_type": {g: _effective(c) for g, c in rubric["criteria_by_type"].items()}
        if "criteria_by_type" in rubric else None,
    }


def mismatches(case: Case, rubric: dict[str, Any]) -> list[str]:
    """Every way ``rubric`` differs from what ``case`` expects (weights to 1e-9); empty when read exactly."""
    got = summary(rubric)
    out: list[str] = []
    if set(got["effective"]) != set(case.effective) or any(
        abs(got["effective"][k] - v) > 1e-9 for k, v in case.effective.items()
    ):
        out.append(f"effective weights {got['effective']} != {case.effective}")
    if (got["qualitative_weight"] is None) != (case.qualitative_weight is None) or (
        case.qualitative_weight is not None and abs(got["qualitative_weight"] - case.qualitative_weight) > 1e-9
    ):
        out.append(f"qualitative weight {got['qualitative_weight']} != {case.qualitative_weight}")
    want_periods = [(float(y), {k: float(v) for k, v in w.items()}) for y, w in case.periods]
    have_periods = [(float(y), {k: float(v) for k, v in w.items()}) for y, w in got["periods"]]
    if have_periods != want_periods:
        out.append(f"periods {have_periods} != {want_periods}")
    if len(got["bands"]) != len(case.bands) or any(abs(a - b) > 1e-9 for a, b in zip(got["bands"], case.bands, strict=True)):
        out.append(f"bands {got['bands']} != {case.bands}")
    if got["eligibility"] != case.eligibility:
        out.append(f"eligibility {got['eligibility']} != {case.eligibility}")
    if got["peer_groups"] != case.peer_groups:
        out.append(f"peer groups {got['peer_groups']} != {case.peer_groups}")
    want, have = case.by_type or {}, got["by_type"] or {}
    if set(want) != set(have) or any(
        set(want[g]) != set(have[g]) or any(abs(have[g][k] - v) > 1e-9 for k, v in want[g].items()) for g in want
    ):
        out.append(f"weights per 유형 {have} != {want}")
    for key in ("provisional", "grade_scale"):
        if got[key] != getattr(case, key):
            out.append(f"{key} {got[key]} != {getattr(case, key)}")
    return out
