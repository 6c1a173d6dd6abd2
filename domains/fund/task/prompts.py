"""Korean chat prompts for the fund-evaluation task: one fund's facts, the method, and the answer format.

Compact on purpose (small models, short contexts): one line per metric with the fund's value, the 유형
average and the percentile for each window, the rubric's weights, the peer group's band table and a
one-line answer format with a skeleton example. Every figure shown comes from
:func:`evaluator.domains.fund.task.facts.fund_facts`, so a reward can verify whatever the model cites.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from evaluator.domains.fund.task.facts import JUDGEMENTS, RATE_METRICS, metric_label
from evaluator.domains.fund.wording import PERIOD_KO
from evaluator.methodology.rubric import criteria_for
from evaluator.methodology.rubric_scale import GradeScale

SYSTEM_PROMPT = (
    "당신은 펀드평가사의 애널리스트입니다. 주어진 수치만 근거로 펀드를 평가하고, "
    "다른 설명 없이 JSON 객체 하나로만 답하세요."
)


def fmt_metric(metric: str, value: float | None) -> str:
    """A metric value as the prompt shows it: rates in % with two decimals, ratios with two decimals."""
    if value is None:
        return "-"
    text = f"{value * 100:.2f}%" if metric in RATE_METRICS else f"{value:.2f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.%") else text  # no "-0.00"


def _method_line(rubric: Mapping[str, Any], fund_type: str | None = None) -> str:
    """The weights that score this fund: its 유형's own (per-유형 weights), else the general ones."""
    parts = []
    for crit in criteria_for(rubric, fund_type):
        inner = "·".join(f"{metric_label(m['metric'])} {float(m['weight']):g}" for m in crit["metrics"])
        parts.append(f"{crit['name']}[{crit['id']}] {float(crit['weight']):g} ({inner})")
    return "항목 가중치: " + ", ".join(parts)


def metric_lines(facts: Mapping[str, Any]) -> list[str]:
    periods = list(facts["metrics"])
    metrics: list[str] = []
    for period in periods:
        metrics.extend(m for m in facts["metrics"][period] if m not in metrics)
    lines = []
    for metric in metrics:
        cells = []
        for period in periods:
            cell = facts["metrics"][period].get(metric)
            if cell is None:
                continue
            pct = "-" if cell["pct"] is None else f"{cell['pct']:.0f}"
            mean = fmt_metric(metric, cell["peer_mean"])
            cells.append(f"{PERIOD_KO[period]} {fmt_metric(metric, cell['value'])} ({mean}, {pct})")
        lines.append(f"- {metric_label(metric)}: " + " / ".join(cells))
    return lines


def band_line(bands: list[Mapping[str, Any]]) -> str:
    parts = []
    for band in bands[:-1]:
        low = f"{band['min_score']:.1f}점 이상" if band["min_score"] is not None else "해당 펀드 없음"
        parts.append(f"{band['label']} 상위 {band['top_percent']:g}% ({low})")
    parts.append(f"{bands[-1]['label']} 그 외")
    return "등급 기준(동류 내 종합 점수 순위): " + ", ".join(parts)


def judgement_line() -> str:
    named = [f"{low:g} 이상 {name}" for name, low in JUDGEMENTS[:-1]]
    return f"항목 판단: 항목 점수(0~100) {', '.join(named)}, 그 미만 {JUDGEMENTS[-1][0]}"


EXAMPLE_RATIONALE = (
    "3년 연환산 수익률 ○○%로 유형 평균 ○○%보다 … 종합 점수 ○○점, 상위 ○○%(하위 절반이면 하위 ○○%)로 3등급입니다."
)


def example_answer(criterion_ids: Iterable[str]) -> str:
    """A skeleton answer: the right shape and keys, no figures to copy."""
    doc = {
        "grade": 3,
        "score": 50.0,
        "criteria": {cid: {"score": 50.0, "judgement": "보통"} for cid in criterion_ids},
        "rationale_ko": EXAMPLE_RATIONALE,
    }
    return json.dumps(doc, ensure_ascii=False)


ANSWER_LINE = (
    "답변: JSON 객체 하나. grade는 등급(1~5 정수), score는 종합 점수(0~100), criteria는 항목 id별 "
    "score와 judgement, rationale_ko는 위 수치를 인용한 2~3문장 근거(지표와 기간을 밝히고, 유형 평균이나 "
    "백분위와 비교해 높은지 낮은지 판단하고, 등급으로 결론). 형식 예:"
)
LEGEND_LINE = (
    "지표: 기간 값 (유형 평균, 백분위). 백분위는 동류 내 순위로 100이 가장 우수 "
    "(변동성·추적오차는 낮을수록, 최대낙폭은 0에 가까울수록 우수)"
)


def answer_line(facts: Mapping[str, Any]) -> str:
    """The format line; a rubric with another scale (stars, 7 grades) says its own range and best end."""
    spec = facts.get("grade_scale")
    if not spec:
        return ANSWER_LINE
    scale = GradeScale(int(spec["grades"]), str(spec["best"]), str(spec["style"]))
    unit = "별 개수 " if scale.style == "stars" else ""
    best = scale.best_grade()
    said = f"등급({unit}1~{scale.grades} 정수, {best}{'가' if best in (2, 4, 5, 9) else '이'} 최우수)"  # 이/가 by sound
    return ANSWER_LINE.replace("등급(1~5 정수)", said)


def _header(facts: Mapping[str, Any]) -> list[str]:
    name = facts.get("fund_name") or facts["fund_code"]
    company = f", 운용사 {facts['company']}" if facts.get("company") else ""
    history = f", 운용기간 {facts['history_years']:.1f}년" if facts.get("history_years") is not None else ""
    lines = [
        f"펀드: {name} ({facts['fund_code']}){company}",
        f"유형: {facts['type']} (동류그룹 평가 대상 {facts['peer_group_size']}개), 기준일 {facts['as_of']}{history}",
    ]
    if facts.get("provisional"):
        window = next(iter(facts["period_weights"]), "1y")
        lines.append(
            f"가등급: 운용기간이 짧아 {PERIOD_KO[window]} 성과만으로 같은 유형 펀드와 비교한 잠정 등급입니다 "
            "(grade는 숫자만)"
        )
    return lines


def _tail(facts: Mapping[str, Any]) -> list[str]:
    """Everything after the qualitative line: legend, metric lines, band table, judgements, format."""
    return [
        LEGEND_LINE,
        *metric_lines(facts),
        band_line(facts["bands"]),
        judgement_line(),
        answer_line(facts),
        example_answer(facts["criteria"]),
    ]


def copyable_text(facts: Mapping[str, Any]) -> str:
    """The prompt text built from the facts alone (all but the rubric's method line): what a rationale
    must not copy (:mod:`evaluator.domains.fund.task.copying`)."""
    weights = ", ".join(f"{PERIOD_KO[p]} {w:g}" for p, w in facts["period_weights"].items())
    return "\n".join([SYSTEM_PROMPT, *_header(facts), f"기간 가중치: {weights}", *_tail(facts)])


def user_prompt(facts: Mapping[str, Any], rubric: Mapping[str, Any]) -> str:
    """The user turn: facts of one fund, the method and the answer format (Korean)."""
    weights = ", ".join(f"{PERIOD_KO[p]} {w:g}" for p, w in facts["period_weights"].items())
    lines = [*_header(facts), _method_line(rubric, facts.get("type")), f"기간 가중치: {weights}"]
    if facts.get("qualitative"):
        names = {c["id"]: c["name"] for c in rubric.get("qualitative", {}).get("criteria", [])}
        scores = ", ".join(f"{names.get(k, k)} {v:g}" for k, v in facts["qualitative"].items())
        lines.append(f"정성평가(1~5, 종합 점수의 {facts['qualitative_weight']:g}%): {scores}")
    lines += _tail(facts)
    return "\n".join(lines)


def build_messages(facts: Mapping[str, Any], rubric: Mapping[str, Any]) -> list[dict[str, str]]:
    """System + user messages (TRL's conversational prompt format)."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_prompt(facts, rubric)},
    ]
