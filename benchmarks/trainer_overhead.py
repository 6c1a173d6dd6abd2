"""The project's GRPO trainer against bare TRL ``GRPOTrainer`` on the same config: what does the wrapping cost?

Both sides get the same tiny model (LoRA), dataset, prompt rendering, reward functions and weights and the
same ``GRPOConfig`` (built by ``grpo_args``); the project side adds its callbacks (metrics file, completions
file, best-adapter saving, time-limit checks) through ``train()``. A step's time is the wall time between
consecutive log events (``logging_steps=1``), so logging and file writing are inside it. The first step
(warm-up) and the last (the project always checkpoints it) are left out. Runs alternate between the two
sides to spread machine-load drift evenly.

    python benchmarks/trainer_overhead.py [--steps 12] [--reps 2] [--completion-length 32]

Last line: ``trainer_overhead ratio=<median project step / median bare step>``. Goal ≤ 1.10.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path


def _cfg(out: Path, args: argparse.Namespace):
    from evaluator.training.config import load_config

    return load_config(None, {
        "domain": "gsm8k", "model": "tiny", "data": "synthetic", "output_dir": str(out),
        "max_steps": args.steps, "max_completion_length": args.completion_length, "seed": 7,
        "save_steps": 10_000, "logging_steps": 1,
    })


def project_steps(out: Path, args: argparse.Namespace) -> list[float]:
    import json

    from evaluator.training.grpo import train

    train(_cfg(out, args), progress=False)
    times = [json.loads(line)["time"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [b - a for a, b in itertools.pairwise(times)][:-1]  # steps 2 … N-1


def bare_steps(out: Path, args: argparse.Namespace) -> list[float]:
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOTrainer

    from evaluator.domains.registry import get_pack
    from evaluator.training.chat_format import chat_format, fold_dataset
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
    stamps: list[float] = []

    class Stamp(TrainerCallback):
        def on_log(self, a, state, control, logs=None, **kw):  # type: ignore[no-untyped-def]
            if logs and "reward" in logs:
                stamps.append(time.time())

    trainer = GRPOTrainer(
        model=policy.model, reward_funcs=funcs, args=grpo_args(cfg, out, policy, weights, fmt),
        train_dataset=fold_dataset(dataset, fmt), processing_class=policy.tokenizer, callbacks=[Stamp()],
    )
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    return [b - a for a, b in itertools.pairwise(stamps)][:-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--completion-length", type=int, default=32)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import datasets

    datasets.disable_progress_bars()
    from evaluator.training.models import ensure_tiny

    ensure_tiny("tiny")
    load_before = os.getloadavg()
    ours: list[float] = []
    bare: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for name, fn, sink in (("project", project_steps, ours), ("bare", bare_steps, bare)):
                steps = fn(Path(tmp) / f"{name}-{rep}", args)
                sink.extend(steps)
                print(f"rep {rep} {name:7s} median {statistics.median(steps):.4f} s/step over {len(steps)} steps")
    load_after = os.getloadavg()
    mo, mb = statistics.median(ours), statistics.median(bare)
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1-minute, {os.cpu_count()} cores)")
    print(f"median step: project {mo:.4f} s, bare TRL {mb:.4f} s ({len(ours)} and {len(bare)} steps)")
    print(f"trainer_overhead ratio={mo / mb:.3f}")


if __name__ == "__main__":
    main()
