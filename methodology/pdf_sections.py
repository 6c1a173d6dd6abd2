"""The methodology PDF's text, section by section: overview, eligibility, peer groups, periods, criteria,
grade bands, rewards, calculation rules and the company rule; every value also sits in a table, which is
what :mod:`evaluator.methodology.pdf_ingest` reads back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.methodology import pdf_layout as L
from evaluator.methodology.pdf_blocks import number, paragraph, table
from evaluator.methodology.rubric import METRICS, PERIODS, grade_cutoffs
from evaluator.methodology.rubric_scale import grade_scale

PERIOD_KO = {"1y": "1년", "3y": "3년", "5y": "5년", "10y": "10년"}

METRIC_DEFINITIONS = (
    "일간 수익률 r = 기준가격(t) / 기준가격(t-1) - 1, 일간 무위험수익률 rf = (1 + 연 무위험이자율)^(1/252) - 1, n = 기간 내 수익률 개수.",
    "연환산 수익률 = Π(1 + r)^(252/n) - 1. 연환산 변동성 = 표준편차(r, 표본) × √252.",
    "샤프지수 = 평균(r - rf) / 표준편차(r - rf) × √252. 소르티노 비율 = 평균(r - rf) × 252 / (√평균(min(r - rf, 0)²) × √252).",
    "최대낙폭 = 기간 시작을 1로 한 누적 자산의 직전 고점 대비 최저 하락률(음수). 칼마 비율 = 연환산 수익률 / |최대낙폭|.",
    "베타 = 공분산(r - rf, b - rf) / 분산(b - rf). 젠센 알파 = (평균(r - rf) - 베타 × 평균(b - rf)) × 252. b는 벤치마크 일간 수익률.",
    "추적오차 = 표준편차(r - b) × √252. 정보비율 = 평균(r - b) × 252 / 추적오차.",
    "MRAR(γ=2) = (평균((1 + ER)^(-2)))^(-6) - 1, ER = (1 + 월간 수익률) / (1 + 월간 무위험수익률) - 1, 월말 기준가격 사용.",
)


def story(rubric: Mapping[str, Any]) -> list[Any]:
    """Every paragraph and table of the document, in order."""
    r = rubric
    parts = _overview_section(r) + _eligibility_section(r) + _peers_and_periods_section(r)
    parts += _criteria_section(r)
    parts += _bands_and_rewards(r)
    parts += [paragraph("9. 계산 규칙", "h")] + [paragraph(text) for text in METRIC_DEFINITIONS]
    parts += _company_section(r.get("company_rating"))
    return parts


def _overview_section(r: Mapping[str, Any]) -> list[Any]:
    """The title and 1. 개요: what the grades mean, and the document's settings as a table."""
    story: list[Any] = [paragraph(f"{r['name']} (버전 {r['version']})", "title")]
    story += [paragraph("1. 개요", "h")]
    if r.get("description"):
        story.append(paragraph(str(r["description"])))
    scale = grade_scale(r)
    best, worst = (
        f"{x}{'이' if x.endswith('급') else '가'}"
        for x in map(scale.label, (scale.best_grade(), scale.worst_grade()))
    )
    story.append(
        paragraph(
            f"이 방법론은 같은 유형(동류그룹)의 펀드끼리 상대 비교하여 등급을 부여한다. {best} 가장 우수하고 {worst} 가장 "
            "낮은 평가이며, 1등급이 가장 위험한 등급을 뜻하는 투자위험등급과는 방향이 반대이다. 모든 값은 아래 표가 기준이다."
            if scale.best == "low"
            else f"이 방법론은 같은 유형(동류그룹)의 펀드끼리 상대 비교하여 등급을 부여한다. {best} 가장 우수하고 {worst} 가장 "
            "낮은 평가이다. 모든 값은 아래 표가 기준이다."
        )
    )
    doc_rows = [
        [L.DOC_KEYS["domain"], r["domain"]],
        [L.DOC_KEYS["name"], r["name"]],
        [L.DOC_KEYS["version"], r["version"]],
    ]
    if "description" in r:
        doc_rows.append([L.DOC_KEYS["description"], r["description"]])
    if "default_style" in r:
        doc_rows.append([L.DOC_KEYS["default_style"], r["default_style"]])
    if "qualitative" in r:
        doc_rows.append([L.DOC_KEYS["qualitative_weight"], number(r["qualitative"]["weight"])])
    for key in L.SETTING_KEYS:
        if key in r:
            doc_rows.append([L.DOC_KEYS[key], L.setting_text(dict(r[key]))])
    if "peer_groups" not in r:
        doc_rows.append([L.DOC_KEYS["peer_groups"], L.PEER_GROUPS_FROM_DATA])
    story.append(table(L.DOC_TABLE, doc_rows, (45, 125)))
    return story


def _eligibility_section(r: Mapping[str, Any]) -> list[Any]:
    """2. 평가 대상: the thresholds, the provisional grades and the per-유형 overrides."""
    elig = r["eligibility"]
    story: list[Any] = []
    story += [
        paragraph("2. 평가 대상", "h"),
        paragraph(
            f"평가기준일 현재 운용기간이 {number(elig['min_history_years'])}년 이상이고 설정액이 {number(elig['min_set_amount_krw'])}원 "
            f"이상인 펀드를 평가한다. 동류그룹의 평가 대상 펀드가 {number(elig['min_peer_group_size'])}개 미만이면 그 그룹은 등급을 "
            "부여하지 않는다. 기준가격에 중복일자, 누락, 0 이하 값이 있는 펀드는 데이터 오류로 분류한다."
        ),
        table(
            L.ELIGIBILITY_TABLE,
            [[L.ELIGIBILITY_KEYS[k], number(elig[k])] for k in L.ELIGIBILITY_KEYS],
            (80, 90),
        ),
    ]
    prov = r.get("provisional")
    if prov:
        years = PERIODS.get(str(prov["window"]), prov["window"])
        story.append(
            paragraph(
                f"운용기간 {number(prov['min_history_years'])}년 이상 {number(prov['max_history_years'])}년 미만인 펀드는 최근 {years}년 "
                f"성과만으로 같은 유형에서 운용기간 {number(prov['min_history_years'])}년 이상인 모든 펀드와 비교해 가등급(잠정 등급)을 "
                "부여한다. 정규 등급은 이 규칙과 무관하게 산출한다."
            )
        )
    overrides = elig.get("overrides") or {}
    if overrides:
        story += [
            paragraph(
                "다만 아래 유형은 해당 기준을 아래 표의 값으로 대신한다: "
                + ", ".join(
                    f"{g} {L.ELIGIBILITY_KEYS[k]} {number(v)}"
                    for g, rules in overrides.items()
                    for k, v in rules.items()
                )
                + "."
            ),
            table(
                L.OVERRIDE_TABLE,
                [
                    [g, L.ELIGIBILITY_KEYS[k], number(v)]
                    for g, rules in overrides.items()
                    for k, v in rules.items()
                ],
                (45, 80, 45),
            ),
        ]
    return story


def _peers_and_periods_section(r: Mapping[str, Any]) -> list[Any]:
    """3. 동류그룹 and 4. 평가 기간과 가중치."""
    story: list[Any] = []
    story += [
        paragraph("3. 동류그룹", "h"),
        *(
            [
                paragraph(
                    "펀드는 유형별 동류그룹 안에서만 비교한다. 아래 표에 없는 유형의 펀드는 평가하지 않는다."
                ),
                table(L.PEER_TABLE, [[str(i), g] for i, g in enumerate(r["peer_groups"], 1)], (20, 150)),
            ]
            if "peer_groups" in r
            else [
                paragraph(
                    "펀드 유형은 평가 자료의 유형 분류를 따르며, 자료에 있는 유형마다 하나의 동류그룹으로 비교한다."
                )
            ]
        ),
        paragraph("4. 평가 기간과 가중치", "h"),
        paragraph(
            "평가 기간은 평가기준일로 끝나는 달력 기간(1년, 3년, 5년, 10년)이다. 펀드의 운용기간에 따라 아래 표에서 해당하는 "
            "가장 긴 최소 운용기간의 가중치를 적용한다. 예를 들어 5년 미만은 3년 성과만, 5년 이상 10년 미만은 5년 60%와 3년 "
            "40%를 반영한다."
        ),
        table(
            L.PERIOD_TABLE,
            [
                [number(rule["min_history_years"]), PERIOD_KO.get(p, p) + f" ({p})", number(w)]
                for rule in r["period_weights"]
                for p, w in rule["weights"].items()
            ],
            (55, 60, 55),
        ),
    ]
    return story


def _company_section(rule: Mapping[str, Any] | None) -> list[Any]:
    """10. 운용사 평가: the rule, the pillars and the company bands (only when the rubric states the rule)."""
    if not rule:
        return []
    w = rule["weights"]
    size = "설정원본 가중 평균" if rule["size_field"] == "set_amount_krw" else "단순 평균"
    values = {
        "min_funds": number(rule["min_funds"]),
        "size_field": rule["size_field"],
        "quantitative": number(w["quantitative"]),
        "qualitative": number(w["qualitative"]),
        "require_qualitative": L.YES_NO[bool(rule.get("require_qualitative", False))],
    }
    story: list[Any] = [
        paragraph("10. 운용사 평가", "h"),
        paragraph(
            f"운용사는 등급을 받은 소속 펀드의 종합 점수를 {size}하여 계량 점수를 구한다. 종류형 클래스는 한 펀드로 보아 설정원본을 "
            f"합하고 점수를 평균한다. 평가 펀드가 {number(rule['min_funds'])}개 미만인 운용사는 평가하지 않는다. 운용사 최종 점수는 계량 "
            f"{number(w['quantitative'])}%와 정성 {number(w['qualitative'])}%를 합산하며, 정성 항목은 1~5점을 (점수 - 1) × 25로 환산한다."
        ),
        table(L.COMPANY_TABLE, [[L.COMPANY_KEYS[k], v] for k, v in values.items()], (80, 90)),
    ]
    if rule.get("pillars"):
        story.append(paragraph("운용사 정성 항목과 가중치는 아래와 같다(5점이 가장 우수)."))
        story.append(_levels_table(L.COMPANY_PILLAR_TABLE, rule["pillars"]))
    total = 0.0
    rows = []
    for b in rule["bands"]:
        total += float(b["share"])
        rows.append([str(b["grade"]), b["label"], number(b["share"]), f"{total:g}"])
    story.append(
        paragraph(
            "평가 대상 운용사 전체에서 최종 점수의 상위 백분율로 아래 구간에 따라 등급을 부여한다(동점은 같은 순위)."
        )
    )
    story.append(table(L.COMPANY_BANDS_TABLE, rows, (25, 45, 45, 55)))
    return story


def _criteria_section(r: Mapping[str, Any]) -> list[Any]:
    story: list[Any] = [
        paragraph("5. 정량 평가 항목", "h"),
        paragraph(
            "각 지표는 동류그룹 안에서 백분위 점수(0~100, 높을수록 우수)로 환산한다. 변동성과 추적오차는 낮을수록, 최대낙폭은 "
            "0에 가까울수록 우수하다. 지표 점수를 지표 가중치로 합산해 항목 점수를, 항목 점수를 항목 가중치로 합산해 정량 점수를 구한다."
        ),
        table(
            L.CRITERIA_TABLE,
            _criteria_rows(r["criteria"]),
            (25, 30, 22, 40, 30, 23),
        ),
    ]
    by_type = r.get("criteria_by_type") or {}
    if by_type:
        story += [
            paragraph(f"다만 {', '.join(by_type)} 유형은 위 표 대신 아래 표의 항목과 가중치로 평가한다."),
            table(
                L.TYPE_CRITERIA_TABLE,
                [[group, *row] for group, criteria in by_type.items() for row in _criteria_rows(criteria)],
                (20, 23, 27, 20, 36, 26, 20),
            ),
        ]
    qual = r.get("qualitative")
    if qual:
        story += [
            paragraph("6. 정성 평가", "h"),
            paragraph(
                f"애널리스트가 각 항목을 1~5점으로 평가한다(5점이 가장 우수). 정성 점수가 있는 펀드는 최종 점수의 "
                f"{number(qual['weight'])}%를 정성 점수로 반영한다."
            ),
            _levels_table(L.QUALITATIVE_TABLE, qual["criteria"]),
        ]
    return story


def _bands_and_rewards(r: Mapping[str, Any]) -> list[Any]:
    try:
        cumulative = dict(grade_cutoffs(r))
    except (KeyError, TypeError, ValueError):
        cumulative = {}
    story: list[Any] = [
        paragraph("7. 등급 부여", "h"),
        paragraph(
            "최종 점수의 동류그룹 내 순위를 상위 백분율로 나타내고, 아래 구간에 따라 등급을 부여한다. 동점인 펀드는 같은 순위를 받는다."
        ),
        table(
            L.BANDS_TABLE,
            [
                [str(b["grade"]), b["label"], number(b["share"]), f"{cumulative.get(b['grade'], 0):g}"]
                for b in r["grade_bands"]
            ],
            (25, 45, 45, 55),
        ),
    ]
    if r.get("rewards"):
        story += [
            paragraph("8. 평가문 작성 모델 학습 보상", "h"),
            paragraph("평가문을 쓰는 언어모델을 GRPO로 학습할 때 아래 보상과 기본 가중치를 사용한다."),
            table(
                L.REWARDS_TABLE,
                [
                    [name, number(spec["weight"]), spec["description"], spec["description_ko"]]
                    for name, spec in r["rewards"].items()
                ],
                (32, 20, 60, 58),
            ),
        ]
    return story


def _levels_table(header: Sequence[str], items: Sequence[Mapping[str, Any]]) -> Any:
    """Weighted items an analyst scores 1–5 (qualitative criteria, company pillars): a row per described level."""
    rows = [
        [x["id"], x["name"], number(x["weight"]), lv, text]
        for x in items
        for lv, text in (x.get("levels") or {L.NO_LEVEL: L.NO_LEVEL}).items()
    ]
    return table(header, rows, (25, 25, 22, 12, 86))


def _criteria_rows(criteria: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """One row per criterion × metric: the criterion, its weight, the metric, its Korean name and weight."""
    return [
        [
            c["id"],
            c["name"],
            number(c["weight"]),
            m["metric"],
            METRICS[m["metric"]].label_ko if m["metric"] in METRICS else "-",
            number(m["weight"]),
        ]
        for c in criteria
        for m in c["metrics"]
    ]
