"""The project's GRPO trainer against bare TRL ``GRPOTrainer`` on the same config: what does the wrapping cost?

Both sides get the same tiny model (LoRA), dataset, prompt rendering, reward functions and weights and the
same ``GRPOConfig`` (built by ``grpo_args``); the project side adds its callbacks (metrics file, completions
file, best-adapter saving, time-limit checks, the Rich progress display, drawn on a throwaway terminal
console) through ``train()``. A step's time is the wall time between consecutive log events
(``logging_steps=1``), stamped by the same callback on both sides (the last one called), so logging and file
writing are inside it. The first step (warm-up) and the last (the project always checkpoints it) are left out.
The random tiny model's reward stays 0, so the best adapter is saved once (step 1): a run whose reward keeps
rising saves it at every new best (~20 ms each on this model; see benchmarks/README.md).

Fairness: one unmeasured run of each side first (the first training run in a process pays one-off warm-up
costs for several steps, and used to be always the project's); then the order of the two sides alternates
from one repetition to the next (project first, then bare first, …). torch runs on ``--threads`` threads
(default 1, the same on both sides): on a shared 2-core machine two intra-op threads per process contend with
other jobs and a step's time swings tenfold, which drowns a per-step difference of a few milliseconds.

    python benchmarks/trainer_overhead.py [--steps 20] [--reps 5] [--completion-length 32] [--threads 1] [--no-progress]

Each repetition runs the two sides back to back and gives one ratio (median project step / median bare step);
the figure is the median of those ratios, since neighbours' load drifts between repetitions more than within
one (the pooled medians and the per-step CPU time of each side are printed too).

Last line: ``trainer_overhead ratio=<median over repetitions of the paired ratio>``. Goal ≤ 1.10.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def _cfg(out: Path, args: argparse.Namespace):
    from evaluator.training.config import load_config

    return load_config(None, {
        "domain": "gsm8k", "model": "tiny", "data": "synthetic", "output_dir": str(out),
        "max_steps": args.steps, "max_completion_length": args.completion_length, "seed": 7,
        "save_steps": 10_000, "logging_steps": 1,
    })


def _stamper() -> tuple[Any, list[tuple[float, float]]]:
    """One callback, used on both sides: (wall, process CPU) time at each training log event."""
    from transformers import TrainerCallback

    stamps: list[tuple[float, float]] = []

    class Stamp(TrainerCallback):
        def on_log(self, a, state, control, logs=None, **kw):  # type: ignore[no-untyped-def]
            if logs and "reward" in logs:
                stamps.append((time.perf_counter(), time.process_time()))

    return Stamp(), stamps


def _steps(stamps: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Per-step (wall, CPU) seconds, steps 2 … N-1."""
    return [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(stamps)][:-1]


def project_steps(out: Path, args: argparse.Namespace) -> list[tuple[float, float]]:
    import io

    from rich.console import Console

    from evaluator.training.grpo import train

    stamp, stamps = _stamper()
    console = Console(file=io.StringIO(), force_terminal=True, width=100)  # drawn as on a terminal, not shown
    train(_cfg(out, args), console=console, progress=not args.no_progress, callbacks=(stamp,))
    return _steps(stamps)


def bare_steps(out: Path, args: argparse.Namespace) -> list[tuple[float, float]]:
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOTrainer

    from evaluator.domains.registry import get_pack
    from evaluator.models.chat_format import chat_format, fold_dataset
    from evaluator.training.grpo import grpo_args, select_rewards
    from evaluator.training.run_setup import load_policy

    cfg = _cfg(out, args)
    out.mkdir(parents=True, exist_ok=True)
    pack = get_pack(cfg.domain)
    style = pack.check_style(cfg.style)
    dataset = pack.dataset(cfg.data, cfg.split, style=style, language=cfg.language, limit=cfg.limit, seed=cfg.seed)
    _, funcs, weights = select_rewards(pack, cfg)
    policy = load_policy(cfg)
    fmt = chat_format(policy.tokenizer, style, pack)
    stamp, stamps = _stamper()
    trainer = GRPOTrainer(
        model=policy.model, reward_funcs=funcs, args=grpo_args(cfg, out, policy, weights, fmt),
        train_dataset=fold_dataset(dataset, fmt), processing_class=policy.tokenizer, callbacks=[stamp],
    )
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    return _steps(stamps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--completion-length", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads, both sides")
    parser.add_argument("--no-progress", action="store_true", help="project side without the progress display")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import datasets

    datasets.disable_progress_bars()
    from evaluator.models.loading import ensure_tiny

    ensure_tiny("tiny")
    import torch

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    ours: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    pairs: list[tuple[float, float]] = []  # per repetition: (project, bare) median wall step, run back to back
    sides = [("project", project_steps, ours), ("bare", bare_steps, bare)]
    with tempfile.TemporaryDirectory() as tmp:
        warm = argparse.Namespace(**{**vars(args), "steps": 3})
        for name, fn, _ in sides:  # unmeasured: one-off warm-up costs land on neither side
            fn(Path(tmp) / f"warm-{name}", warm)
        for rep in range(args.reps):
            walls: dict[str, float] = {}
            for name, fn, sink in sides if rep % 2 == 0 else sides[::-1]:
                steps = fn(Path(tmp) / f"{name}-{rep}", args)
                sink.extend(steps)
                wall, cpu = (statistics.median(x) for x in zip(*steps, strict=True))
                walls[name] = wall
                print(f"rep {rep} {name:7s} median {wall:.4f} s/step (CPU {cpu:.4f} s) over {len(steps)} steps")
            pairs.append((walls["project"], walls["bare"]))
            print(f"rep {rep} ratio {walls['project'] / walls['bare']:.3f}")
    load_after = os.getloadavg()
    mo, mb = statistics.median(w for w, _ in ours), statistics.median(w for w, _ in bare)
    co, cb = statistics.median(c for _, c in ours), statistics.median(c for _, c in bare)
    print(
        f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1-minute, {os.cpu_count()} cores); "
        f"torch threads {args.threads}, progress display {'off' if args.no_progress else 'on'}"
    )
    print(f"median step CPU time: project {co:.4f} s, bare TRL {cb:.4f} s: ratio {co / cb:.3f}")
    print(f"median step: project {mo:.4f} s, bare TRL {mb:.4f} s ({len(ours)} and {len(bare)} steps): ratio {mo / mb:.3f}")
    ratio = statistics.median(p / b for p, b in pairs)
    print(f"trainer_overhead ratio={ratio:.3f}")


if __name__ == "__main__":
    main()
