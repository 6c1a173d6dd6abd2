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
