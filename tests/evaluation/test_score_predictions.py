"""`evaluator score` end to end on hand-written completions: ordinary answer forms, reward hacks, bad lines.

Each case states what a careful human grader would decide under strict extraction (the style's answer
slot only) and flexible extraction (GSM8K's own final-answer markers, else the last number).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.schemas import schema_problems
from evaluator.domains.registry import get_pack
from evaluator.evaluation.report import report_schema, samples_schema

R = "<reasoning>\nShe buys 3 bags of 6, so 3 * 6 = 18.\n</reasoning>\n"
T = "<THINK>\n3 * 6 = 18\n</THINK>\n"
Q = "<think>\n3 bags of 6 apples: 3 * 6 = 18.\n</think>\n\n"
G18 = "She buys 3 bags.\nEach bag has 6 apples.\n3 * 6 = <<3*6=18>>18\n#### 18"

# (style, answer field, completion, correct under strict, correct under flexible)
CASES: list[tuple[str, object, str, bool, bool]] = [
    # --- ordinary answer forms, xml style --------------------------------------------------------------
    ("xml", G18, R + "<answer>\n18\n</answer>", True, True),
    ("xml", G18, R + "<answer>18</answer>", True, True),
    ("xml", G18, R + "<answer>$18</answer>", True, True),
    ("xml", G18, R + "<answer>18 dollars.</answer>", True, True),
    ("xml", G18, R + "<answer>\\boxed{18}</answer>", True, True),
    ("xml", G18, R + "<answer>**18**</answer>", True, True),
    ("xml", G18, R + "<answer>The answer is 18.</answer>", True, True),
    ("xml", G18, R + "<answer>18%</answer>", True, True),
    ("xml", G18, R + "<answer>18.0</answer>", True, True),
    ("xml", G18, R + "<answer>$18.00</answer>", True, True),
    ("xml", G18, R + "<answer>18 apples</answer>", True, True),
    ("xml", "#### 1234.5", R + "<answer>$1,234.50</answer>", True, True),
    ("xml", "#### 1234.5", R + "<answer>1234.5</answer>", True, True),
    ("xml", "Total: 1,234 dollars\n#### 1,234", R + "<answer>1,234</answer>", True, True),
    ("xml", "#### 1234", R + "<answer>1234</answer>", True, True),
    ("xml", "#### -5", R + "<answer>-5</answer>", True, True),
    ("xml", "#### 0.75", R + "<answer>3/4</answer>", True, True),
    ("xml", "#### 0.75", R + "<answer>0.75</answer>", True, True),
    ("xml", "#### 0.5", R + "<answer>\\frac{1}{2}</answer>", True, True),
    ("xml", "18", R + "<answer>18</answer>", True, True),
    ("xml", 18, R + "<answer>18</answer>", True, True),
    ("xml", G18, R + "<answer>18</answer>\n<answer>18</answer>", True, True),
    # --- wrong answers -----------------------------------------------------------------------------------
    ("xml", G18, R + "<answer>17</answer>", False, False),
    ("xml", G18, R + "<answer>-18</answer>", False, False),
    ("xml", G18, R + "<answer>18.5</answer>", False, False),
    ("xml", "#### -5", R + "<answer>5</answer>", False, False),
    ("xml", G18, R + "<answer>eighteen</answer>", False, False),
    # --- reward hacks: must never count ------------------------------------------------------------------
    ("xml", G18, R + "<answer>17 or 18</answer>", False, False),
    ("xml", G18, R + "<answer>17, 18</answer>", False, False),
    ("xml", G18, R + "<answer>[17, 18]</answer>", False, False),
    ("xml", G18, R + "<answer>17-18</answer>", False, False),
    ("xml", G18, R + "<answer>between 17 and 19</answer>", False, False),
    ("xml", G18, R + "<answer>1, 2, 3, 18</answer>", False, False),
    ("xml", G18, R + "<answer>17</answer>\n<answer>18</answer>", False, False),
    ("xml", G18, R + "<answer>18</answer><answer>19</answer><answer>20</answer>", False, False),
    ("xml", G18, R + "<answer></answer>\nThe answer is 18.", False, False),
    ("xml", G18, R + "<answer> </answer>\n18", False, False),
    ("xml", G18, R + "<answer><answer>18</answer></answer>", False, False),
    # --- no answer slot: strict refuses, flexible reads like GSM8K's graders / lm-eval -------------------
    ("xml", G18, "18", False, True),
    ("xml", G18, "The answer is 18.", False, True),
    ("xml", G18, "3 bags of 6 apples is 3*6=<<3*6=18>>18 apples.\n#### 18", False, True),
    ("xml", G18, "Each bag has 6 apples and she buys 3.\nA: 18", False, True),
    ("xml", G18, "I think she ends up with 18 apples", False, True),
    ("xml", G18, "The answer is 18. Check: 18 = 3 * 6", False, True),
    ("xml", G18, "So the total is \\boxed{18}.", False, True),
    ("xml", "#### 20", "She pays 20 dollars. <<4*5=21>>", False, True),
    ("xml", G18, "She had 18 apples, then bought 2 more, so 20.", False, False),
    ("xml", G18, R + "<answer>18", False, True),
    # --- think-solution style ----------------------------------------------------------------------------
    ("think-solution", G18, T + "<SOLUTION>18</SOLUTION>", True, True),
    ("think-solution", "#### 1234.5", T + "<SOLUTION>$1,234.50</SOLUTION>", True, True),
    ("think-solution", G18, T + "<SOLUTION>17</SOLUTION>", False, False),
    ("think-solution", G18, T + "<SOLUTION>17</SOLUTION><SOLUTION>18</SOLUTION>", False, False),
    ("think-solution", G18, T + "<SOLUTION></SOLUTION> 18", False, False),
    ("think-solution", G18, T + "<SOLUTION>17 to 18</SOLUTION>", False, False),
    ("think-solution", G18, T + "<answer>18</answer>", False, True),
    ("think-solution", G18, "18", False, True),
    # --- qwen3-think style ---------------------------------------------------------------------------------
    ("qwen3-think", G18, Q + "The answer is \\boxed{18}.", True, True),
    ("qwen3-think", G18, Q + "\\boxed{18}", True, True),
    ("qwen3-think", G18, Q + "Answer: 18", True, True),
    ("qwen3-think", G18, Q + "The answer is 18.", True, True),
    ("qwen3-think", G18, Q + "정답: 18", True, True),
    ("qwen3-think", "#### -5", Q + "The answer is \\boxed{-5}.", True, True),
    ("qwen3-think", "#### 0.75", Q + "The answer is \\boxed{\\frac{3}{4}}.", True, True),
    ("qwen3-think", G18, Q + "The answer is \\boxed{17}.", False, False),
    ("qwen3-think", G18, Q + "\\boxed{17} \\boxed{18}", False, False),
    ("qwen3-think", G18, Q + "\\boxed{17 or 18}", False, False),
    ("qwen3-think", G18, Q + "\\boxed{} 18", False, False),
    ("qwen3-think", G18, Q + "</think>\n\\boxed{18}", False, False),
    ("qwen3-think", G18, "<think>\nmaybe it is 18\n</think>", False, True),
    ("qwen3-think", G18, "The answer is \\boxed{18}.", False, True),
    ("qwen3-think", G18, Q + "**18**", False, True),
]


def _write_cases(path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i, (style, answer, completion, _, _) in enumerate(CASES):
            line = {
                "id": f"case-{i:03d}",
                "question": "A bag holds 6 apples. How many apples are in 3 bags?",
                "answer": answer,
                "completion": completion,
                "style": style,
            }
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def _score(tmp_path: Path, extract: str, *extra: str) -> tuple[dict, list[dict]]:
    preds = tmp_path / "preds.jsonl"
    if not preds.exists():
        _write_cases(preds)
    report_path, samples_path = tmp_path / f"report-{extract}.json", tmp_path / f"samples-{extract}.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--domain",
            "gsm8k",
            "--predictions",
            str(preds),
            "--extract",
            extract,
            "--out",
            str(report_path),
            "--samples-out",
            str(samples_path),
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text(encoding="utf-8"))
    samples = [json.loads(line) for line in samples_path.read_text(encoding="utf-8").splitlines()]
    return report, samples


def test_case_list_is_large_and_covers_every_style() -> None:
    assert len(CASES) >= 60
    assert {c[0] for c in CASES} == {"xml", "think-solution", "qwen3-think"}
    assert sum(1 for c in CASES if c[3]) >= 20 and sum(1 for c in CASES if not c[4]) >= 20


@pytest.mark.parametrize("extract", ["strict", "flexible"])
def test_every_verdict_matches_a_careful_grader(tmp_path: Path, extract: str) -> None:
    report, samples = _score(tmp_path, extract)
    assert len(samples) == len(CASES)
    wrong = []
    for i, (sample, case) in enumerate(zip(samples, CASES, strict=True)):
        assert sample["id"] == f"case-{i:03d}" and sample["line"] == i + 1  # same order as the input
        expected = case[3] if extract == "strict" else case[4]
        if sample["correct"] is not expected or sample["correct_strict"] is not case[3]:
            wrong.append(
                (i, case[0], case[2][-60:], sample["extracted_strict"], sample["extracted_flexible"])
            )
        if sample["correct_flexible"] is not case[4]:
            wrong.append(
                (i, case[0], case[2][-60:], sample["extracted_strict"], sample["extracted_flexible"])
            )
        assert sample["extract"] == extract
        assert sample["extracted"] == sample[f"extracted_{extract}"]
        if not sample["correct"]:
            continue
        assert sample["extracted"] is not None
    assert not wrong, "\n".join(map(repr, wrong))
    n_strict = sum(c[3] for c in CASES)
    n_flex = sum(c[4] for c in CASES)
    assert report["accuracy"]["strict"]["n_correct"] == n_strict
    assert report["accuracy"]["flexible"]["n_correct"] == n_flex
    assert report["accuracy"]["strict"]["value"] == pytest.approx(n_strict / len(CASES))
    lo, hi = report["accuracy"]["flexible"]["ci95"]
    assert lo < n_flex / len(CASES) < hi
    assert report["extract"] == extract and report["kind"] == "score"
    assert report["n_items"] == len(CASES) and report["n_samples"] == 1
    assert report["pass_at_k"] is None and report["maj_at_k"] is None
    assert schema_problems(report, report_schema()) == []
    for sample in samples:
        assert schema_problems(sample, samples_schema()) == []


def test_extracted_values_are_normalised_numbers(tmp_path: Path) -> None:
    _, samples = _score(tmp_path, "strict")
    by_completion = {c[2]: s for c, s in zip(CASES, samples, strict=True)}
    assert float(by_completion[R + "<answer>$1,234.50</answer>"]["extracted"]) == 1234.5
    assert float(by_completion[R + "<answer>-5</answer>"]["extracted"]) == -5
    assert by_completion[R + "<answer>17 or 18</answer>"]["extracted"] is None
    assert by_completion["18"]["extracted"] is None
    assert float(by_completion["18"]["extracted_flexible"]) == 18


def test_reward_scores_are_the_trainers_reward_functions(tmp_path: Path) -> None:
    """One grader, two callers: the per-sample scores equal the TRL reward functions called directly."""
    report, samples = _score(tmp_path, "strict")
    pack = get_pack("gsm8k")
    from evaluator.domains.gsm8k.pack import parse_gold

    completions = [c[2] for c in CASES]
    columns = {"answer": [parse_gold(str(c[1])) for c in CASES], "style": [c[0] for c in CASES]}
    for name, fn in pack.reward_functions().items():
        direct = fn(completions, **columns)
        assert [s["scores"][name] for s in samples] == direct, name
        present = [v for v in direct if v is not None]
        assert report["reward_means"][name] == pytest.approx(sum(present) / len(present))
    # correctness reward and strict verdict are the same decision
    assert [s["scores"]["correctness"] == 1.0 for s in samples] == [s["correct_strict"] for s in samples]
    format_rate = sum(s["format_ok"] for s in samples) / len(samples)
    assert report["format_rate"]["value"] == pytest.approx(format_rate)


def test_bad_lines_are_reported_and_the_rest_still_scored(tmp_path: Path) -> None:
    preds = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps({"question": "q1", "answer": "#### 18", "completion": R + "<answer>18</answer>"}),
        "{not json",
        json.dumps({"question": "q3", "answer": "#### 7"}),
        json.dumps({"question": "q4", "answer": "", "completion": R + "<answer>4</answer>"}),
        "",
        json.dumps(
            {"question": "q6", "answer": "#### 5", "completion": R + "<answer>5</answer>", "style": "bogus"}
        ),
        json.dumps({"id": "x", "question": "q7", "answer": "9", "completion": R + "<answer>8</answer>"}),
        json.dumps({"id": "x", "question": "q8", "answer": "9", "completion": R + "<answer>9</answer>"}),
        json.dumps(
            {
                "question": "q9",
                "answer": "#### 3",
                "completion": [{"role": "assistant", "content": R + "<answer>3</answer>"}],
            }
        ),
    ]
    preds.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, samples_out = tmp_path / "r.json", tmp_path / "s.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--domain",
            "gsm8k",
            "--predictions",
            str(preds),
            "--out",
            str(out),
            "--samples-out",
            str(samples_out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    samples = [json.loads(s) for s in samples_out.read_text(encoding="utf-8").splitlines()]
    assert [s["line"] for s in samples] == [1, 2, 3, 4, 6, 7, 8, 9]
    assert report["n_invalid_lines"] == 4
    assert report["n_items"] == 4
    assert report["accuracy"]["strict"]["n_correct"] == 3
    errors = {e["line"]: e["message"] for e in report["errors"]}
    assert set(errors) == {2, 3, 4, 6}
    assert (
        "JSON" in errors[2] and "completion" in errors[3] and "answer" in errors[4] and "bogus" in errors[6]
    )
    assert all(s["correct"] is False and "error" in s for s in samples if s["line"] in errors)
    assert [s["id"] for s in samples if s["line"] in (7, 8)] == ["x", "x@line8"]
    assert any("already used" in w for w in report["warnings"])
    assert samples[-1]["correct"] is True  # chat-message completions are read too
    assert schema_problems(report, report_schema()) == []


@pytest.mark.skipif(
    not hasattr(get_pack("gsm8k"), "gold_from_field"), reason="gsm8k pack has no gold_from_field hook yet"
)
def test_an_answer_field_without_a_final_number_is_a_bad_line(tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    rows = [
        {"question": "q1", "answer": "She has 3 apples.\n#### ", "completion": R + "<answer>3</answer>"},
        {"question": "q2", "answer": "Twelve eggs.\n#### 12", "completion": R + "<answer>12</answer>"},
    ]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out, samples_out = tmp_path / "r.json", tmp_path / "s.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--domain",
            "gsm8k",
            "--predictions",
            str(preds),
            "--out",
            str(out),
            "--samples-out",
            str(samples_out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["n_invalid_lines"] == 1 and report["n_items"] == 1
    assert report["errors"][0]["line"] == 1 and "answer" in report["errors"][0]["message"]
    samples = [json.loads(s) for s in samples_out.read_text(encoding="utf-8").splitlines()]
    assert samples[1]["gold"] == "12" and samples[1]["gold_field"] == rows[1]["answer"]
    assert samples[1]["correct"] is True


def _text(result) -> str:
    """CLI output with Rich's line wrapping undone."""
    return " ".join(result.output.split())


def test_refuses_to_overwrite_and_explains_bad_input(tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"question": "q", "answer": "1", "completion": "1"}) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    out.write_text("{}", encoding="utf-8")
    runner = CliRunner()
    base = ["score", "--domain", "gsm8k", "--predictions", str(preds), "--out", str(out)]
    result = runner.invoke(app, base)
    assert result.exit_code == 2 and "--force" in _text(result) and "Traceback" not in result.output
    assert out.read_text(encoding="utf-8") == "{}"
    assert runner.invoke(app, [*base, "--force"]).exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8"))["n_items"] == 1

    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n{broken\n", encoding="utf-8")
    result = runner.invoke(
        app, ["score", "--domain", "gsm8k", "--predictions", str(empty), "--out", str(tmp_path / "e.json")]
    )
    assert result.exit_code == 2 and "no line that can be scored" in _text(result)
    assert not (tmp_path / "e.json").exists()

    for args, needle in (
        (["--style", "nope"], "nope"),
        (["--extract", "loose"], "strict or flexible"),
    ):
        result = runner.invoke(app, [*base, "--force", *args])
        assert result.exit_code == 2 and needle in _text(result), result.output
    result = runner.invoke(
        app, ["score", "--domain", "chess", "--predictions", str(preds), "--out", str(tmp_path / "c.json")]
    )
    assert result.exit_code == 2 and "unknown domain" in _text(result)
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(
        app, ["score", "--domain", "gsm8k", "--predictions", str(missing), "--out", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 2 and "does not exist" in _text(result)


def test_real_gsm8k_reference_solutions_grade_like_the_gsm8k_authors(gsm8k_dir: Path, tmp_path: Path) -> None:
    """GSM8K's own worked solutions (calculator annotations, ``#### N`` ending) are right under flexible
    extraction, not under strict (no answer tag); the same solutions with a wrong final line are wrong."""
    rows = [
        json.loads(line) for line in (gsm8k_dir / "test.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    ]
    preds = tmp_path / "real.jsonl"
    with open(preds, "w", encoding="utf-8") as fh:
        for i, row in enumerate(rows):
            body, _, final = row["answer"].rpartition("####")
            fh.write(json.dumps({"id": f"ok-{i}", **row, "completion": row["answer"]}) + "\n")
            wrong = f"{body}#### {final.strip().replace(',', '')}1"
            fh.write(json.dumps({"id": f"bad-{i}", **row, "completion": wrong}) + "\n")
    out, samples_out = tmp_path / "r.json", tmp_path / "s.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--domain",
            "gsm8k",
            "--predictions",
            str(preds),
            "--extract",
            "flexible",
            "--out",
            str(out),
            "--samples-out",
            str(samples_out),
        ],
    )
    assert result.exit_code == 0, result.output
    samples = [json.loads(s) for s in samples_out.read_text(encoding="utf-8").splitlines()]
    ok = [s for s in samples if s["id"].startswith("ok-")]
    bad = [s for s in samples if s["id"].startswith("bad-")]
    assert [s["id"] for s in ok if not s["correct"]] == []
    assert [s["id"] for s in bad if s["correct"]] == []
    assert not any(s["correct_strict"] for s in samples)
