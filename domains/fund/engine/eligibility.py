"""Who the methodology rates: eligibility thresholds per 유형, the minimum peer-group size, and the period
weights a fund's history earns (the rubric's rules, applied to whole arrays)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.checks import FundFlags
from evaluator.domains.fund.wording import years_ko
from evaluator.methodology.rubric import PERIODS, eligibility_for, peer_groups_of

Covers = Callable[[float], np.ndarray]
"""Per fund: whether its NAV history reaches back the given number of years before the as-of date."""


def eligibility(
    rubric: Mapping[str, Any],
    types: np.ndarray,
    amounts: np.ndarray,
    covers: Covers,
    history: np.ndarray,
    flags: FundFlags,
) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds per fund's 유형: the general rule, or that 유형's override (e.g. 채권형 ≥ 300억원).

    The tests run on whole arrays; only the funds that get a reason are visited, in fund order, with
    their reasons in the order the rules are listed. Returns (passes every rule but history, history too
    short), which provisional grades start from. No ``peer_groups`` in the rubric: every 유형 in the data.
    """
    peer_groups = peer_groups_of(rubric, types.tolist())
    groups = set(peer_groups)
    listed = types.tolist()
    rules_of = {t: eligibility_for(rubric, t) for t in dict.fromkeys(listed)}
    min_years = np.array([rules_of[t]["min_history_years"] for t in listed], dtype=float)
    min_amount = np.array([rules_of[t]["min_set_amount_krw"] for t in listed], dtype=float)
    covered = np.zeros(len(listed), dtype=bool)
    for years in np.unique(min_years).tolist():
        of = min_years == years
        covered[of] = covers(years)[of]
    no_group = np.array([t is None or t not in groups for t in listed], dtype=bool)
    known = np.isfinite(amounts)
    with np.errstate(invalid="ignore"):
        small = known & (amounts < min_amount)
    short = np.isfinite(history) & ~covered
    unknown = ~known & (min_amount > 0)
    for i in np.flatnonzero(no_group | short | small | unknown).tolist():
        if i in flags.errors:
            continue
        t = listed[i]
        if t is None:
            flags.skip(i, "펀드 유형(유형) 정보가 없습니다")
        elif t not in groups:
            flags.skip(i, f"유형 '{t}'은(는) 평가 방법론의 동류그룹({', '.join(peer_groups)})이 아닙니다")
        rules = rules_of[t]
        if short[i]:
            flags.skip(
                i, f"운용기간 {years_ko(history[i])}년으로 최소 {rules['min_history_years']:g}년에 못 미칩니다"
            )
        if small[i]:
            flags.skip(
                i,
                f"설정액 {amounts[i] / 1e8:,.1f}억원이 최소 {rules['min_set_amount_krw'] / 1e8:,.1f}억원에 못 미칩니다",
            )
        elif unknown[i]:
            flags.warn(i, "설정액 정보가 없어 최소 설정액 기준을 확인하지 못했습니다")
    return ~no_group & ~small, short


def gate_peer_groups(
    rubric: Mapping[str, Any], types: np.ndarray, eligible: np.ndarray, flags: FundFlags
) -> np.ndarray:
    """``eligible`` less the funds whose peer group has fewer eligible funds than the rubric's minimum
    (each gets the reason)."""
    eligible = eligible.copy()
    min_peers = int(rubric["eligibility"]["min_peer_group_size"])
    sizes = pd.Series(types).map(pd.Series(types[eligible]).value_counts()).fillna(0).to_numpy(dtype=int)
    for i in np.flatnonzero(eligible & (sizes < min_peers)):
        flags.skip(
            int(i),
            f"동류그룹 '{types[i]}'의 평가 대상 펀드가 {sizes[i]}개로 최소 {min_peers}개에 못 미칩니다",
        )
        eligible[i] = False
    return eligible


def period_weights(rubric: Mapping[str, Any], covers: Covers, n: int) -> np.ndarray:
    """Funds × periods: the weights of the last rule (the longest history) each fund's history reaches."""
    weights = np.zeros((n, len(PERIODS)))
    for rule in rubric["period_weights"]:  # later rules (longer histories) override earlier ones
        hit = covers(float(rule["min_history_years"]))
        weights[hit] = np.array([float(rule["weights"].get(p, 0.0)) for p in PERIODS])
    return weights
