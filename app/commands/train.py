"""`evaluator train`: GRPO for any domain pack, flags over an optional YAML config."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.app.console import console, fail


def parse_weights(items: list[str] | None) -> dict[str, float] | None:
    """``["correctness=2", "int=0.5"]`` → ``{"correctness": 2.0, "int": 0.5}``."""
    if not items:
        return None
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            fail(f"--reward-weight expects NAME=NUMBER, got {item!r}")
    return out


def parse_mix(text: str | None) -> list[float] | None:
    """``"0.5,0.5"`` → ``[0.5, 0.5]``."""
    if not text:
        return None
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        fail(f"--mix expects weights separated by commas (e.g. 0.5,0.5), got {text!r}")


def run_training(overrides: dict, config: Path | None) -> dict:
    """Load config, run, and turn expected failures into one clear message."""
    from evaluator.core.outputs import OutputExistsError
    from evaluator.domains.base import PackError
    from evaluator.training.config import ConfigError, load_config
    from evaluator.training.memory.oom import TrainingOOM
    from evaluator.training.run_setup import TrainingError, check_model_available

    try:
        cfg = load_config(config, overrides)
        check_model_available(cfg)  # before importing TRL (seconds): an unavailable model is told at once
        from evaluator.training.launch import needs_launch, train_launched

        if needs_launch(cfg):  # --num-processes N: check once here, then N processes train
            return train_launched(cfg, console=console)
        from evaluator.evaluation.policy import grade_policy
        from evaluator.training.grpo import train

        return train(cfg, console=console, grade_policy=grade_policy)
    except (ConfigError, PackError, OutputExistsError, TrainingError, TrainingOOM, FileNotFoundError) as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_cmd(
        domain: str = typer.Option(None, help="Domain pack (`evaluator domains list`)."),
        model: str = typer.Option(None, help="Preset, tiny, hub id or local path."),
        data: str = typer.Option(None, help="The pack's data source (`evaluator domains list` shows what each pack takes); default: the pack's."),
        split: str = typer.Option(None, help="Training split."),
        style: str = typer.Option(None, help="Prompt style (`evaluator domains list` shows each pack's; default: the rubric's)."),
        language: str = typer.Option(None, help="System prompt language, one of the pack's (default: its first)."),
        limit: int = typer.Option(None, help="Use only the first N rows."),
        output_dir: str = typer.Option(None, "--output-dir", "-o", help="Run folder."),
        config: Path = typer.Option(None, "--config", "-c", help="YAML run config; flags override it."),
        quantize: str = typer.Option(None, help="4bit or none (default: 4bit on CUDA, none on CPU)."),
        lora: bool = typer.Option(None, "--lora/--no-lora", help="Train a LoRA adapter (default) or the full model."),
        lora_r: int = typer.Option(None, "--lora-r", help="LoRA rank (default 16)."),
        lora_alpha: int = typer.Option(None, "--lora-alpha", help="LoRA alpha (default 32)."),
        num_generations: int = typer.Option(None, help="Completions per prompt (default 4)."),
        max_completion_length: int = typer.Option(None, help="Max new tokens per completion (default 256)."),
        learning_rate: float = typer.Option(None, "--learning-rate", "--lr", help="Learning rate (default 5e-6)."),
        lr_scheduler: str = typer.Option(None, "--lr-scheduler", help="linear (default), cosine, constant, …"),
        beta: float = typer.Option(None, help="KL coefficient (default 0)."),
        loss_type: str = typer.Option(None, help="dapo (default), grpo, dr_grpo, bnpo."),
        scale_rewards: str = typer.Option(None, help="group (default), batch or none."),
        epsilon: float = typer.Option(None, help="Clip range (default 0.2)."),
        epsilon_high: float = typer.Option(None, help="Upper clip range (clip-higher)."),
        temperature: float = typer.Option(None, help="Rollout temperature (default 1.0)."),
        per_device_batch: int = typer.Option(None, "--per-device-batch", help="Per-device batch (default 4)."),
        grad_accum: int = typer.Option(None, "--grad-accum", help="Gradient accumulation steps (default 1)."),
        max_steps: int = typer.Option(None, help="Optimizer steps (-1 = epochs)."),
        epochs: float = typer.Option(None, help="Epochs when max-steps is -1."),
        max_seconds: float = typer.Option(None, help="Stop cleanly after this much wall time."),
        seed: int = typer.Option(None, help="Random seed (default 42)."),
        logging_steps: int = typer.Option(None, help="Log every N steps (default 1)."),
        save_steps: int = typer.Option(None, help="Checkpoint every N steps (default 50; last step always)."),
        rewards: str = typer.Option(None, help="Comma-separated subset of the pack's rewards."),
        reward_weight: list[str] = typer.Option(None, "--reward-weight", help="NAME=WEIGHT, repeatable."),
        optim: str = typer.Option(None, help="Optimizer (default paged_adamw_8bit on CUDA, adamw_torch on CPU)."),
        gradient_checkpointing: bool = typer.Option(None, "--gradient-checkpointing/--no-gradient-checkpointing"),
        init_from: str = typer.Option(None, "--init-from", "--adapter", help="Start from this adapter/run (e.g. SFT)."),
        resume: bool = typer.Option(False, "--resume", help="Continue from the last checkpoint in the output dir."),
        force: bool = typer.Option(False, "--force", help="Start a new run in a non-empty output dir."),
        num_processes: int = typer.Option(None, "--num-processes", help="Processes to train in (GPUs; gloo on CPU)."),
        launch_config: str = typer.Option(None, "--launch-config", help="ddp (default), fsdp, zero2, zero3 or an accelerate YAML."),
        use_vllm: bool = typer.Option(None, "--use-vllm", help="vLLM rollouts (CUDA; pip install 'evaluator[vllm]')."),
        vllm_mode: str = typer.Option(None, "--vllm-mode", help="colocate (default) or server."),
        vllm_server_host: str = typer.Option(None, "--vllm-server-host", help="Server mode: vLLM server host."),
        vllm_server_port: int = typer.Option(None, "--vllm-server-port", help="Server mode: vLLM server port."),
        vllm_gpu_memory_utilization: float = typer.Option(None, "--vllm-gpu-memory-utilization", help="Colocate: GPU fraction for vLLM."),
        vllm_sleep_mode: bool = typer.Option(None, "--vllm-sleep-mode", help="Colocate: vLLM sleeps while the trainer steps."),
        eval_every: int = typer.Option(None, "--eval-every", help="Grade on a held-out slice every N steps."),
        eval_limit: int = typer.Option(None, "--eval-limit", help="Held-out problems per evaluation (default 100)."),
        eval_split: str = typer.Option(None, "--eval-split", help="Held-out split (default test)."),
        collapse_drop: float = typer.Option(
            None, "--collapse-drop", help="Warn when held-out accuracy falls this far below its best (default 0.10)."
        ),
        stop_on_collapse: bool = typer.Option(
            False, "--stop-on-collapse", help="Stop cleanly, keeping the best adapter, when the guard fires."
        ),
        report_to: str = typer.Option(
            None, "--report-to", help="none, tensorboard, wandb, trackio; comma-separated for several."
        ),
        run_name: str = typer.Option(None, "--run-name", help="Run name for the trackers."),
        mix: str = typer.Option(None, "--mix", help="Mixing weights of several packs (--domain gsm8k,fund --mix 0.5,0.5)."),
        algorithm: str = typer.Option(None, "--algorithm", help="grpo (default) or rloo (TRL RLOOTrainer)."),
        normalize_advantages: bool = typer.Option(
            None, "--normalize-advantages/--no-normalize-advantages", help="RLOO: unit-std advantages per batch."
        ),
        dynamic_sampling: int = typer.Option(
            None, "--dynamic-sampling", help="Rest a prompt for N steps after a group of equal rewards."
        ),
    ) -> None:
        """Train a LoRA/QLoRA adapter with GRPO on a domain pack's rewards."""
        overrides = {
            "domain": domain, "model": model, "data": data, "split": split, "style": style, "language": language,
            "limit": limit, "output_dir": output_dir, "quantize": quantize, "lora": lora, "lora_r": lora_r,
            "lora_alpha": lora_alpha, "num_generations": num_generations,
            "max_completion_length": max_completion_length, "learning_rate": learning_rate, "beta": beta,
            "lr_scheduler_type": lr_scheduler,
            "loss_type": loss_type, "scale_rewards": scale_rewards, "epsilon": epsilon, "epsilon_high": epsilon_high,
            "temperature": temperature, "per_device_train_batch_size": per_device_batch,
            "gradient_accumulation_steps": grad_accum, "max_steps": max_steps, "num_train_epochs": epochs,
            "max_seconds": max_seconds, "seed": seed, "logging_steps": logging_steps, "save_steps": save_steps,
            "rewards": [r.strip() for r in rewards.split(",")] if rewards else None,
            "reward_weights": parse_weights(reward_weight), "optim": optim,
            "gradient_checkpointing": gradient_checkpointing, "init_from": init_from,
            "resume": resume or None, "force": force or None,
            "num_processes": num_processes, "launch_config": launch_config, "use_vllm": use_vllm,
            "vllm_mode": vllm_mode, "vllm_server_host": vllm_server_host, "vllm_server_port": vllm_server_port,
            "vllm_gpu_memory_utilization": vllm_gpu_memory_utilization, "vllm_enable_sleep_mode": vllm_sleep_mode,
            "eval_every": eval_every, "eval_limit": eval_limit, "eval_split": eval_split,
            "collapse_drop": collapse_drop, "stop_on_collapse": stop_on_collapse or None,
            "report_to": [t.strip() for t in report_to.split(",") if t.strip()] if report_to else None,
            "run_name": run_name, "algorithm": algorithm, "normalize_advantages": normalize_advantages,
            "dynamic_sampling": dynamic_sampling, "mix": parse_mix(mix),
        }
        summary = run_training(overrides, config)
        from evaluator.training.distributed import launched_child, shutdown

        if launched_child():  # one of N processes: the launching command reports for all of them
            shutdown()
            return
        best = summary.get("best") or {}
        console.print(
            f"[bold green]done[/] step {summary['global_step']} · reward {summary['reward_first']} → "
            f"{summary['reward_last']} · best {best.get('metric', 'reward')} {best.get('value')} at step "
            f"{best.get('step')} · {summary['seconds_per_step']} s/step"
        )
        points = (summary.get("held_out") or {}).get("points") or []
        if points:
            acc = [f"{p['eval/accuracy']:.1%}@{p['step']}" for p in points]
            console.print(f"held-out accuracy: {' → '.join(acc)}")
        if summary.get("stopped_for_collapse"):
            console.print("[bold yellow]stopped by the collapse guard[/]; best_adapter/ holds the best weights")
        console.print(f"adapter: {summary['final_adapter']}  ·  run folder: {summary['output_dir']}")
