"""`evaluator train`: GRPO for any domain pack, flags over an optional YAML config."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import console, fail


def run_training(overrides: dict, config: Path | None) -> dict:
    """Load config, run, and turn expected failures into one clear message."""
    from evaluator.core.outputs import OutputExistsError
    from evaluator.domains.base import PackError
    from evaluator.training.config import ConfigError, TrainingError, load_config
    from evaluator.training.memory.oom import TrainingOOM
    from evaluator.training.run_setup import check_model_available

    try:
        cfg = load_config(config, overrides)
        from evaluator.training.trl_fields import check_fields

        check_fields(cfg, cfg.algorithm)  # TRL's names, types and values from its cached schema: a typo is told at once
        check_model_available(cfg)  # before importing TRL (seconds): an unavailable model is told at once
        from evaluator.training.launch import needs_launch, train_launched
        from evaluator.training.trl_checks import build_args

        build_args(cfg)  # the whole TRL config before anything loads (the trainer says what would do nothing)

        if needs_launch(cfg):  # --num-processes N: check once here, then N processes train
            return train_launched(cfg, console=console)
        from evaluator.evaluation.policy import grade_policy
        from evaluator.training.grpo import train

        return train(cfg, console=console, grade_policy=grade_policy)
    except (ConfigError, PackError, OutputExistsError, TrainingError, TrainingOOM, FileNotFoundError) as exc:
        fail(str(exc))


def report(summary: dict) -> None:
    """The run's closing lines: steps, reward, best adapter, held-out accuracy, where it is."""
    from evaluator.training.distributed import launched_child, shutdown

    if launched_child():  # one of N processes: the launching command reports for all of them
        shutdown()
        return
    from evaluator.training.health import verdict_line

    best = summary.get("best") or {}
    health = summary.get("health") or {}
    learned = health.get("verdict") in (None, "learning")
    headline = "[bold green]done[/]" if learned else f"[bold yellow]finished, not learning ({health['verdict']})[/]"
    console.print(
        f"{headline} step {summary['global_step']} · reward {summary['reward_first']} → "
        f"{summary['reward_last']} · best {best.get('metric', 'reward')} {best.get('value')} at step "
        f"{best.get('step')} · {summary['seconds_per_step']} s/step"
    )
    points = (summary.get("held_out") or {}).get("points") or []
    if points:
        acc = [f"{p['eval/accuracy']:.1%}@{p['step']}" for p in points]
        console.print(f"held-out accuracy: {' → '.join(acc)}")
    if health:
        console.print(verdict_line(health), style=None if learned else "yellow", highlight=False, markup=False)
    if summary.get("stopped_for_collapse"):
        console.print("[bold yellow]stopped by the collapse guard[/]; best_adapter/ holds the best weights")
    console.print(f"adapter: {summary['final_adapter']}  ·  run folder: {summary['output_dir']}")


def register(app: typer.Typer) -> None:
    from evaluator.app.config_options import config_command
    from evaluator.training.config import TrainConfig

    def run(overrides: dict, config: Path | None, _: dict) -> None:
        report(run_training(overrides, config))

    command = config_command(
        TrainConfig, run, doc="Train a LoRA/QLoRA adapter with GRPO on a domain pack's rewards."
    )
    app.command("train")(command)
