"""Length budgets: prompts and reference answers measured with the run's tokenizer before a trainer loads."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from evaluator.training.config import TrainingError
from evaluator.training.length_budget import (
    LengthBudget,
    clipped_note,
    completion_warning,
    percentile,
    sft_max_length,
)

FUND_DATA = "sample?funds=40"


@pytest.mark.parametrize("seed", range(20))
def test_percentile_matches_numpy_nearest_rank(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.randint(1, 3000) for _ in range(rng.randint(1, 90))]
    for q in (1, 50, 90, 95, 99, 100):
        assert percentile(values, q) == int(np.percentile(values, q, method="inverted_cdf"))


def test_sft_length_covers_every_sampled_example_and_a_short_one_stops_with_the_length() -> None:
    budget = LengthBudget(prompts=(900, 2150, 1200), answers=(440, 430, 300), rows=3)
    assert budget.example_max == 2580
    auto = sft_max_length(budget, None)
    assert auto >= 2580 * 1.1 and auto % 64 == 0
    assert sft_max_length(budget, 4096) == 4096  # a given length that fits is kept
    with pytest.raises(TrainingError) as err:
        sft_max_length(budget, 512)
    text = str(err.value)
    assert "--max-seq-length 512 is too short: 3 of 3" in text and f"--max-seq-length {auto}" in text


def test_completion_warning_names_the_flag_and_the_value_needed() -> None:
    budget = LengthBudget(prompts=(1,) * 20, answers=tuple(range(400, 420)), rows=20)
    assert completion_warning(budget, 512) is None
    assert completion_warning(budget, 418) is None  # the 95th percentile (nearest rank) is 418
    text = completion_warning(budget, 256)
    assert text is not None and "--max-completion-length 256" in text and "(418 tokens" in text
    assert "--max-completion-length 461" in text  # the longest, 419, plus 10 % (460.9), rounded up
    assert completion_warning(LengthBudget((5,), (), 1), 8) is None  # no references: nothing to say


def test_clipped_note_flags_a_run_where_most_completions_were_cut() -> None:
    rows = [{"completions/clipped_ratio": r} for r in (1.0, 0.75, 0.5)] + [{"loss": 0.1}]
    note = clipped_note(rows, 256)
    assert note is not None and note["clipped_ratio_mean"] == 0.75 and "--max-completion-length" in note["warning"]
    calm = clipped_note([{"completions/clipped_ratio": 0.1}], 256)
    assert calm is not None and "warning" not in calm
    assert clipped_note([{"loss": 1.0}], 256) is None


def test_measured_prompts_match_the_templates_own_tokenization(tiny_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    from evaluator.domains.registry import get_pack
    from evaluator.models.chat_format import chat_format
    from evaluator.training.length_budget import measure

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    pack = get_pack("fund")
    data = pack.dataset(FUND_DATA, "train", limit=6)
    budget = measure(pack, data, tok, chat_format(tok, "json", pack), "json", sample=6)
    expected = [len(tok.apply_chat_template(r["prompt"], add_generation_prompt=True, return_dict=False)) for r in data]
    assert list(budget.prompts) == expected
    refs = [len(tok(pack.reference_solution(r))["input_ids"]) + 1 for r in data]
    assert list(budget.answers) == refs and budget.rows == 6
    assert budget.prompt_max > 512  # the reason a fixed 512 dropped every fund example


def test_sft_with_a_too_short_length_stops_with_one_message(tiny_model_dir: Path, tmp_path: Path) -> None:
    result = run_cli(
        "sft", "--domain", "fund", "--model", "tiny", "--data", FUND_DATA, "--limit", "4",
        "--max-seq-length", "512", "--max-steps", "1", "--output-dir", str(tmp_path / "run"),
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--max-seq-length 512 is too short" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_fund_sft_sizes_its_length_from_the_data_and_keeps_every_example(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "sft", "--domain", "fund", "--model", "tiny", "--data", FUND_DATA, "--limit", "4", "--no-lora",
        "--max-steps", "1", "--per-device-batch", "4", "--output-dir", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["examples"] == 4 and summary["global_step"] == 1
    assert summary["max_seq_length"] >= summary["length_budget"]["example_max"] > 512
    assert f"max_seq_length {summary['max_seq_length']} (measured" in result.output


@pytest.mark.slow
def test_grpo_warns_about_a_short_completion_length_and_flags_clipped_runs(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "train", "--domain", "fund", "--model", "tiny", "--data", FUND_DATA, "--limit", "2", "--max-steps", "1",
        "--num-generations", "2", "--per-device-batch", "2", "--max-completion-length", "16",
        "--output-dir", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "--max-completion-length 16 is below the reference answers' 95th percentile" in flat
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["length_budget"]["answer_p95"] > 16
    assert summary["clipped"]["clipped_ratio_mean"] > 0.5 and "were cut" in summary["clipped"]["warning"]
    assert "were cut at --max-completion-length 16" in flat


def test_an_empty_training_split_is_a_clear_error() -> None:
    from datasets import Dataset

    from evaluator.domains.registry import get_pack
    from evaluator.training.config import TrainConfig
    from evaluator.training.sft import sft_dataset

    class NoRows(type(get_pack("gsm8k"))):  # the real pack, asked for a split that has no rows
        def dataset(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return Dataset.from_list([])

    with pytest.raises(TrainingError, match="has no rows in split 'train' to train on"):
        sft_dataset(NoRows(), TrainConfig(domain="gsm8k"), get_pack("gsm8k").check_style(None))
