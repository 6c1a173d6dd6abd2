"""Supervised cold start: the pack's reference solutions, rendered in its prompt style, through TRL's SFTTrainer.

Uses the same model/LoRA/QLoRA/config machinery as GRPO (``run_setup``), so ``evaluator train --init-from``
continues exactly the adapter this writes to ``final/``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from evaluator.core.outputs import atomic_write_json
from evaluator.domains.registry import get_pack
from evaluator.models.chat_format import chat_format
from evaluator.training.callbacks import MetricsLogger, RichProgress, SaveLastStep, StepTimer
from evaluator.training.config import TrainConfig, save_config
from evaluator.training.length_budget import measure, sft_max_length
from evaluator.training.mixing import is_mixed, mix_record, mixed_sft_dataset, pack_names
from evaluator.training.run_setup import (
    TrainingError,
    check_model_available,
    last_checkpoint,
    load_policy,
    prepare_run_dir,
    save_model_atomically,
    trainer_kwargs,
)
from evaluator.training.sft_data import sft_dataset, with_chat_format
from evaluator.training.trl_checks import check_run, recorded


def sft(cfg: TrainConfig, *, console: Any = None, progress: bool = True) -> dict[str, Any]:
    """Run supervised fine-tuning; returns the run summary (also written to ``run_summary.json``)."""
    import datasets

    datasets.disable_progress_bars()  # Rich progress is the one progress display
    check_run(cfg, "sft")  # the whole SFTConfig, before the model, data or run folder
    mixed = is_mixed(cfg.domain)
    pack = get_pack(pack_names(cfg.domain)[0])
    check_model_available(cfg)  # an unreachable model fails now, not after the data is built
    style = pack.check_style(cfg.style if not mixed or cfg.style in pack.styles else None)
    out = prepare_run_dir(cfg)
    dataset = None if mixed else sft_dataset(pack, cfg, style)  # before loading: no references fails fast
    policy = load_policy(cfg)
    fmt = chat_format(policy.tokenizer, style, pack)
    dataset = mixed_sft_dataset(cfg, policy.tokenizer) if mixed else with_chat_format(dataset, fmt)
    budget = measure(pack, dataset, policy.tokenizer, fmt, style, seed=cfg.seed, completion_column="completion")
    max_length = sft_max_length(budget, cfg.max_seq_length)  # measured, or a given length that fits
    if cfg.max_seq_length is None and console is not None:
        console.print(f"max_seq_length {max_length} (measured: longest sampled example {budget.example_max} tokens)")
    args = sft_args(cfg, policy, out, max_length)
    save_config(
        cfg,
        out / "run_config.yaml",
        resolved={
            "trl": recorded(cfg, args),
            "mix": mix_record(cfg) if mixed else None,
            **policy.resolved(),
            "style": style,
            "kind": "sft",
            "chat_format": fmt.record(),
            "max_seq_length": max_length,
            "length_budget": budget.record(),
        },
    )
    trainer, metrics, last = _trainer(cfg, policy, dataset, out, args, budget, console, progress)
    resume_from = str(last_checkpoint(out)) if cfg.resume else None
    t0 = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=resume_from)
    seconds = time.perf_counter() - t0
    save_model_atomically(trainer.model, policy.tokenizer, out / "final")
    losses = [r["loss"] for r in metrics.rows if r.get("loss") is not None]
    summary = {
        "kind": "sft",
        "domain": cfg.domain,
        "model": cfg.model,
        "style": style,
        "output_dir": str(out),
        "global_step": trainer.state.global_step,
        "seconds": round(seconds, 3),
        "train_loss": getattr(result, "training_loss", None),
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "examples": len(dataset),
        "max_seq_length": max_length,
        "length_budget": budget.record(),
        "stopped_for_time": last.stopped_for_time,
        "final_adapter": str(Path(out) / "final"),
        "resolved": policy.resolved(),
    }
    atomic_write_json(out / "run_summary.json", summary)
    return summary


def sft_args(cfg: TrainConfig, policy: Any, out: Path, max_length: int) -> Any:
    """TRL's SFTConfig for the run at its measured (or given) length."""
    from trl import SFTConfig

    return SFTConfig(**trainer_kwargs(cfg.replace(max_seq_length=max_length), out, policy, SFTConfig, "sft"))


def _trainer(
    cfg: TrainConfig, policy: Any, dataset: Any, out: Path, args: Any, budget: Any, console: Any, progress: bool
) -> tuple[Any, MetricsLogger, SaveLastStep]:
    """TRL's SFTTrainer with the run's callbacks; refuses a length that leaves no example to learn from."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import SFTTrainer

    max_length = args.max_length
    timer = StepTimer()
    metrics = MetricsLogger(out / "metrics.jsonl", timer)
    last = SaveLastStep(cfg.max_seconds)
    callbacks: list[Any] = [timer, metrics, last]
    if progress:
        callbacks.append(RichProgress(console, label="SFT", max_seconds=cfg.max_seconds))
    trainer = SFTTrainer(
        model=policy.model,
        args=args,
        train_dataset=dataset,
        processing_class=policy.tokenizer,
        callbacks=callbacks,
    )
    if len(trainer.train_dataset) == 0:  # TRL drops rows whose answer is cut away entirely
        raise TrainingError(
            f"no SFT example is left at --max-seq-length {max_length}: every prompt fills it; pass "
            f"--max-seq-length {budget.sft_length()} or more"
        )
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer, metrics, last
