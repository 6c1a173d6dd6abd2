"""The full demo's plan and its one-line verdict, checked without running the few-minute demo itself."""

from __future__ import annotations

import pytest

from evaluator.app.demo import FULL, QUICK, WARM_BAND, run_fund_batch, verdict
from evaluator.domains.registry import get_pack


def test_verdict_reports_a_gain_only_when_the_interval_excludes_zero() -> None:
    shown = verdict(0.42, 0.071, (0.032, 0.110), 60, FULL, cut_short=False)
    assert shown == "GRPO gain shown: +7.1 points (95% CI +3.2 to +11.0), the interval excludes 0"
    # A CI touching 0 is not a gain, however large the point estimate.
    touching = verdict(0.42, 0.071, (0.0, 0.14), 60, FULL, cut_short=False)
    assert touching.startswith("no gain shown: +7.1 points (95% CI +0.0 to +14.0) includes 0 — ")


@pytest.mark.parametrize(
    ("before", "cut_short", "reason"),
    [
        (0.45, True, "a time cap stopped training early (23 of"),
        (0.12, False, "reached only 12%, below the 30–60 % band"),
        (0.81, False, "already at 81%, above the band"),
        (0.45, False, "23 GRPO steps moved accuracy too little to tell from the noise of"),
    ],
)
def test_verdict_says_in_one_line_why_no_gain_was_shown(before: float, cut_short: bool, reason: str) -> None:
    line = verdict(before, -0.004, (-0.03, 0.022), 23, FULL, cut_short=cut_short)
    assert line.startswith("no gain shown: -0.4 points (95% CI -3.0 to +2.2) includes 0 — ")
    assert reason in line and "\n" not in line
    if "noise" in reason:
        assert line.endswith(f"{FULL.eval_n} held-out problems")
    if cut_short:
        assert f"of {FULL.grpo_max_steps} GRPO steps" in line
    assert WARM_BAND == (0.30, 0.60)


def test_verdict_names_an_sft_cut_short_by_its_time_cap() -> None:
    """A warm start stopped early is the cause, not GRPO: all GRPO steps ran from a model trained too little."""
    line = verdict(0.19, 0.004, (-0.02, 0.03), FULL.grpo_max_steps, FULL, cut_short=True, sft_steps=184)
    assert line.endswith(f"a time cap stopped SFT early (184 of {FULL.sft_max_steps} steps)")
    full = verdict(0.19, 0.004, (-0.02, 0.03), 7, FULL, cut_short=True, sft_steps=FULL.sft_max_steps)
    assert full.endswith(f"(7 of {FULL.grpo_max_steps} GRPO steps)")


@pytest.mark.parametrize("plan", [FULL, QUICK], ids=["full", "quick"])
def test_held_out_problems_are_never_trained_on(plan) -> None:
    """Every problem SFT or GRPO can draw (steps × batch, from the train split) is outside the eval set."""
    pack = get_pack("gsm8k")
    held_out = {r["question"] for r in pack.dataset(plan.data, "test", limit=plan.eval_n)}
    assert len(held_out) == plan.eval_n  # that many distinct held-out problems exist at this difficulty
    seen = max(plan.sft_max_steps * plan.sft_batch, plan.grpo_max_steps * plan.prompts_per_step)
    for seed in (0, 1, 2):
        train = {r["question"] for r in pack.dataset(plan.data, "train", limit=min(seen, 5000), seed=seed)}
        assert not held_out & train


def test_full_plan_lets_every_held_out_reference_answer_fit() -> None:
    """``max_new_tokens`` (eval and GRPO completions) covers the longest worked solution in the eval set,
    so no correct answer is cut off before its closing tag."""
    from evaluator.models.loading import TINY_NAMES, tiny_corpus
    from evaluator.models.tiny import build_tokenizer

    assert FULL.model == "tiny-demo-2l" and TINY_NAMES[FULL.model].split_digits
    tok = build_tokenizer(tiny_corpus(), TINY_NAMES[FULL.model])
    pack = get_pack("gsm8k")
    rows = pack.dataset(FULL.data, "test", limit=FULL.eval_n)
    longest = max(len(tok(pack.reference_solution(r) + tok.eos_token)["input_ids"]) for r in rows)
    assert longest <= FULL.max_new_tokens


def test_demo_force_rewrites_an_earlier_demos_fund_reports(tmp_path) -> None:
    """``demo --force`` into a finished demo's folder: the fund stage must not refuse its own earlier output."""
    from evaluator.core.outputs import OutputExistsError

    first = run_fund_batch(tmp_path / "fund", 40)
    with pytest.raises(OutputExistsError):
        run_fund_batch(tmp_path / "fund", 40)
    again = run_fund_batch(tmp_path / "fund", 40, force=True)
    assert again["status_counts"] == first["status_counts"] and sum(first["status_counts"].values()) == 40
