"""Does GRPO make the model better? An offline before/after measurement on a 2-core CPU.

1. Build the ~3.3 M-parameter ``tiny-demo`` Qwen3 (digit-level tokenizer) and SFT-warm it on synthetic
   GSM8K-style problems for a fixed number of steps (calibrated to land at roughly 30–60 % held-out accuracy).
2. ``evaluator eval`` on a fixed held-out set (≥ 300 synthetic test problems, never in training) → before.
3. ``evaluator train`` (GRPO: correctness + format rewards) for at most ``--grpo-minutes`` of wall time.
4. ``evaluator eval`` again → after, and ``evaluator compare`` for the paired CI and McNemar test.
5. The honest control: continue SFT from the same start for the same wall time → ``sft_control``.

Every step runs the real CLI in a subprocess, exactly as a user would. Last line:
``learning before=<acc> after=<acc> delta_ci_low=<lower 95% bound of after−before> grpo_minutes=<m>``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def cli(*args: str, log: Path) -> float:
    """Run ``evaluator ARGS`` and return its wall time; abort with the log tail if it fails."""
    t0 = time.perf_counter()
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"\n$ evaluator {' '.join(args)}\n")
        fh.flush()
        proc = subprocess.run(
            [sys.executable, "-m", "evaluator.app.cli", *args], stdout=fh, stderr=subprocess.STDOUT
        )
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8")[-3000:]
        sys.exit(f"step failed: evaluator {' '.join(args)}\n{tail}")
    return time.perf_counter() - t0


def accuracy(report_dir: Path) -> float:
    return json.loads((report_dir / "report.json").read_text())["accuracy"]["strict"]["value"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=Path("runs/learning"))
    ap.add_argument("--data", default="synthetic:steps=1,max=10")
    ap.add_argument(
        "--sft-steps",
        type=int,
        default=700,
        help="Warm-start SFT steps (batch 16, constant lr): a step count, unlike a time budget, does not depend "
        "on how busy the machine is. 700 lands near 50 %% held-out accuracy.",
    )
    ap.add_argument("--sft-lr", type=float, default=2e-3)
    ap.add_argument("--grpo-minutes", type=float, default=10.0)
    ap.add_argument("--grpo-lr", type=float, default=5e-5)
    ap.add_argument("--num-generations", type=int, default=8)
    ap.add_argument("--prompts-per-step", type=int, default=4, help="GRPO groups per optimizer step.")
    ap.add_argument("--max-completion-length", type=int, default=48, help="Fits every reference solution.")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--tag", default="", help="Suffix for the GRPO/control folders, to keep variants apart.")
    ap.add_argument(
        "--eval-n", type=int, default=1000, help="Held-out problems (its first 300 are the 300-problem set)."
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-control", action="store_true", help="Skip the continued-SFT control.")
    args = ap.parse_args()

    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("EVALUATOR_CACHE", str(work / "cache"))
    log = work / "log.txt"
    model = work / "model"
    common = ["--domain", "gsm8k", "--data", args.data, "--seed", str(args.seed)]
    evaluate = [
        "--split",
        "test",
        "--limit",
        str(args.eval_n),
        "--max-new-tokens",
        str(args.max_completion_length),
        "--batch-size",
        "50",
    ]

    def held_out_accuracy(model_dir: Path, out: Path) -> float:
        """``evaluator eval`` of one model on the fixed held-out set; its strict accuracy."""
        cli("eval", *common, "--model", str(model_dir), *evaluate, "--out", str(out), "--force", log=log)
        return accuracy(out)

    # Warm start and control train identically (constant learning rate); only the start point and the
    # budget differ: the warm start runs a fixed number of steps, the control GRPO's wall time.
    sft_flags = [
        "--no-lora",
        "--learning-rate",
        str(args.sft_lr),
        "--lr-scheduler",
        "constant",
        "--per-device-batch",
        "16",
        "--max-seq-length",
        "256",
    ]

    if not (model / "config.json").exists():
        cli("model", "build-tiny", "--kind", "tiny-demo", "--out", str(model), log=log)
    sft_dir = work / "sft"
    if not (sft_dir / "final" / "config.json").exists():
        cli(
            "sft",
            *common,
            "--model",
            str(model),
            *sft_flags,
            "--max-steps",
            str(args.sft_steps),
            "--output-dir",
            str(sft_dir),
            "--force",
            log=log,
        )
    before = work / "eval_before"
    acc_before = held_out_accuracy(sft_dir / "final", before)
    print(f"sft_warm_start accuracy={acc_before:.4f} (target 0.30–0.60)", flush=True)

    grpo_dir = work / f"grpo{args.tag}"
    t_grpo = cli(
        "train",
        *common,
        "--model",
        str(model),
        "--init-from",
        str(sft_dir / "final"),
        "--no-lora",
        "--learning-rate",
        str(args.grpo_lr),
        "--num-generations",
        str(args.num_generations),
        "--per-device-batch",
        str(args.num_generations * args.prompts_per_step),
        "--max-completion-length",
        str(args.max_completion_length),
        "--temperature",
        str(args.temperature),
        "--rewards",
        "correctness,strict_format,soft_format,xmlcount",
        "--max-steps",
        "100000",
        "--max-seconds",
        str(args.grpo_minutes * 60),
        "--save-steps",
        "100000",
        "--output-dir",
        str(grpo_dir),
        "--force",
        log=log,
    )
    summary = json.loads((grpo_dir / "run_summary.json").read_text())
    after = work / f"eval_after{args.tag}"
    acc_after = held_out_accuracy(grpo_dir / "final", after)
    compare_json = work / f"compare{args.tag}.json"
    cli(
        "compare",
        str(before / "report.json"),
        str(after / "report.json"),
        "--out",
        str(compare_json),
        "--force",
        log=log,
    )
    comparison = json.loads(compare_json.read_text())
    strict = comparison["results"]["strict"]
    print(
        f"grpo steps={summary['global_step']} seconds={summary['seconds']:.0f} "
        f"reward {summary['reward_first']:.3f}->{summary['reward_last']:.3f} "
        f"flips_gained={strict['n_gained']} flips_lost={strict['n_lost']} mcnemar_p={strict['mcnemar_p']:.2g}",
        flush=True,
    )

    if not args.skip_control:
        control = work / f"sft_control{args.tag}"
        cli(
            "sft",
            *common,
            "--model",
            str(model),
            "--init-from",
            str(sft_dir / "final"),
            *sft_flags,
            "--max-steps",
            "100000",
            "--max-seconds",
            str(summary["seconds"]),
            "--output-dir",
            str(control),
            "--force",
            log=log,
        )
        acc_control = held_out_accuracy(control / "final", work / f"eval_sft_control{args.tag}")
        print(f"sft_control={acc_control:.4f}", flush=True)
    delta_low = strict["ci95"][0]
    print(
        f"learning before={acc_before:.4f} after={acc_after:.4f} delta_ci_low={delta_low:.4f} "
        f"grpo_minutes={t_grpo / 60:.2f}"
    )


if __name__ == "__main__":
    main()
