"""``reasoning_quality``: does the Korean rationale reason from the fund's figures to its grade?

It reads only ``rationale_ko`` (the structured fields are ``consistency``'s business) and multiplies five
factors, each 0–1, so that no one of them can be bought with another:

* **figures** — ``correct / max(correct + 2·wrong + unattributed, 3)``, where *correct* counts the fund's
  own results (metric values, 유형 averages, percentiles, criterion and total scores, rank, standing); context
  figures (peer count, history, band bounds, weights) are checked but earn nothing. A figure
  is attributed when its sentence names its subject: a metric (and the window, ``3년``, where the fund has
  the metric in several), a criterion, ``종합 점수``, or a self-describing unit (``45개``, ``12위``,
  ``4.8년``, ``상위/하위 N%``). Attributed figures are checked against the engine with the tolerances of
  :mod:`evaluator.domains.fund.task.verify`; a wrong one costs twice (it misinforms), an unattributed or
  uncheckable one once. Repeats count once. A rate cited after a one-metric criterion's name (``수익률이
  8.2%``) is that metric's figure. Beyond 12 distinct figures the factor falls linearly to 0 at 20: a
  list of every figure is a dump, however correct.
* **claims** — ``0.2 + 0.8·(correct comparative claims / checkable claims)``: 높다/낮다 (or 우수/부진)
  about a metric, criterion or the overall result, checked against the 유형 average when the sentence
  names ``평균`` and against the percentile otherwise. Without one correct claim the factor is 0.2.
* **verdict** — ``0.4 + 0.6·G``, G = 1 when the rationale concludes a grade (``3등급입니다``) and every grade
  it concludes is the answer's ``grade``; 0 when it concludes none or another one.
* **copying** — 1 while at most 40 % of the rationale lies in 10-character runs copied from the prompt,
  0 from 70 % (:mod:`evaluator.domains.fund.task.copying`); a quoted figure line inside a sentence is fine.
* **length** — the prompt asks for 2–3 sentences: 1 up to 4 sentences and 400 characters, then falling to
  0 at 9 sentences or 1,000 characters.

A rationale that is not Korean (Hangul under 60 % of its letters) or that addresses the grader scores 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evaluator.domains.fund.task.answer import strict_grade
from evaluator.domains.fund.task.citations import Claim, Figure, sentences
from evaluator.domains.fund.task.copying import copied_share, copy_factor
from evaluator.domains.fund.task.verify import Facts, check_claim, check_figure, points_match, reading_of

MIN_FIGURES = 3
"""Fewer correct figures than this earn at most (correct / 3) for the figures factor."""
MAX_FIGURES, ZERO_FIGURES = 12, 20
"""Figures a 2–3 sentence rationale has room for; from ``MAX_FIGURES`` cited the figures factor falls
linearly to 0 at ``ZERO_FIGURES`` (a list of every figure is a dump, however correct)."""
WRONG_COST = 2.0
FREE_SENTENCES, ZERO_SENTENCES = 4, 9
FREE_CHARS, ZERO_CHARS = 400, 1000
MIN_HANGUL_SHARE = 0.6
SELF_DESCRIBING_UNITS = ("개", "위", "년")
RATE_UNITS = ("%", "퍼센트", "bp", "%p", "%포인트")
SELF_DESCRIBING_QUALIFIERS = ("top", "bottom", "weight")

_HANGUL = re.compile(r"[가-힣]")
_LATIN = re.compile(r"[A-Za-z]")


def _single_metric(subject: str | None, facts: Facts) -> str | None:
    """The metric behind a criterion with one metric (``수익률`` names both the criterion and its metric)."""
    kind, _, name = (subject or "").partition(":")
    crit = facts["criteria"].get(name) if kind == "criterion" else None
    metrics = list(crit.get("metrics", ())) if crit else []
    return metrics[0] if len(metrics) == 1 else None


def resolved(fig: Figure, facts: Facts) -> Figure:
    """A rate cited after a one-metric criterion's name is that metric's figure (``수익률이 8.2%``)."""
    metric = _single_metric(fig.subject, facts)
    if metric and (fig.unit in RATE_UNITS or fig.qualifier in ("mean", "pct")):
        return replace(fig, subject=f"metric:{metric}")
    return fig


def resolved_claim(claim: Claim, facts: Facts) -> Claim:
    """A comparison with the 유형 average about a one-metric criterion is about that metric."""
    metric = _single_metric(claim.subject, facts)
    return replace(claim, subject=f"metric:{metric}") if metric and claim.versus_mean else claim


def attributed(fig: Figure, facts: Facts) -> bool:
    """Whether the figure's sentence names what it is (see the module docstring)."""
    if fig.unit in SELF_DESCRIBING_UNITS or fig.qualifier in SELF_DESCRIBING_QUALIFIERS:
        return True
    subject = fig.subject or ""
    if subject.startswith("metric:"):
        metric = subject.split(":", 1)[1]
        windows = [p for p, row in facts["metrics"].items() if metric in row]
        return fig.period is not None or len(windows) <= 1
    return subject.startswith("criterion:") or subject == "overall"


def about_the_fund(fig: Figure, facts: Facts) -> bool:
    """A correct figure about the fund's own results, not its context (peer count, history, band bounds,
    weights): only these earn; context figures are checked, and cost when wrong, but earn nothing."""
    if fig.unit in ("개", "년") or fig.qualifier == "weight":
        return False
    if fig.qualifier == "top":
        return points_match(fig, [facts["peer_percentile"]])
    if fig.unit == "점" and fig.subject in (None, "overall"):
        return points_match(fig, [facts["score"], facts.get("quantitative_score")])
    return True


def hangul_share(text: str) -> float:
    hangul, latin = len(_HANGUL.findall(text)), len(_LATIN.findall(text))
    return hangul / (hangul + latin) if hangul + latin else 0.0


def _ramp(value: float, free: float, zero: float) -> float:
    return 1.0 if value <= free else max(0.0, (zero - value) / (zero - free))


def length_factor(text: str) -> float:
    count = sum(1 for s in sentences(text) if _HANGUL.search(s) or _LATIN.search(s))
    chars = len(re.sub(r"\s+", "", text))
    return min(_ramp(count, FREE_SENTENCES, ZERO_SENTENCES), _ramp(chars, FREE_CHARS, ZERO_CHARS))


def _figures(reading_figures: tuple[Figure, ...], facts: Facts) -> dict[str, Any]:
    verdicts: dict[tuple[Any, ...], str] = {}
    for fig in (resolved(f, facts) for f in reading_figures):
        key = (fig.subject, fig.qualifier, fig.period, fig.unit, round(fig.value, 6))
        if key in verdicts:
            continue
        if not attributed(fig, facts):
            verdicts[key] = "unattributed"
            continue
        ok = check_figure(fig, facts)
        if ok is None:
            verdicts[key] = "unchecked"
        elif not ok:
            verdicts[key] = "wrong"
        else:
            verdicts[key] = "correct" if about_the_fund(fig, facts) else "context"
    kinds = ("correct", "context", "wrong", "unattributed", "unchecked")
    counts = {k: sum(v == k for v in verdicts.values()) for k in kinds}
    against = counts["correct"] + WRONG_COST * counts["wrong"] + counts["unattributed"] + counts["unchecked"]
    surplus = _ramp(len(verdicts), MAX_FIGURES, ZERO_FIGURES)
    counts["factor"] = counts["correct"] / max(against, MIN_FIGURES) * surplus
    counts["wrong_list"] = [f"{k[0] or '-'} {k[4]:g}{k[3]}" for k, v in verdicts.items() if v == "wrong"]
    return counts


def reasoning_breakdown(
    obj: Mapping[str, Any] | None, facts: Facts, facts_text: str | None = None
) -> dict[str, Any]:
    """reasoning_quality and its factors (see the module docstring); ``facts_text``: the facts' JSON string."""
    reading = reading_of(obj, facts)
    if obj is None or reading is None:
        return {"score": 0.0, "reason": "no rationale_ko to check"}
    text = str(obj["rationale_ko"])
    if reading.injection:
        return {"score": 0.0, "reason": "the rationale addresses the grader instead of the fund", "injection": True}
    if hangul_share(text) < MIN_HANGUL_SHARE:
        return {"score": 0.0, "reason": "rationale_ko is not Korean"}
    figures = _figures(reading.figures, facts)
    checked = [(c, check_claim(resolved_claim(c, facts), facts)) for c in reading.claims]
    results = [ok for _, ok in checked if ok is not None]
    claims_share = sum(results) / len(results) if results else 0.0
    grade = strict_grade(obj)
    verdict = float(bool(reading.grade_mentions) and all(g == grade for g in reading.grade_mentions))
    share = copied_share(text, facts, facts_text)
    parts = {
        "figures": figures["factor"],
        "claims": 0.2 + 0.8 * claims_share,
        "verdict": 0.4 + 0.6 * verdict,
        "copying": copy_factor(share),
        "length": length_factor(text),
    }
    score = 1.0
    for value in parts.values():
        score *= value
    return {
        "score": round(score, 6),
        "parts": {k: round(v, 6) for k, v in parts.items()},
        "figures_correct": figures["correct"],
        "figures_context": figures["context"],
        "figures_wrong": figures["wrong_list"],
        "figures_unattributed": figures["unattributed"] + figures["unchecked"],
        "claims_share": claims_share if results else None,
        "claims_wrong": [c.text for c, ok in checked if ok is False],
        "grades_concluded": list(reading.grade_mentions),
        "copied_share": round(share, 4),
    }
