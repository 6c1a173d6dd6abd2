"""The ideal answer for one fund, written from the engine's own result (for SFT warm starts and judges).

Every figure it cites is the engine's, formatted as the prompt shows it, and every direction word is
chosen from the percentile or the 유형 average, so all four rewards score it at (or next to) the maximum.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evaluator.domains.fund.task.prompts import fmt_metric
from evaluator.domains.fund.wording import PERIOD_KO, standing_ko


def _cell(facts: Mapping[str, Any], period: str, metric: str) -> Mapping[str, Any] | None:
    return facts["metrics"].get(period, {}).get(metric)


def _return_sentence(facts: Mapping[str, Any], period: str) -> str | None:
    cell = _cell(facts, period, "annualized_return")
    if cell is None:
        return None
    text = f"{PERIOD_KO[period]} 연환산 수익률은 {fmt_metric('annualized_return', cell['value'])}"
    if cell["peer_mean"] is None:  # compare with the percentile instead: one comparison is always made
        if cell["pct"] is None:
            return text + "입니다"
        word = "높은 편입니다" if cell["pct"] >= 50 else "낮은 편입니다"
        return f"{text}(백분위 {cell['pct']:.0f})로 {word}"
    mean = fmt_metric("annualized_return", cell["peer_mean"])
    word = "높습니다" if cell["value"] >= cell["peer_mean"] else "낮습니다"
    return f"{text}로 유형 평균 {mean}보다 {word}"


def _risk_sentence(facts: Mapping[str, Any], period: str) -> str | None:
    """Volatility against its percentile, then the Sharpe ratio and the max drawdown, in one sentence."""
    parts = []
    cell = _cell(facts, period, "annualized_volatility")
    if cell is not None and cell["pct"] is not None:
        size = 100.0 - float(cell["pct"])  # volatility: a high percentile is a low value
        word = "높은 편이고" if size >= 60 else "낮은 편이고" if size <= 40 else "중간 수준이고"
        vol = fmt_metric("annualized_volatility", cell["value"])
        parts.append(f"변동성은 {vol}(백분위 {cell['pct']:.0f})로 {word}")
    for metric, label in (("sharpe", "샤프지수"), ("max_drawdown", "최대낙폭")):
        cell = _cell(facts, period, metric)
        if cell is not None:
            parts.append(f"{label} {fmt_metric(metric, cell['value'])}")
    if not parts:
        return None
    return f"{PERIOD_KO[period]} " + ", ".join(parts) + "입니다"


def reference_rationale(facts: Mapping[str, Any]) -> str:
    """Three Korean sentences (the prompt asks for 2–3): return against the 유형 average, risk against its
    percentile, and the score, peer standing and grade. Every figure is the engine's, named with its window."""
    period = facts.get("main_period") or next(iter(facts["metrics"]), None)
    sentences = []
    if period:
        sentences += [s for s in (_return_sentence(facts, period), _risk_sentence(facts, period)) if s]
    standing = standing_ko(
        float(facts["peer_percentile"]), int(facts["peer_group_size"]), facts.get("peer_bottom_percent")
    )
    sentences.append(
        f"종합 점수 {facts['score']:.1f}점으로 {facts['type']} {facts['peer_group_size']}개 펀드 중 "
        f"{standing}에 해당해 {facts.get('grade_label') or str(facts['grade']) + '등급'}입니다"
    )
    return ". ".join(sentences) + "."


def reference_answer(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's evaluation in the answer format (``evaluation.schema.json``)."""
    return {
        "grade": int(facts["grade"]),
        "score": round(float(facts["score"]), 1),
        "criteria": {
            cid: {"score": round(float(c["score"]), 1), "judgement": c["judgement"]}
            for cid, c in facts["criteria"].items()
        },
        "rationale_ko": reference_rationale(facts),
    }


def reference_json(facts: Mapping[str, Any]) -> str:
    return json.dumps(reference_answer(facts), ensure_ascii=False)
