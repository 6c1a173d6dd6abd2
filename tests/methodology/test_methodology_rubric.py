"""Rubric validation: the built-in rubric is valid, and every kind of violation is explained in plain words."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.rubric import default_rubric
from evaluator.methodology.rubric import (
    RubricError,
    grade_cutoffs,
    load_rubric,
    rubric_problems,
    rubric_schema,
)

runner = CliRunner()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_builtin_rubric_is_valid_and_shaped_like_the_methodology() -> None:
    r = default_rubric()
    assert rubric_problems(r) == []
    assert rubric_schema()["title"] == "Fund-rating rubric"
    assert grade_cutoffs(r) == [(1, 10.0), (2, 32.5), (3, 67.5), (4, 90.0), (5, 100.0)]
    assert [rule["weights"] for rule in r["period_weights"]] == [
        {"3y": 100},
        {"5y": 60, "3y": 40},
        {"10y": 50, "5y": 30, "3y": 20},
    ]
    assert {"국내주식형", "해외주식형", "채권형", "혼합형"} <= set(r["peer_groups"])
    assert [c["name"] for c in r["qualitative"]["criteria"]] == ["운용철학", "조직안정성", "리스크관리체계"]
    assert {k: v["weight"] for k, v in r["rewards"].items()} == {
        "json_format": 10,
        "grade_accuracy": 50,
        "reasoning_quality": 30,
        "consistency": 10,
    }


def _broken(edit) -> list[str]:  # type: ignore[no-untyped-def]
    r = copy.deepcopy(default_rubric())
    edit(r)
    return rubric_problems(r)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda r: r["criteria"][0].update(weight=10), "criteria weights add up to 90, not 100"),
        (
            lambda r: r["criteria"][1]["metrics"][0].update(weight=30),
            "metric weights of criterion 'risk_adjusted' add up to 90, not 100",
        ),
        (
            lambda r: r["criteria"][1]["metrics"][0].update(metric="sharp"),
            "unknown metric 'sharp' (did you mean 'sharpe'?)",
        ),
        (lambda r: r["criteria"][3]["metrics"][0].update(metric="beta"), "no better/worse direction"),
        (
            lambda r: r["criteria"][2]["metrics"].append(dict(r["criteria"][2]["metrics"][0])),
            "lists metric 'annualized_volatility' twice",
        ),
        (lambda r: r["criteria"][3].update(id="return"), "criterion id 'return' is used twice"),
        (lambda r: r["grade_bands"].pop(2), "missing grade band for 3등급"),
        (lambda r: r["grade_bands"][4].update(share=15), "grade band shares add up to 105, not 100"),
        (lambda r: r["grade_bands"].reverse(), "from 1등급 (best) to 5등급"),
        (
            lambda r: r["period_weights"][1]["weights"].update({"5y": 50}),
            "at least 5 years of history add up to 90, not 100",
        ),
        (
            lambda r: r["period_weights"][0].update(weights={"5y": 100}),
            "use the 5y window, longer than that history",
        ),
        (lambda r: r["period_weights"].pop(0), "no period weights for funds with 3 to 5 years of history"),
        (lambda r: r["period_weights"][0]["weights"].update({"2y": 0}), "unknown period '2y'"),
        (lambda r: r["qualitative"]["criteria"][0]["levels"].pop("5"), "no description for level(s) 5"),
        (
            lambda r: r["qualitative"]["criteria"][0].update(weight=50),
            "qualitative criteria weights add up to 110, not 100",
        ),
        (lambda r: r.update(name="표준  방법론"), "text at name has a line break"),
        (lambda r: r.pop("grade_bands"), "'grade_bands' is a required property"),
        (
            lambda r: r["eligibility"].update(min_history_years="3년"),
            "at eligibility/min_history_years: '3년' is not of type 'number'",
        ),
        (lambda r: r.update(critera=[]), "'critera' was unexpected"),
    ],
)
def test_each_violation_is_explained(edit, expected: str) -> None:  # type: ignore[no-untyped-def]
    problems = _broken(edit)
    assert any(expected in p for p in problems), problems


def test_cli_validate_lists_every_problem(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(default_rubric(), ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, ["methodology", "validate", str(good)])
    assert result.exit_code == 0 and "valid" in result.output and "4 criteria" in result.output
    r = default_rubric()
    r["criteria"][0]["weight"] = 10
    r["criteria"][1]["metrics"][0]["metric"] = "sharp"
    del r["grade_bands"][0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(r, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, ["methodology", "validate", str(bad)])
    said = _one_line(result.output)
    assert result.exit_code == 1
    for expected in (
        "criteria weights add up to 90, not 100",
        "unknown metric 'sharp'",
        "missing grade band for 1등급",
    ):
        assert expected in said
    assert "Traceback" not in said


def test_unreadable_or_missing_rubric_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(RubricError, match="not readable JSON"):
        load_rubric(broken)
    result = runner.invoke(app, ["methodology", "validate", str(tmp_path / "nope.json")])
    assert result.exit_code == 1 and "does not exist" in _one_line(result.output)
