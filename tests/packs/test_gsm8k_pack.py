"""The GSM8K pack as a whole: registry, rubric and its schema, reference solutions, judge context, corpus."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.core.schemas import SchemaError, load_schema, schema_problems
from evaluator.domains.gsm8k.pack import GSM8KPack, load_rubric, validate_rubric
from evaluator.domains.registry import get_pack

PACK = get_pack("gsm8k")


def test_registry_gives_the_gsm8k_pack() -> None:
    assert isinstance(PACK, GSM8KPack)
    assert (PACK.name, PACK.styles, PACK.primary_reward) == (
        "gsm8k",
        ("xml", "think-solution", "qwen3-think"),
        "correctness",
    )
    assert PACK.default_style == "xml"


def test_rubric_is_valid_and_holds_the_recipe_weights() -> None:
    rubric = PACK.rubric()
    assert schema_problems(rubric, load_schema("evaluator.domains.gsm8k", "rubric.schema.json")) == []
    assert PACK.default_weights() == {
        "correctness": 2.0,
        "int": 0.5,
        "strict_format": 0.5,
        "soft_format": 0.5,
        "xmlcount": 0.5,
    }
    assert set(PACK.reward_descriptions()) == set(PACK.reward_functions())
    assert rubric["styles"] == list(PACK.styles) and rubric["languages"] == ["en", "ko"]
    rubric["rewards"]["correctness"]["weight"] = 99.0
    assert PACK.rubric()["rewards"]["correctness"]["weight"] == 2.0  # callers get copies


def _broken(change) -> dict:
    doc = copy.deepcopy(load_rubric())
    change(doc)
    return doc


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["rewards"].update(length={"weight": 1.0, "description": "x"}), "rewards"),
        (lambda d: d["rewards"]["int"].update(weight=0), "rewards/int/weight"),
        (lambda d: d["rewards"]["xmlcount"].update(weight=-0.5), "rewards/xmlcount/weight"),
        (lambda d: d["rewards"].pop("correctness"), "'correctness' is a required property"),
        (lambda d: d["rewards"]["int"].pop("description"), "'description' is a required property"),
        (lambda d: d.update(default_style="yaml"), "default_style"),
        (lambda d: d.update(styles=["xml", "xml"]), "styles"),
        (lambda d: d.update(languages=["fr"]), "languages/0"),
        (lambda d: d.pop("version"), "'version' is a required property"),
        (lambda d: d.update(colour="blue"), "colour"),
        (lambda d: d["judge_levels"].pop("5"), "'5' is a required property"),
        (lambda d: d["judge_levels"].update({"6": "too high"}), "judge_levels"),
        (lambda d: d.update(styles=["qwen3-think"]), "default_style: 'xml' is not one of its styles"),
    ],
)
def test_schema_rejects_bad_rubrics(change, problem: str) -> None:
    with pytest.raises(SchemaError) as info:
        validate_rubric(_broken(change))
    assert any(problem in p for p in info.value.problems), info.value.problems


def test_gold_from_field() -> None:
    assert PACK.gold_from_field("She has 3 + 9 = <<3+9=12>>12.\n#### 1,012") == "1012"
    assert PACK.gold_from_field(42) == "42"
    with pytest.raises(ValueError, match="no single final answer"):
        PACK.gold_from_field("She has 3 apples.\n#### ")


def test_judge_levels_come_from_the_rubric() -> None:
    levels = PACK.judge_levels()
    assert list(levels) == ["0", "1", "2", "3", "4", "5"]
    assert levels == load_rubric()["judge_levels"]


@pytest.mark.parametrize("style", ["xml", "think-solution", "qwen3-think"])
def test_reference_solutions_earn_every_reward(style: str) -> None:
    ds = PACK.dataset("synthetic", "test", style=style, limit=40)
    for row in ds:
        reference = PACK.reference_solution(row)
        assert reference is not None and row["solution"] in reference
        verdict = PACK.grade(reference, row)
        assert verdict.correct and verdict.extracted == row["answer"]
        assert verdict.scores == {n: 1.0 for n in PACK.reward_functions()}


def test_reference_solutions_of_real_gsm8k_earn_every_reward(gsm8k_dir: Path) -> None:
    ds = PACK.dataset(str(gsm8k_dir), "test")
    fns = PACK.reward_functions()
    for style in PACK.styles:
        completions = [
            [{"role": "assistant", "content": PACK.reference_solution(r, style=style)}] for r in ds
        ]
        for name, fn in fns.items():
            scores = fn(completions=completions, answer=ds["answer"], style=[style] * len(ds))
            assert set(scores) == {1.0}, (style, name)


def test_reference_solution_renders_each_style_exactly() -> None:
    row = {"solution": "9 * 2 = 18", "answer": "18", "style": "xml"}
    assert PACK.reference_solution(row) == "<reasoning>\n9 * 2 = 18\n</reasoning>\n<answer>\n18\n</answer>"
    assert (
        PACK.reference_solution(row, style="think-solution")
        == "<THINK>\n9 * 2 = 18\n</THINK>\n<SOLUTION>18</SOLUTION>"
    )
    assert (
        PACK.reference_solution(row, style="qwen3-think")
        == "<think>\n9 * 2 = 18\n</think>\n\nThe answer is \\boxed{18}."
    )
    assert PACK.reference_solution({"answer": "18"}) is None


def test_judge_context_and_summary() -> None:
    row = PACK.dataset("synthetic", "test", limit=1)[0]
    context = PACK.judge_context(row)
    assert context["task"] == row["question"]
    assert context["reference"].startswith(row["solution"])
    assert context["reference"].endswith(f"Final answer: {row['answer']}")
    verdicts = [
        PACK.grade(text, row) for text in (PACK.reference_solution(row), "no idea", "<answer>1 or 2</answer>")
    ]
    assert PACK.summarize([row] * 3, verdicts) == {"no_answer": 2, "no_answer_rate": 0.6667}
    assert PACK.summarize([], []) == {}


def test_system_prompts_state_the_format_in_both_languages() -> None:
    for style, markers in {
        "xml": ("<answer>", "</reasoning>"),
        "think-solution": ("<SOLUTION>", "</THINK>"),
        "qwen3-think": ("\\boxed{}", "</think>"),
    }.items():
        for language in ("en", "ko"):
            prompt = PACK.dataset("synthetic", "train", style=style, language=language, limit=1)[0]["prompt"][
                0
            ]
            assert prompt["role"] == "system" and all(m in prompt["content"] for m in markers)
    ko = PACK.dataset("synthetic", "train", language="ko", limit=1)[0]["prompt"][0]["content"]
    assert "숫자 하나" in ko


def test_tokenizer_corpus() -> None:
    corpus = PACK.tokenizer_corpus(20)
    assert corpus == PACK.tokenizer_corpus(20)
    assert len(corpus) == 6 + 20 * 5
    text = "\n".join(corpus)
    for marker in (
        "<reasoning>",
        "</answer>",
        "<THINK>",
        "</SOLUTION>",
        "<think>",
        "\\boxed{",
        "####",
        "<<",
        "단계별",
    ):
        assert marker in text


def test_reward_functions_pickle_and_keep_their_names_for_trl() -> None:
    """TRL's async rollout workers pickle reward functions and log them under their names."""
    from trl.trainer.utils import get_callable_name

    for name, fn in PACK.reward_functions().items():
        clone = pickle.loads(pickle.dumps(fn))
        assert get_callable_name(clone) == name
        assert clone(["<reasoning>\nx\n</reasoning>\n<answer>\n5\n</answer>"], answer=["5"]) == fn(
            ["<reasoning>\nx\n</reasoning>\n<answer>\n5\n</answer>"], answer=["5"]
        )


def test_synthetic_rows_are_identical_across_processes() -> None:
    """Same seed, same rows — whatever the interpreter's hash seed."""
    code = (
        "import json; from evaluator.domains.gsm8k.sources import load_rows; "
        "print(json.dumps([r.question for r in load_rows('synthetic', 'train', limit=30, seed=5)]))"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                check=True,
                env={"PYTHONHASHSEED": seed, "PATH": ""},
            ).stdout
        )
        for seed in ("1", "2")
    ]
    from evaluator.domains.gsm8k.sources import load_rows

    assert runs[0] == runs[1] == [r.question for r in load_rows("synthetic", "train", limit=30, seed=5)]
