"""Engine results → the facts a model's fund evaluation is checked against (and its prompt is built from).

One fund's facts are plain JSON values: its metrics per window with the 유형 average and the fund's
percentile in its peer group (the engine's own metric score: 100 = best in the group), its criterion
scores and judgements, its final score, top percent and grade, and the band table of its peer group
(each grade's top-percent bound and the lowest score that reached it). Prompts show these figures;
rewards verify a model's answer against them, so both always agree with the engine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluator.domains.fund.engine import Evaluation, FundResult, group_codes, group_percentile
from evaluator.domains.fund.types import OK
from evaluator.domains.fund.wording import main_period
from evaluator.methodology.rubric import METRICS, PERIODS, criteria_for, grade_cutoffs, scored_metrics
from evaluator.methodology.rubric_scale import DEFAULT_SCALE, grade_scale, provisional_label

JUDGEMENTS: tuple[tuple[str, float], ...] = (("우수", 60.0), ("보통", 40.0), ("미흡", float("-inf")))
"""Criterion judgement by criterion score (0–100): the first whose lower bound the score reaches."""

RATE_METRICS = frozenset(
    {"annualized_return", "annualized_volatility", "max_drawdown", "jensen_alpha", "tracking_error", "mrar"}
)
"""Metrics that are rates (decimals, shown as %); the rest are ratios."""

SHORT_LABELS = {"mrar": "MRAR"}


def metric_label(metric: str) -> str:
    return SHORT_LABELS.get(metric, METRICS[metric].label_ko)


def judgement_for(score: float) -> str:
    """우수 / 보통 / 미흡 for a criterion score."""
    for name, low in JUDGEMENTS:
        if score >= low:
            return name
    return JUDGEMENTS[-1][0]


def judgements_near(score: float, slack: float) -> set[str]:
    """Every judgement a score within ``slack`` points of ``score`` would get (boundary tolerance)."""
    return {judgement_for(score - slack), judgement_for(score), judgement_for(score + slack)}


def metric_percentiles(evaluation: Evaluation) -> dict[str, dict[str, dict[str, float]]]:
    """Fund code → window → metric → percentile in its 유형 among rated funds (the engine's metric score)."""
    rated = [f for f in evaluation.funds if f.status == OK]
    if not rated:
        return {}
    groups = np.array([f.type or "" for f in rated], dtype=object)
    mask = np.ones(len(rated), dtype=bool)
    codes = group_codes(groups)  # the same peer groups for every window and metric
    out: dict[str, dict[str, dict[str, float]]] = {f.fund_code: {} for f in rated}
    for period in PERIODS:
        for metric in scored_metrics(evaluation.rubric):
            values = np.array(
                [
                    np.nan
                    if not f.metrics.get(period) or f.metrics[period].get(metric) is None
                    else float(f.metrics[period][metric])
                    for f in rated
                ]
            )
            if not np.isfinite(values).any():
                continue
            higher = METRICS[metric].direction == "higher"
            pct = group_percentile(values, groups, mask, higher, codes=codes)
            for f, p in zip(rated, pct.tolist(), strict=True):
                if p == p:  # not NaN
                    out[f.fund_code].setdefault(period, {})[metric] = round(p, 3)
    return out


def band_tables(evaluation: Evaluation, provisional: bool = False) -> dict[str, list[dict[str, Any]]]:
    """유형 → bands from the best grade down: grade, label, top-percent bound, lowest score that got the grade.

    ``provisional``: the table of the provisional (가등급) ranking, from the provisionally graded funds.
    """
    labels = {int(b["grade"]): str(b["label"]) for b in evaluation.rubric["grade_bands"]}
    if provisional:
        labels = {g: provisional_label(evaluation.rubric, g) for g in labels}
    lowest: dict[tuple[str, int], float] = {}
    for f in evaluation.funds:
        if f.status == OK and f.grade is not None and f.score is not None and f.provisional == provisional:
            key = (str(f.type), f.grade)
            lowest[key] = min(lowest.get(key, f.score), f.score)
    tables: dict[str, list[dict[str, Any]]] = {}
    types = {str(f.type) for f in evaluation.funds if f.status == OK and f.provisional == provisional}
    for fund_type in sorted(types) if provisional else evaluation.peers:
        tables[fund_type] = [
            {
                "grade": grade,
                "label": labels.get(grade, f"{grade}등급"),
                "top_percent": round(bound, 4),
                "min_score": round(lowest[(fund_type, grade)], 4) if (fund_type, grade) in lowest else None,
            }
            for grade, bound in grade_cutoffs(evaluation.rubric)
        ]
    return tables


def grade_for_score(score: float, bands: list[Mapping[str, Any]]) -> int:
    """The grade the band table gives a score: the best band whose lowest score it reaches."""
    for band in bands:
        if band["min_score"] is not None and score >= band["min_score"]:
            return int(band["grade"])
    return int(bands[-1]["grade"])


def grades_for_score(score: float, bands: list[Mapping[str, Any]], slack: float) -> set[int]:
    """Grades a score within ``slack`` points of ``score`` could get (the table is monotone)."""
    best, worst = grade_for_score(score + slack, bands), grade_for_score(score - slack, bands)
    order = [int(b["grade"]) for b in bands]  # best first, whichever end of the scale that is
    return set(order[order.index(best) : order.index(worst) + 1])


def grade_for_top_percent(top: float, bands: list[Mapping[str, Any]]) -> int:
    """The grade of a top percent (10 = top 10 %) by the bands' cumulative bounds."""
    for band in bands:
        if top <= band["top_percent"] + 1e-9:
            return int(band["grade"])
    return int(bands[-1]["grade"])


def _round(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def fund_facts(
    fund: FundResult,
    evaluation: Evaluation,
    percentiles: Mapping[str, Mapping[str, Mapping[str, float]]],
    bands: Mapping[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """Everything about one rated fund that a prompt shows or a reward checks (plain JSON values)."""
    if fund.status != OK or fund.grade is None or fund.score is None:
        raise ValueError(f"fund {fund.fund_code} is not rated ({fund.status}); only rated funds have facts")
    rubric = evaluation.rubric
    peer = evaluation.peer(fund.type) or {}
    peer_metrics = peer.get("metrics", {})
    metrics: dict[str, dict[str, dict[str, float | None]]] = {}
    for period in PERIODS:
        values = fund.metrics.get(period)
        if not values:
            continue
        row: dict[str, dict[str, float | None]] = {}
        for metric in scored_metrics(rubric):
            value = values.get(metric)
            if value is None:
                continue
            stats = peer_metrics.get(period, {}).get(metric) or {}
            row[metric] = {
                "value": _round(value),
                "peer_mean": _round(stats.get("mean")),
                "pct": percentiles.get(fund.fund_code, {}).get(period, {}).get(metric),
            }
        if row:
            metrics[period] = row
    criteria = {
        c["id"]: {
            "name": c["name"],
            "weight": float(c["weight"]),
            "score": round(float(fund.criterion_scores[c["id"]]), 4),
            "judgement": judgement_for(float(fund.criterion_scores[c["id"]])),
            "metrics": [m["metric"] for m in c["metrics"]],
        }
        for c in criteria_for(rubric, fund.type)
        if fund.criterion_scores.get(c["id"]) is not None
    }
    size = int(fund.peer_group_size or 0)
    top = float(fund.peer_percentile or 0.0)
    scale = grade_scale(rubric)
    extra: dict[str, Any] = {"provisional": True} if fund.provisional else {}
    if scale != DEFAULT_SCALE:
        extra["grade_scale"] = {"grades": scale.grades, "best": scale.best, "style": scale.style}
    return {
        "fund_code": fund.fund_code,
        "fund_name": fund.fund_name,
        "company": fund.company,
        "type": fund.type,
        "as_of": fund.as_of.isoformat(),
        "history_years": fund.history_years,
        "grade": int(fund.grade),
        "grade_label": fund.grade_label,
        "score": round(float(fund.score), 4),
        "quantitative_score": _round(fund.quantitative_score, 4),
        "peer_percentile": round(top, 4),
        "peer_group_size": size,
        **(
            {"peer_bottom_percent": round(float(fund.peer_bottom_percent), 4)}
            if fund.portfolio_classes is not None and fund.peer_bottom_percent is not None
            else {}
        ),
        "rank": round(top * size / 100.0) if size else None,
        "period_weights": dict(fund.period_weights),
        "main_period": main_period(fund),
        "metrics": metrics,
        "criteria": criteria,
        "qualitative": dict(fund.qualitative_scores) if fund.qualitative_scores else None,
        "qualitative_weight": float(rubric["qualitative"]["weight"]) if rubric.get("qualitative") else 0.0,
        "bands": bands.get(("provisional", str(fund.type)) if fund.provisional else str(fund.type), []),
        **extra,
    }


def universe_facts(evaluation: Evaluation) -> dict[str, dict[str, Any]]:
    """Facts of every rated fund, by fund code, in the evaluation's order."""
    percentiles = metric_percentiles(evaluation)
    bands: dict[Any, list[dict[str, Any]]] = dict(band_tables(evaluation))
    if any(f.provisional for f in evaluation.funds):
        bands.update({("provisional", k): v for k, v in band_tables(evaluation, provisional=True).items()})
    return {
        f.fund_code: fund_facts(f, evaluation, percentiles, bands) for f in evaluation.funds if f.status == OK
    }


def facts_json(facts: Mapping[str, Any]) -> str:
    """The compact JSON string a dataset row carries (Arrow keeps it as one string column)."""
    return json.dumps(facts, ensure_ascii=False, separators=(",", ":"))
