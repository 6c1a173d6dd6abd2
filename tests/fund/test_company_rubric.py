"""The rubric's optional company_rating section: schema, the checks a schema cannot make, and the
methodology PDF round trip (render → ingest gives the same rule back)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from evaluator.domains.fund.rubric import default_rubric
from evaluator.methodology.pdf_ingest import ingest_pdf
from evaluator.methodology.pdf_render import render_pdf
from evaluator.methodology.rubric import rubric_problems


def _with(change) -> list[str]:  # type: ignore[no-untyped-def]
    r = default_rubric()
    change(r["company_rating"])
    return rubric_problems(r)


def test_default_rubric_states_the_rule() -> None:
    rule = default_rubric()["company_rating"]
    assert rule["min_funds"] == 3 and rule["size_field"] == "set_amount_krw"
    assert rule["weights"] == {"quantitative": 70, "qualitative": 30}
    assert [p["name"] for p in rule["pillars"]] == [
        "운용철학",
        "조직안정성",
        "리스크관리체계",
        "운용인력",
        "시스템 인프라",
    ]
    no_rule = default_rubric()
    del no_rule["company_rating"]
    assert rubric_problems(no_rule) == []  # optional


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda r: r["weights"].update(quantitative=80),
            "company_rating weights (quantitative + qualitative) add up to 110",
        ),
        (lambda r: r["pillars"][0].update(weight=30), "company_rating pillar weights add up to 105"),
        (lambda r: r.update(pillars=[]), "gives qualitative pillars 30% of the score but lists no pillars"),
        (lambda r: r["bands"][1].update(grade=3), "bands must be listed as grades 1 (best) to 5"),
        (lambda r: r["bands"][0].update(share=20), "company_rating band shares add up to 110"),
        (lambda r: r["pillars"][1].update(id="philosophy"), "share an id or a name"),
        (lambda r: r.update(size_field="aum"), "size_field"),
        (lambda r: r.update(min_funds=0), "min_funds"),
        (
            lambda r: r.update(weights={"quantitative": 100, "qualitative": 0}, require_qualitative=True),
            "requires qualitative pillars but gives them no weight",
        ),
    ],
)
def test_bad_rules_are_explained(change, message: str) -> None:  # type: ignore[no-untyped-def]
    problems = _with(change)
    assert any(message in p for p in problems), problems


def test_seven_grade_company_scale_is_accepted() -> None:
    def seven(r: dict) -> None:
        r["bands"] = [
            {"grade": g, "label": f"{g}등급", "share": s} for g, s in enumerate([5, 10, 15, 40, 15, 10, 5], 1)
        ]

    assert _with(seven) == []


def test_render_and_ingest_round_trip(tmp_path: Path) -> None:
    rubric = default_rubric()
    rule = rubric["company_rating"]
    rule["require_qualitative"] = True
    rule["pillars"][2]["levels"] = {str(i): f"리스크 관리 수준 {i}" for i in range(1, 6)}
    rule["bands"] = [{"grade": 1, "label": "A", "share": 25}, {"grade": 2, "label": "B", "share": 50},
                     {"grade": 3, "label": "C", "share": 25}]  # fmt: skip
    pdf = render_pdf(rubric, tmp_path / "m.pdf")
    assert ingest_pdf(pdf) == rubric
    plain = copy.deepcopy(rubric)
    del plain["company_rating"]
    assert ingest_pdf(render_pdf(plain, tmp_path / "plain.pdf")) == plain


def _firm_doc(company: list[str], pillar_table: bool = True) -> bytes:
    from methodology_pdfdoc import Doc

    doc = (
        Doc("HYGothic-Medium")
        .p("펀드 및 운용사 성과평가 규정")
        .p("제1조(버전) 이 규정은 2024.2 판이다.")
        .p("제2조(유형) 평가 유형은 주식형, 채권형, 혼합형으로 구분한다.")
        .p("제3조(대상) 운용기간 2년 이상, 설정원본 200억원 이상인 펀드를 대상으로 한다.")
        .p("제4조(최소 펀드 수) 동일 유형 내 평가대상 펀드가 7개 미만인 경우 등급을 산출하지 아니한다.")
        .p("제5조(지표) 평가지표와 가중치는 연환산 수익률 30%, 샤프지수 40%, 최대손실률 30%로 한다.")
        .p(
            "제6조(기간) 운용기간 2년 이상 3년 미만인 펀드는 1년 100%를 반영한다. 3년 이상인 펀드는 1년 40%, 3년 60%를 반영한다."
        )
        .p(
            "제7조(등급) 1등급: 상위 10% 이내, 2등급: 상위 10% 초과 30% 이내, 3등급: 상위 30% 초과 70% 이내, "
            "4등급: 상위 70% 초과 90% 이내, 5등급: 상위 90% 초과."
        )
    )
    for text in company:
        doc.p(text)
    if pillar_table:
        doc.table(
            [["운용사 정성평가 항목", "가중치(%)"], ["운용철학", "30"], ["조직안정성", "25"], ["리스크관리체계", "25"],
             ["시스템 인프라", "20"]],
            (60, 40),
        )  # fmt: skip
    return doc.build()


def test_a_firm_document_that_rates_managers_is_read(tmp_path: Path) -> None:
    pdf = tmp_path / "firm.pdf"
    pdf.write_bytes(
        _firm_doc(
            [
                "제8조(운용사 평가) 운용사 평가는 등급을 받은 소속 펀드가 3개 이상인 운용사를 대상으로 한다.",
                "운용사 점수는 소속 펀드 점수를 설정원본으로 가중 평균한 계량점수 70%와 아래 운용사 정성평가 점수 30%를 합산한다.",
                "정성평가를 받지 않은 운용사는 평가하지 않는다.",
            ]
        )
    )
    rubric = ingest_pdf(pdf)
    rule = rubric["company_rating"]
    assert rule["min_funds"] == 3 and rule["size_field"] == "set_amount_krw" and rule["require_qualitative"]
    assert rule["weights"] == {"quantitative": 70, "qualitative": 30}
    assert [(p["id"], p["name"], p["weight"]) for p in rule["pillars"]] == [
        ("philosophy", "운용철학", 30), ("organization", "조직안정성", 25), ("risk_management", "리스크관리체계", 25),
        ("infrastructure", "시스템 인프라", 20),
    ]  # fmt: skip
    assert rule["bands"] == rubric["grade_bands"]
    assert len(rubric["criteria"]) >= 1  # the fund rules are read as before


def test_a_firm_document_without_a_manager_rule_has_none_and_an_incomplete_one_is_refused(
    tmp_path: Path,
) -> None:
    from evaluator.methodology.ingest_findings import IngestError

    plain = tmp_path / "plain.pdf"
    plain.write_bytes(_firm_doc([], pillar_table=False))
    assert "company_rating" not in ingest_pdf(plain)
    partial = tmp_path / "partial.pdf"
    partial.write_bytes(
        _firm_doc(["제8조(운용사 평가) 운용사 점수는 계량 70%, 정성 30%로 산출한다."], pillar_table=False)
    )
    with pytest.raises(IngestError) as err:
        ingest_pdf(partial)
    message = " ".join(str(err.value).split())
    assert "rates 운용사 but does not state the minimum number of rated funds" in message
    assert "the qualitative pillars and their weights" in message
