"""The offline demo: every part of the product on a laptop CPU in a few minutes.

Fund batch evaluation on the embedded sample universe, then SFT → eval → GRPO → eval on synthetic
GSM8K with a small model the project builds itself, a paired comparison and plots. ``quick`` is a
sub-minute smoke version with the test-suite model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.methodology.outputs import atomic_write_json, prepare_output_dir


@dataclass(frozen=True)
class DemoPlan:
    """Budgets for one demo run.

    SFT ends at ``sft_max_steps`` (the same model on any machine) unless ``sft_seconds`` runs out first on a
    slow one; GRPO is budgeted by wall time, as a user watching it would be.
    """

    model: str
    data: str
    funds: int
    sft_seconds: float
    sft_max_steps: int
    sft_lr: float
    grpo_seconds: float
    grpo_max_steps: int
    grpo_lr: float
    num_generations: int
    eval_n: int
    max_new_tokens: int


FULL = DemoPlan(
    model="tiny-demo",
    data="synthetic:steps=1,max=10",
    funds=300,
    sft_seconds=240,
    sft_max_steps=250,
    sft_lr=2e-3,
    grpo_seconds=100,
    grpo_max_steps=100_000,
    grpo_lr=3e-5,
    num_generations=8,
    eval_n=200,
    max_new_tokens=48,
)
QUICK = DemoPlan(
    model="tiny",
    data="synthetic:steps=1",
    funds=40,
    sft_seconds=30,
    sft_max_steps=10,
    sft_lr=1e-2,
    grpo_seconds=20,
    grpo_max_steps=2,
    grpo_lr=3e-5,
    num_generations=4,
    eval_n=12,
    max_new_tokens=24,
)


def run_fund_batch(out: Path, funds: int) -> dict[str, Any]:
    """Grade the synthetic Korean fund universe and write one report per fund plus summaries."""
    from evaluator.domains.fund.batch import write_reports
    from evaluator.domains.fund.evaluate import evaluate_loaded
    from evaluator.domains.fund.rubric import default_rubric
    from evaluator.domains.fund.sample import sample_universe

    universe = sample_universe(funds=funds, risk_free=0.03, realistic=True)  # 결산 resets, share classes, an MMF
    evaluation = evaluate_loaded(universe, default_rubric())
    outcome = write_reports(evaluation, out, warnings=universe.warnings)
    import json

    return json.loads(outcome.summary_json.read_text(encoding="utf-8"))


def run_demo(out: Path, *, quick: bool = False, force: bool = False, console: Any = None) -> dict[str, Any]:
    """Run every stage; returns (and writes to ``demo_summary.json``) where everything is and the headline figures."""
    from evaluator.evaluation.compare import compare_reports
    from evaluator.evaluation.harness import evaluate
    from evaluator.evaluation.plots import plot_dir
    from evaluator.training.config import TrainConfig
    from evaluator.training.grpo import train
    from evaluator.training.models import ensure_tiny
    from evaluator.training.sft import sft

    plan = QUICK if quick else FULL
    out = prepare_output_dir(out, force=force)
    say = console.print if console else print

    say(f"[bold]1/7[/] building the {plan.model} model (offline)…")
    model_dir = ensure_tiny(plan.model)

    say(f"[bold]2/7[/] fund batch evaluation: {plan.funds} synthetic Korean funds…")
    fund_summary = run_fund_batch(out / "fund", plan.funds)

    say("[bold]3/7[/] SFT warm start on synthetic GSM8K…")
    base = TrainConfig(domain="gsm8k", model=str(model_dir), data=plan.data, lora=False, force=True, seed=0)
    sft(
        base.replace(
            output_dir=str(out / "sft"),
            learning_rate=plan.sft_lr,
            max_seconds=plan.sft_seconds,
            max_steps=plan.sft_max_steps,
            lr_scheduler_type="constant",
            per_device_train_batch_size=16,
            max_seq_length=256,
        ),
        console=console,
    )

    eval_kwargs = dict(
        data=plan.data,
        split="test",
        limit=plan.eval_n,
        max_new_tokens=plan.max_new_tokens,
        batch_size=50,
        force=True,
    )
    say(f"[bold]4/7[/] evaluating before GRPO on {plan.eval_n} held-out problems…")
    before = evaluate("gsm8k", str(out / "sft" / "final"), out_dir=out / "eval" / "before", **eval_kwargs)

    say("[bold]5/7[/] GRPO (correctness + format rewards)…")
    grpo = train(
        base.replace(
            output_dir=str(out / "grpo"),
            init_from=str(out / "sft" / "final"),
            learning_rate=plan.grpo_lr,
            num_generations=plan.num_generations,
            per_device_train_batch_size=plan.num_generations * 2,
            max_completion_length=plan.max_new_tokens,
            max_seconds=plan.grpo_seconds,
            max_steps=plan.grpo_max_steps,
            save_steps=100_000,
            rewards=["correctness", "strict_format", "soft_format", "xmlcount"],
        ),
        console=console,
    )

    say("[bold]6/7[/] evaluating after GRPO…")
    after = evaluate("gsm8k", str(out / "grpo" / "final"), out_dir=out / "eval" / "after", **eval_kwargs)
    comparison = compare_reports(before, after, labels=("before", "after"))
    atomic_write_json(out / "eval" / "compare.json", comparison)

    say("[bold]7/7[/] plots…")
    pngs = plot_dir(out, out / "plots", force=True, warn=lambda m: None)

    strict = comparison["results"]["strict"]
    summary = {
        "quick": quick,
        "model": plan.model,
        "accuracy_before": before["accuracy"]["strict"],
        "accuracy_after": after["accuracy"]["strict"],
        "delta": strict["delta"],
        "delta_ci95": strict["ci95"],
        "mcnemar_p": strict["mcnemar_p"],
        "grpo_steps": grpo["global_step"],
        "grade_distribution": fund_summary["grade_distribution"],
        "status_counts": fund_summary["status_counts"],
        "artifacts": {
            "fund_reports": str(out / "fund"),
            "sft_model": str(out / "sft" / "final"),
            "grpo_model": str(out / "grpo" / "final"),
            "eval_before": str(out / "eval" / "before" / "report.json"),
            "eval_after": str(out / "eval" / "after" / "report.json"),
            "comparison": str(out / "eval" / "compare.json"),
            "plots": [str(p) for p in pngs],
        },
    }
    atomic_write_json(out / "demo_summary.json", summary)
    return summary
