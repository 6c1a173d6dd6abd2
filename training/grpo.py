"""The shared GRPO trainer: any domain pack's dataset and rewards, TRL's GRPOTrainer, LoRA/QLoRA.

``train(cfg)`` is the whole story of a run: resolve the pack, load the policy (4-bit + LoRA where asked),
build reward functions (the pack's, weighted by the rubric or overrides, plus an optional LLM judge), run
TRL, and leave behind an adapter, checkpoints, metrics, completions, the best adapter and a summary.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.generation import GenerationSettings
from evaluator.core.outputs import atomic_write_json
from evaluator.domains.base import DomainPack, RewardFn
from evaluator.domains.registry import get_pack
from evaluator.models.chat_format import ChatFormat, chat_format, fold_dataset
from evaluator.training.algorithms import algorithm_record, grpo_args
from evaluator.training.callbacks import (
    BestAdapterSaver,
    MetricsLogger,
    RichProgress,
    SaveLastStep,
    StepTimer,
)
from evaluator.training.collapse import CollapseGuard
from evaluator.training.config import TrainConfig, save_config
from evaluator.training.distributed import is_main_process, launched_child, save_final, scale_summary
from evaluator.training.grpo_trainer import prompt_key, trainer_class
from evaluator.training.health import run_health
from evaluator.training.held_out import HeldOutEval, PerPackHeldOut, PolicyGrader
from evaluator.training.judges import JudgeSpec, build_judge_reward
from evaluator.training.length_budget import check_grpo_lengths, clipped_note, say_warning
from evaluator.training.memory.oom import TrainingOOM, is_oom, warn_if_plan_exceeds
from evaluator.training.mixing import is_mixed, mix_record, mixed_dataset, mixed_rewards, pack_names
from evaluator.training.monitor import HeldOutMonitor
from evaluator.training.prompt_stream import PromptStream, streamed_dataset
from evaluator.training.resume import prepare_resume
from evaluator.training.rewards import select_rewards
from evaluator.training.run_setup import (
    TrainingError,
    check_model_available,
    last_checkpoint,
    load_policy,
    prepare_run_dir,
)
from evaluator.training.trl_checks import check_run, recorded, say_idle
from evaluator.training.vllm_options import require_vllm, vllm_resolved


def held_out_generation(cfg: TrainConfig) -> GenerationSettings:
    """Greedy, completions as long as the rollouts', ``eval_batch_size`` prompts a call, and seed 0:
    ``evaluator eval``'s default, so the slice is the one it grades, whatever the training seed."""
    return GenerationSettings(max_new_tokens=cfg.max_completion_length, batch_size=cfg.eval_batch_size, seed=0)


def held_out_monitor(
    cfg: TrainConfig, pack: DomainPack, style: str | None, console: Any, grader: PolicyGrader | None
) -> HeldOutMonitor | None:
    """The in-training evaluation asked for by ``eval_every`` (None when off); its slice is built now."""
    if cfg.eval_every is None:
        return None
    if grader is None:
        raise TrainingError(
            "--eval-every needs a policy grader: pass grade_policy= (evaluator.evaluation.policy.grade_policy)"
        )
    try:
        if is_mixed(cfg.domain):  # each pack on its own slice; the best adapter follows their mean
            parts = {}
            for name in pack_names(cfg.domain):
                one = get_pack(name)
                parts[name] = HeldOutEval.build(
                    one, grader, data=None, split=cfg.eval_split, limit=cfg.eval_limit,
                    style=one.check_style(cfg.style if cfg.style in one.styles else None),
                    language=cfg.language if cfg.language in one.languages else one.languages[0],
                    generation=held_out_generation(cfg),
                )  # fmt: skip
            held_out: Any = PerPackHeldOut(parts, cfg.eval_split)
        else:
            held_out = HeldOutEval.build(
                pack,
                grader,
                data=cfg.data,
                split=cfg.eval_split,
                limit=cfg.eval_limit,
                style=style,
                language=cfg.language,
                generation=held_out_generation(cfg),
            )
    except ValueError as exc:
        raise TrainingError(f"--eval-split {cfg.eval_split}: {exc}") from exc
    return HeldOutMonitor(
        held_out, cfg.eval_every, CollapseGuard(cfg.collapse_drop), cfg.stop_on_collapse, console
    )


@dataclass
class _Inputs:
    """What a run trains on, settled before the model loads: the pack, the folder, rewards, data and judge."""

    pack: DomainPack
    out: Path
    resume_from: Path | None
    resumed: dict[str, Any] | None
    style: str | None
    mixed: bool
    dataset: Any
    names: list[str]
    funcs: list[RewardFn]
    weights: list[float]
    judge: Any = None


def train(
    cfg: TrainConfig,
    *,
    console: Any = None,
    progress: bool = True,
    callbacks: tuple[Any, ...] = (),
    grade_policy: PolicyGrader | None = None,
) -> dict[str, Any]:
    """Run GRPO as configured; returns the run summary (also written to ``run_summary.json``).

    ``callbacks`` are extra ``TrainerCallback``s, called after the run's own (the overhead benchmark stamps
    steps with the same one on both sides). ``grade_policy`` grades the live policy for ``eval_every``
    (the evaluation harness, handed in by the caller so training never imports evaluation).
    """
    import datasets

    datasets.disable_progress_bars()  # Rich progress is the one progress display
    _, idle = check_run(cfg)  # the whole TRL config, before the model, data, judge or run folder
    if is_main_process():
        say_idle(console, idle)
    run = _inputs(cfg, console)
    monitor = held_out_monitor(cfg, run.pack, run.style, console, grade_policy)  # slice built before the model loads
    if monitor is not None and run.resumed is not None:
        monitor.last_step = run.resumed["checkpoint_step"]  # its start was graded before the interruption
    policy = load_policy(cfg)
    fmt = chat_format(policy.tokenizer, run.style, run.pack)
    dataset, lengths, stream = _policy_dataset(cfg, run, policy, fmt, console)
    if not launched_child():  # the launcher planned once for every process
        warn_if_plan_exceeds(cfg, policy.precision, console)
    args = grpo_args(cfg, run.out, policy, run.weights, fmt)
    if is_main_process():
        resolved = {**_resolved(cfg, run, policy, fmt, lengths), "trl": recorded(cfg, args), "idle_settings": idle}
        save_config(cfg, run.out / "run_config.yaml", resolved=resolved)
    timer = StepTimer()
    metrics = MetricsLogger(run.out / "metrics.jsonl", timer)
    last = SaveLastStep(cfg.max_seconds)
    best_metric = "eval/accuracy" if monitor is not None else "reward"
    own: list[Any] = [timer, metrics, BestAdapterSaver(run.out, policy.tokenizer, best_metric), last]
    if progress and is_main_process():
        own.append(RichProgress(console, max_seconds=cfg.max_seconds))
    trainer = _trainer(cfg, run, policy, args, dataset, [*own, *callbacks])
    trainer.monitor = monitor
    trainer.prompt_stream = stream
    result, seconds = _run_trainer(cfg, trainer, run)
    save_final(trainer, policy.tokenizer, run.out / "final")
    summary = _summary(cfg, run, trainer, metrics, seconds, result, last, policy)
    summary["held_out"] = monitor.summary() if monitor is not None else None
    summary["length_budget"] = lengths
    summary["clipped"] = clipped_note(metrics.rows, cfg.max_completion_length)
    if (summary["clipped"] or {}).get("warning") and is_main_process():
        say_warning(console, summary["clipped"]["warning"])
    summary["stopped_for_collapse"] = bool(monitor and monitor.stopped_for_collapse)
    summary["health"] = run_health(metrics.rows, summary["held_out"])
    summary["algorithm"] = algorithm_record(cfg)
    summary["dynamic_sampling"] = stream.summary() if stream is not None else None
    if run.resumed is not None:
        summary["resume"] = run.resumed
    summary.update(scale_summary(trainer.model))  # world_size (+ per-rank parameter digests); every rank joins
    if is_main_process():
        atomic_write_json(run.out / "run_summary.json", summary)
    return summary


def _inputs(cfg: TrainConfig, console: Any) -> _Inputs:
    """Check the model and vLLM, prepare (or resume) the run folder, build the data, rewards and judge."""
    pack = get_pack(pack_names(cfg.domain)[0])  # a mixed run: the first pack gives the chat template switch
    check_model_available(cfg)  # an unreachable model fails now, not after the data is built
    require_vllm(cfg)  # --use-vllm without vLLM or a GPU fails before a run folder exists
    out = Path(cfg.output_dir) if launched_child() else prepare_run_dir(cfg)  # the launcher checked it once
    resume_from = last_checkpoint(out) if cfg.resume else None
    # before anything appends; one process moves the rows aside
    resumed = prepare_resume(out, resume_from) if resume_from is not None and is_main_process() else None
    if resumed and console is not None:
        for note in resumed["notes"]:
            console.print(f"[yellow]note:[/] {note}")
    mixed = is_mixed(cfg.domain)
    style = pack.check_style(cfg.style if not mixed or cfg.style in pack.styles else None)
    dataset = None
    if mixed:
        names, funcs, weights = mixed_rewards(cfg)
    else:
        dataset = pack.dataset(
            cfg.data, cfg.split, style=style, language=cfg.language, limit=cfg.limit, seed=cfg.seed
        )
        names, funcs, weights = select_rewards(pack, cfg)
    run = _Inputs(pack, out, resume_from, resumed, style, mixed, dataset, names, funcs, weights)
    if cfg.judge:
        spec = JudgeSpec.from_dict(cfg.judge)
        run.judge = build_judge_reward(spec, pack, out)
        run.names, run.funcs, run.weights = [*names, "judge"], [*funcs, run.judge], [*weights, float(spec.weight)]
    return run


def _policy_dataset(cfg: TrainConfig, run: _Inputs, policy: Any, fmt: ChatFormat, console: Any) -> tuple[Any, Any, Any]:
    """The prompts as TRL reads them, their measured length budget, and the dynamic-sampling stream (or None)."""
    # TRL renders the prompt column itself: fold in the messages (a mixed run: each pack in its own format)
    dataset = mixed_dataset(cfg, policy.tokenizer, cfg.split) if run.mixed else fold_dataset(run.dataset, fmt)
    # lengths are measured against one pack's references, so a mixed run is not measured
    lengths = None if run.mixed else check_grpo_lengths(
        run.pack, dataset, policy.tokenizer, fmt, run.style, cfg, console if is_main_process() else None
    )
    stream = None
    if cfg.dynamic_sampling:
        stream = PromptStream(dataset.to_list(), cfg.dynamic_sampling, cfg.seed, key=lambda r: prompt_key(r["prompt"]))
        dataset = streamed_dataset(stream)
    return dataset, lengths, stream


def _resolved(cfg: TrainConfig, run: _Inputs, policy: Any, fmt: ChatFormat, lengths: Any) -> dict[str, Any]:
    """The decisions ``run_config.yaml`` records beside the config: hardware, format, lengths, rewards."""
    return {
        **policy.resolved(),
        "style": run.style,
        "chat_format": fmt.record(),
        "length_budget": lengths,
        "rewards": dict(zip(run.names, run.weights, strict=True)),
        "vllm": vllm_resolved(cfg, policy.precision.quantize_4bit),
        "algorithm": algorithm_record(cfg),
        "mix": mix_record(cfg) if run.mixed else None,
    }


def _trainer(cfg: TrainConfig, run: _Inputs, policy: Any, args: Any, dataset: Any, callbacks: list[Any]) -> Any:
    """The TRL trainer with the run's callbacks in place of TRL's own printing."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer = trainer_class(cfg.algorithm)(
        model=policy.model,
        reward_funcs=run.funcs,
        args=args,
        train_dataset=dataset,
        processing_class=policy.tokenizer,
        callbacks=callbacks,
    )
    trainer.remove_callback(PrinterCallback)  # our MetricsLogger/RichProgress replace the raw dict prints
    trainer.remove_callback(ProgressCallback)
    trainer.completions_path = run.out / "completions.jsonl"
    trainer.completions_per_log = cfg.completions_per_log
    return trainer


def _run_trainer(cfg: TrainConfig, trainer: Any, run: _Inputs) -> tuple[Any, float]:
    """Train (resuming where asked); an out-of-memory error becomes the planner's advice; the judge is closed."""
    t0 = time.perf_counter()
    try:
        result = trainer.train(resume_from_checkpoint=str(run.resume_from) if run.resume_from else None)
    except Exception as exc:
        if is_oom(exc):
            raise TrainingOOM.from_config(cfg) from exc
        raise
    finally:
        if run.judge is not None:
            run.judge.close()
    return result, time.perf_counter() - t0


def _summary(
    cfg: TrainConfig,
    run: _Inputs,
    trainer: Any,
    metrics: MetricsLogger,
    seconds: float,
    result: Any,
    last: SaveLastStep,
    policy: Any,
) -> dict[str, Any]:
    rows = [r for r in metrics.rows if "loss" in r or "reward" in r]  # not the step-0 held-out row
    rewards = [r["reward"] for r in rows if r.get("reward") is not None]
    out, judge = run.out, run.judge
    best = out / "best_adapter" / "best.json"
    import json

    summary: dict[str, Any] = {
        "domain": cfg.domain,
        "mix": cfg.mix,
        "model": cfg.model,
        "output_dir": str(out),
        "global_step": trainer.state.global_step,
        "steps_this_session": len(rows),
        "seconds": round(seconds, 3),
        "seconds_per_step": round(seconds / max(1, len(rows)), 4),
        "train_loss": getattr(result, "training_loss", None),
        "reward_first": rewards[0] if rewards else None,
        "reward_last": rewards[-1] if rewards else None,
        "reward_mean": sum(rewards) / len(rewards) if rewards else None,
        "rewards": dict(zip(run.names, run.weights, strict=True)),
        "best": json.loads(best.read_text(encoding="utf-8")) if best.exists() else None,
        "stopped_for_time": last.stopped_for_time,
        "final_adapter": str(out / "final"),
        "resolved": policy.resolved(),
        "trainable_parameters": sum(p.numel() for p in trainer.model.parameters() if p.requires_grad),
    }
    if judge is not None:
        summary["judge"] = {**judge.stats(), "memory_bytes": judge.memory_bytes}
    return summary
