"""Checking a model's fund evaluation against the engine's facts: figures, direction claims, criteria, consistency.

The rationale's score built from these checks is :mod:`evaluator.domains.fund.task.reasoning`.

Tolerance rules (a cited figure "matches" when it is the engine's value rounded to the precision cited,
with a floor and a ceiling on the slack):

* Rates (수익률, 변동성, 최대낙폭, 알파, 추적오차, MRAR) are decimals in the engine. ``8.21%`` is read as
  0.0821; a bare number is tried both as percent (``8.21``) and as a decimal (``0.0821``). Slack: half a
  unit of the last digit cited, at least 0.1 and at most 0.5 percentage points (``8%`` matches 7.5–8.5 %,
  ``8.2%`` matches 8.1–8.3 %). A max drawdown may be cited with or without its minus sign.
* Ratios (샤프, 소르티노, 정보비율 …): half a unit of the last digit, at least 0.01, at most 0.05.
* Points (scores, percentiles, top percent, weights, 0–100): half a unit of the last digit, 0.1 to 0.5.
  ``하위 N%`` is the share at or below the fund, 100·(count − rank + 1)/count (``하위 2.2%`` for the last of
  45); 100 − top percent is accepted too.
* Counts (``103개``) and ranks (``53위``) must be exact; years (``4.8년``) within 0.05–0.5.
* A window named in the sentence (``3년``) must hold the figure; with none named any window may.

Direction claims compare with the fund's percentile in the named window (else its main window):
``high``/``good`` agree from percentile 40 up, ``low``/``poor`` up to 60 (40–60 is "about average" and
accepts either). Size words follow the value (``높은 변동성`` = a high volatility value, ``큰 낙폭`` = a
deep drawdown); quality words follow the percentile. A claim made against ``평균`` compares the value with
the 유형 average instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from evaluator.domains.fund.task.answer import strict_grade
from evaluator.domains.fund.task.citations import Claim, Figure, Reading, read_rationale
from evaluator.domains.fund.task.facts import (
    RATE_METRICS,
    grade_for_top_percent,
    grades_for_score,
    judgement_for,
    judgements_near,
)
from evaluator.domains.fund.wording import bottom_percent
from evaluator.methodology.rubric import METRICS

NEUTRAL_LOW, NEUTRAL_HIGH = 40.0, 60.0
CRITERION_SCORE_SLACK = 5.0
JUDGEMENT_SLACK = 2.0
SCORE_SLACK = 0.5

Facts = Mapping[str, Any]


def _slack(decimals: int, low: float, high: float) -> float:
    return min(max(0.5 * 10.0 ** (-decimals), low), high) + 1e-9


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def rate_matches(fig: Figure, truth: float | None, *, unsigned: bool = False) -> bool:
    if truth is None:
        return False
    readings: list[tuple[float, float]] = []
    pp = _slack(fig.decimals, 0.1, 0.5) / 100.0
    if fig.unit in ("%", "퍼센트"):
        readings.append((fig.value / 100.0, pp))
    elif fig.unit == "bp":
        readings.append((fig.value / 10000.0, pp))
    elif fig.unit == "":
        readings += [(fig.value / 100.0, pp), (fig.value, _slack(fig.decimals, 0.001, 0.005))]
    for value, slack in readings:
        a, b = (abs(value), abs(truth)) if unsigned else (value, truth)
        if abs(a - b) <= slack:
            return True
    return False


def ratio_matches(fig: Figure, truth: float | None) -> bool:
    return (
        truth is not None
        and fig.unit in ("", "배")
        and abs(fig.value - truth) <= _slack(fig.decimals, 0.01, 0.05)
    )


def points_match(fig: Figure, truths: Iterable[float | None]) -> bool:
    if fig.unit not in ("", "점", "%", "퍼센트"):
        return False
    slack = _slack(fig.decimals, 0.1, 0.5)
    return any(t is not None and abs(fig.value - t) <= slack for t in truths)


def _metric_matches(fig: Figure, metric: str, truth: float | None) -> bool:
    if metric in RATE_METRICS:
        return rate_matches(fig, truth, unsigned=metric == "max_drawdown")
    return ratio_matches(fig, truth)


def _cells(facts: Facts, metric: str, period: str | None) -> list[Mapping[str, Any]]:
    periods = [period] if period else list(facts["metrics"])
    return [facts["metrics"][p][metric] for p in periods if metric in facts["metrics"].get(p, {})]


def _headline_points(facts: Facts) -> list[float | None]:
    points: list[float | None] = [
        facts["score"],
        facts.get("quantitative_score"),
        facts["peer_percentile"],
        facts.get("qualitative_weight"),
    ]
    points += list(facts["period_weights"].values())
    for crit in facts["criteria"].values():
        points += [crit["weight"], crit["score"]]
    for band in facts["bands"]:
        points += [band["top_percent"], band["min_score"]]
    points += list((facts.get("qualitative") or {}).values())
    return points


def check_figure(fig: Figure, facts: Facts) -> bool | None:
    """Whether a cited figure matches the engine (None: not a checkable figure)."""
    subject = fig.subject or ""
    metric = subject.split(":", 1)[1] if subject.startswith("metric:") else None
    criterion = subject.split(":", 1)[1] if subject.startswith("criterion:") else None
    if fig.unit == "년":
        years = facts.get("history_years")
        return years is not None and abs(fig.value - years) <= _slack(fig.decimals, 0.05, 0.5)
    if fig.unit in ("%p", "%포인트"):
        if metric is None:
            return None
        gaps = [
            abs(c["value"] - c["peer_mean"])
            for c in _cells(facts, metric, fig.period)
            if c["peer_mean"] is not None
        ]
        as_pct = Figure(
            fig.text, abs(fig.value), fig.decimals, "%", fig.subject, fig.period, None, fig.clause
        )
        return any(rate_matches(as_pct, g) for g in gaps) if metric in RATE_METRICS else None
    if fig.unit == "개":
        return fig.decimals == 0 and int(fig.value) == facts["peer_group_size"]
    if fig.unit == "위":
        return fig.decimals == 0 and facts.get("rank") is not None and int(fig.value) == facts["rank"]
    if fig.qualifier == "top":
        return points_match(fig, [facts["peer_percentile"], *(b["top_percent"] for b in facts["bands"])])
    if fig.qualifier == "bottom":
        top, size = facts["peer_percentile"], facts["peer_group_size"]
        bottom = facts.get("peer_bottom_percent")
        return points_match(fig, [bottom if bottom is not None else bottom_percent(top, size), 100.0 - top])
    if fig.qualifier == "weight":
        return points_match(fig, _headline_points(facts))
    if fig.unit == "점":
        allowed = [facts["score"], facts.get("quantitative_score")]
        if criterion in facts["criteria"]:
            allowed.append(facts["criteria"][criterion]["score"])
        elif metric is not None:
            allowed += [c["score"] for c in facts["criteria"].values() if metric in c.get("metrics", ())]
        else:
            allowed += [b["min_score"] for b in facts["bands"]]
        return points_match(fig, allowed)
    if metric is not None:
        cells = _cells(facts, metric, fig.period)
        if not cells:
            return False
        if fig.qualifier == "pct":
            return points_match(fig, [c["pct"] for c in cells])
        key = "peer_mean" if fig.qualifier == "mean" else "value"
        return any(_metric_matches(fig, metric, c[key]) for c in cells)
    if criterion is not None and criterion in facts["criteria"]:
        return points_match(fig, [facts["criteria"][criterion]["score"]])
    if subject == "overall":
        return points_match(fig, [facts["score"], facts["peer_percentile"]])
    if fig.qualifier == "pct":
        return points_match(fig, [c["pct"] for p in facts["metrics"].values() for c in p.values()])
    if points_match(fig, _headline_points(facts)):
        return True
    return any(
        _metric_matches(fig, m, c["value"]) or _metric_matches(fig, m, c["peer_mean"])
        for p in facts["metrics"].values()
        for m, c in p.items()
    )


def _agrees(direction: str, p: float) -> bool:
    return p >= NEUTRAL_LOW if direction in ("high", "good") else p <= NEUTRAL_HIGH


def check_claim(claim: Claim, facts: Facts) -> bool | None:
    """Whether a direction claim agrees with the facts (None: nothing to check it against)."""
    if claim.subject == "overall":
        return _agrees(claim.direction, 100.0 - facts["peer_percentile"])
    kind, _, name = claim.subject.partition(":")
    if kind == "criterion":
        crit = facts["criteria"].get(name)
        if crit is None:
            return None
        risk_like = crit["name"].replace(" ", "") == "위험"
        p = 100.0 - crit["score"] if risk_like and claim.direction in ("high", "low") else crit["score"]
        return _agrees(claim.direction, p)
    period = claim.period or facts.get("main_period")
    cell = facts["metrics"].get(period or "", {}).get(name)
    if cell is None:
        return None
    higher_better = METRICS[name].direction == "higher"
    if claim.versus_mean and cell["peer_mean"] is not None:
        value, mean = cell["value"], cell["peer_mean"]
        eps = 0.0005 if name in RATE_METRICS else 0.005
        if claim.direction in ("high", "low"):
            if name == "max_drawdown":
                value, mean = abs(value), abs(mean)
            return value >= mean - eps if claim.direction == "high" else value <= mean + eps
        better = value >= mean - eps if higher_better else value <= mean + eps
        worse = value <= mean + eps if higher_better else value >= mean - eps
        return better if claim.direction == "good" else worse
    if cell["pct"] is None:
        return None
    pct = float(cell["pct"])
    if claim.direction in ("good", "poor"):
        return _agrees(claim.direction, pct)
    value_pct = pct if higher_better else 100.0 - pct
    size_pct = 100.0 - value_pct if name == "max_drawdown" else value_pct
    return _agrees(claim.direction, size_pct)


def criteria_names(facts: Facts) -> dict[str, str]:
    return {cid: c["name"] for cid, c in facts["criteria"].items()}


def reading_of(obj: Mapping[str, Any] | None, facts: Facts) -> Reading | None:
    rationale = obj.get("rationale_ko") if isinstance(obj, Mapping) else None
    if not isinstance(rationale, str):
        return None
    names = [str(facts.get(k) or "") for k in ("fund_name", "company", "fund_code")]
    return read_rationale(rationale, criteria_names(facts), names)


def criteria_agreement(stated: Any, facts: Facts) -> float:
    """Per criterion: half for a score within 5 points of the engine's, half for its judgement."""
    engine = facts["criteria"]
    if not isinstance(stated, Mapping) or not engine:
        return 0.0
    keys = set(engine) | set(stated)
    total = 0.0
    for cid in keys:
        entry, truth = stated.get(cid), engine.get(cid)
        if truth is None or not isinstance(entry, Mapping):
            continue
        if (
            _finite(entry.get("score"))
            and abs(float(entry["score"]) - truth["score"]) <= CRITERION_SCORE_SLACK
        ):
            total += 0.5
        if entry.get("judgement") in judgements_near(truth["score"], JUDGEMENT_SLACK):
            total += 0.5
    return total / len(keys)


def consistency_breakdown(obj: Mapping[str, Any] | None, facts: Facts) -> dict[str, Any]:
    """consistency and its parts: the structured fields (grade, score, percentile, criteria) fit together
    under the band table and agree with the engine's criterion breakdown. The rationale is not read here."""
    if not isinstance(obj, Mapping):
        return {"score": 0.0, "reason": "no answer object"}
    grade, score = strict_grade(obj), obj.get("score")
    bands = facts["bands"]
    parts: dict[str, float] = {
        "grade_vs_score": float(
            grade is not None
            and _finite(score)
            and grade in grades_for_score(float(score), bands, SCORE_SLACK)
        )
    }
    stated = obj.get("criteria")
    entries = list(stated.values()) if isinstance(stated, Mapping) else []
    judged = [
        e.get("judgement") in {judgement_for(float(e["score"]) + d) for d in (-1.0, 0.0, 1.0)}
        for e in entries
        if isinstance(e, Mapping) and _finite(e.get("score"))
    ]
    parts["criteria_judgements"] = sum(judged) / len(entries) if entries else 0.0
    parts["criteria_vs_engine"] = criteria_agreement(stated, facts)
    top = obj.get("peer_percentile")
    if _finite(top):
        near = {grade_for_top_percent(float(top) + d, bands) for d in (-SCORE_SLACK, 0.0, SCORE_SLACK)}
        parts["grade_vs_top_percent"] = float(grade in near)
    return {"score": round(sum(parts.values()) / len(parts), 6), "parts": parts}
