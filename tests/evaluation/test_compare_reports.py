"""`evaluator compare` on reports with known flips: delta, paired CI, exact McNemar, flipped ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.schemas import schema_problems
from evaluator.evaluation.compare import compare_reports, compare_schema

R = "<reasoning>\nworking\n</reasoning>\n"
N = 10
A_RIGHT = set(range(0, 6))  # A answers items 0-5 correctly
B_RIGHT_STRICT = set(range(2, 9))  # B: 2-8 in the answer tag …
B_BARE = {9}  # … and item 9 as a bare number (right only under flexible extraction)


def _preds(
    path: Path, right: set[int], bare: set[int] = frozenset(), ids: range = range(N), question: str = "q"
) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i in ids:
            gold = i + 1
            if i in bare:
                completion = str(gold)
            else:
                completion = R + f"<answer>{gold if i in right else gold + 100}</answer>"
            fh.write(
                json.dumps(
                    {
                        "id": f"item-{i}",
                        "question": f"{question} {i}",
                        "answer": f"#### {gold}",
                        "completion": completion,
                    }
                )
                + "\n"
            )
    return path


def _report(tmp_path: Path, name: str, **kwargs) -> Path:
    preds = _preds(tmp_path / f"{name}.jsonl", **kwargs)
    out = tmp_path / name / "report.json"
    out.parent.mkdir()
    result = CliRunner().invoke(
        app, ["score", "--domain", "gsm8k", "--predictions", str(preds), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def _text(result) -> str:
    return " ".join(result.output.split())


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = _report(tmp_path, "a", right=A_RIGHT)
    b = _report(tmp_path, "b", right=B_RIGHT_STRICT, bare=B_BARE)
    return a, b


def test_compare_counts_flips_and_tests_them(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    a, b = pair
    out = tmp_path / "cmp.json"
    result = CliRunner().invoke(app, ["compare", str(a), str(b.parent), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "McNemar" in result.output and "item-6" in result.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert schema_problems(doc, compare_schema()) == []
    assert doc["n_common"] == N and doc["only_in_a"] == [] and doc["content_mismatch"] == []

    strict = doc["results"]["strict"]
    assert strict["accuracy_a"] == pytest.approx(0.6) and strict["accuracy_b"] == pytest.approx(0.7)
    assert strict["delta"] == pytest.approx(0.1)
    assert strict["gained"] == ["item-6", "item-7", "item-8"] and strict["lost"] == ["item-0", "item-1"]
    assert strict["both_correct"] == 4 and strict["both_wrong"] == 1
    assert strict["mcnemar_p"] == pytest.approx(binomtest(2, 5, 0.5).pvalue)
    lo, hi = strict["ci95"]
    assert -1 <= lo < 0.1 < hi <= 1

    flexible = doc["results"]["flexible"]
    assert flexible["delta"] == pytest.approx(0.2)
    assert flexible["gained"] == ["item-6", "item-7", "item-8", "item-9"]
    assert flexible["mcnemar_p"] == pytest.approx(binomtest(2, 6, 0.5).pvalue)

    # Swapping the sides mirrors every figure.
    swapped = compare_reports(json.loads(b.read_text()), json.loads(a.read_text()))
    assert swapped["results"]["strict"]["delta"] == pytest.approx(-0.1)
    assert swapped["results"]["strict"]["gained"] == strict["lost"]
    assert swapped["results"]["strict"]["mcnemar_p"] == pytest.approx(strict["mcnemar_p"])


def test_compare_only_uses_items_both_reports_graded_the_same(tmp_path: Path) -> None:
    a = _report(tmp_path, "a", right=A_RIGHT)
    b = _report(tmp_path, "b", right=set(range(N)), ids=range(3, 12))
    doc = compare_reports(json.loads(a.read_text()), json.loads(b.read_text()))
    assert doc["n_common"] == 7
    assert doc["only_in_a"] == ["item-0", "item-1", "item-2"] and doc["only_in_b"] == ["item-10", "item-11"]
    assert doc["results"]["strict"]["gained"] == ["item-6", "item-7", "item-8", "item-9"]
    assert any("7 shared items" in w for w in doc["warnings"])

    other = _report(tmp_path, "other", right=A_RIGHT, question="another question")
    with pytest.raises(ValueError, match="share no items"):
        compare_reports(json.loads(a.read_text()), json.loads(other.read_text()))


def test_compare_refuses_what_cannot_be_compared(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    a, b = pair
    runner = CliRunner()
    fund = json.loads(b.read_text())
    fund["domain"] = "fund"
    fund_path = tmp_path / "fund.json"
    fund_path.write_text(json.dumps(fund))
    result = runner.invoke(app, ["compare", str(a), str(fund_path)])
    assert result.exit_code == 2 and "cannot compare a gsm8k report with a fund report" in _text(result)

    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"accuracy": 0.5}))
    result = runner.invoke(app, ["compare", str(a), str(broken)])
    assert result.exit_code == 2 and "is not valid" in _text(result) and "Traceback" not in result.output

    result = runner.invoke(app, ["compare", str(a), str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "no evaluation report" in _text(result)

    out = tmp_path / "cmp.json"
    out.write_text("keep me")
    result = runner.invoke(app, ["compare", str(a), str(b), "--out", str(out)])
    assert result.exit_code == 2 and "--force" in _text(result)
    assert out.read_text() == "keep me"
    assert runner.invoke(app, ["compare", str(a), str(b), "--out", str(out), "--force"]).exit_code == 0
    assert json.loads(out.read_text())["n_common"] == N
