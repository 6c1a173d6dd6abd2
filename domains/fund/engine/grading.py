"""Rules firms add on top of one ranking: per-유형 weights and provisional grades (가등급) for young funds.

* Per-유형 weights (``criteria_by_type``): every peer group is ranked on its own, so scoring each group with
  its own criteria and putting the arrays side by side gives every fund exactly the score and grade it gets
  under a rubric holding only its 유형's weights.
* Provisional grades (``provisional``): computed in a second, separate ranking, so the regular grades never
  see a young fund. The young fund's score on the stated window is ranked against the same window's scores
  of every eligible fund of its 유형 with at least the range's minimum history (mature funds included), and
  graded by the rubric's bands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluator.domains.fund.engine.checks import FundFlags
from evaluator.domains.fund.engine.scoring import Scores, score_funds
from evaluator.domains.fund.wording import years_ko
from evaluator.methodology.rubric import PERIODS


def score_per_type(
    metrics: Mapping[str, Mapping[str, np.ndarray]],
    groups: np.ndarray,
    eligible: np.ndarray,
    period_weights: Mapping[str, np.ndarray],
    rubric: Mapping[str, Any],
    qualitative: Mapping[str, np.ndarray] | None = None,
    *,
    families: np.ndarray | None = None,
) -> Scores:
    """:func:`score_funds` with each 유형 of ``criteria_by_type`` scored by its own criteria."""
    by_type = rubric.get("criteria_by_type") or {}
    if not by_type:
        return score_funds(metrics, groups, eligible, period_weights, rubric, qualitative, families=families)
    eligible = np.asarray(eligible, dtype=bool)
    own = np.isin(np.asarray(groups, dtype=object), list(by_type))
    parts = [(eligible & ~own, rubric)]
    parts += [(eligible & (groups == g), {**rubric, "criteria": c}) for g, c in by_type.items()]
    results = [
        (mask, score_funds(metrics, groups, mask, period_weights, r, qualitative, families=families))
        for mask, r in parts
        if mask.any()
    ] or [(eligible, score_funds(metrics, groups, eligible, period_weights, rubric, qualitative, families=families))]
    return merge_scores(results, len(groups))


def merge_scores(parts: list[tuple[np.ndarray, Scores]], funds: int) -> Scores:
    """Side by side: each fund's values from the part whose mask holds it (NaN / −1 / 0 elsewhere)."""
    nan = np.full(funds, np.nan)
    criteria: dict[str, np.ndarray] = {}
    quant, qual, score, top = nan.copy(), nan.copy(), nan.copy(), nan.copy()
    size, grade = np.zeros(funds, dtype=int), np.full(funds, -1, dtype=int)
    bottom = nan.copy()
    for mask, s in parts:
        if s.peer_bottom is not None:
            bottom = np.where(mask, s.peer_bottom, bottom)
        for cid, values in s.criteria.items():
            criteria[cid] = np.where(mask, values, criteria.get(cid, nan))
        quant, qual = np.where(mask, s.quantitative, quant), np.where(mask, s.qualitative, qual)
        score, top = np.where(mask, s.score, score), np.where(mask, s.peer_percentile, top)
        size, grade = np.where(mask, s.peer_size, size), np.where(mask, s.grade, grade)
    return Scores(criteria, quant, qual, score, top, size, grade, bottom)


@dataclass(frozen=True)
class Provisional:
    """Which funds got a provisional grade, and the ranking they got it from."""

    young: np.ndarray
    scores: Scores
    window: str


def provisional_grades(
    rubric: Mapping[str, Any],
    metrics: Mapping[str, Mapping[str, np.ndarray]],
    groups: np.ndarray,
    base_ok: np.ndarray,
    short: np.ndarray,
    covers: Callable[[float], np.ndarray],
    history: np.ndarray,
    flags: FundFlags,
    qualitative: Mapping[str, np.ndarray] | None = None,
    families: np.ndarray | None = None,
) -> Provisional | None:
    """Provisional grades per the rubric's rule, or None without one.

    ``base_ok``: funds that pass every rule except the history one (a 유형 that is a peer group, 설정액, no
    error, not stale); ``short``: funds whose history is too short for a regular grade. A young fund that
    gets a grade loses its not-rated reasons and gets a warning that says why its grade is provisional.
    """
    spec = rubric.get("provisional")
    if not spec:
        return None
    lo, hi, window = float(spec["min_history_years"]), float(spec["max_history_years"]), str(spec["window"])
    reaches = covers(lo)
    pool = np.asarray(base_ok, dtype=bool) & reaches
    young = pool & short & ~covers(hi)
    min_peers = int(rubric["eligibility"]["min_peer_group_size"])
    counts: dict[Any, int] = {}
    for g in groups[pool].tolist():
        counts[g] = counts.get(g, 0) + 1
    small = np.array([counts.get(g, 0) < min_peers for g in groups.tolist()], dtype=bool)
    pool &= ~small
    weights = {window: np.full(len(groups), 100.0)} if window in PERIODS else {}
    scores = score_per_type(metrics, groups, pool, weights, rubric, qualitative, families=families)
    graded = young & pool & (scores.grade >= 0)
    for i in np.flatnonzero(base_ok & short & ~reaches).tolist():
        if np.isfinite(history[i]):
            flags.skip(i, f"운용기간 {years_ko(history[i])}년으로 가등급 최소 운용기간 {lo:g}년에도 못 미칩니다")
    for i in np.flatnonzero(young & ~graded).tolist():
        why = f"동류그룹 '{groups[i]}'의 가등급 비교 대상이 최소 {min_peers}개에 못 미칩니다" if small[i] else (
            f"{window} 성과가 없어 가등급을 산출하지 못했습니다"
        )
        flags.skip(i, why)
    for i in np.flatnonzero(graded).tolist():
        flags.not_rated.pop(i, None)
        flags.codes.pop(i, None)
        flags.warn(
            i,
            f"운용기간 {years_ko(history[i])}년(가등급 대상 {lo:g}년 이상 {hi:g}년 미만)으로 {window} 성과만으로 "
            f"{int(scores.peer_size[i])}개 펀드와 비교한 가등급입니다",
        )
    return Provisional(young=graded, scores=scores, window=window)


def with_provisional(regular: Scores, prov: Provisional | None) -> Scores:
    """The regular scores, with each provisionally graded fund's values from its provisional ranking."""
    if prov is None or not prov.young.any():
        return regular
    regular_mask = ~prov.young
    return merge_scores([(regular_mask, regular), (prov.young, prov.scores)], len(prov.young))
