"""Does GRPO with the fund rewards make a model better at fund evaluations on funds it never saw?

Offline on a CPU, in-process through the product's own functions (the same ones the CLI calls):

1. A generated universe (``sample?funds=1800``: ~1,750 rated funds) split by fund code (``task.split_of``):
   ~1,400 train funds, ~350 held-out ``test`` funds (no fund in both).
2. A tiny Qwen3 from the project's builder (``build_tiny``) with a fund-only tokenizer (see ``SPEC``).
3. SFT warm start on the engine's reference evaluations (``pack.reference_solution``) for ``--sft-steps``.
4. ``evaluate`` on every held-out fund → before (the fund pack's declared metrics, bootstrap CIs).
5. GRPO with the fund rewards at the rubric's weights (json_format 10, grade_accuracy 50,
   reasoning_quality 30, consistency 10) for at most ``--grpo-minutes``; every completion of every step
   goes to ``completions.jsonl`` and is audited afterwards: per-reward means and the share of completions
   each reward's anti-gaming rules zeroed, step by step (``grpo_audit.jsonl``).
6. ``evaluate`` again → after; ``compare_reports`` gives each metric's paired change with its 95 % CI.
7. The control: continued SFT from the same warm start for GRPO's wall time, evaluated the same way.

Last line: ``fund_learning before=<exact> after=<exact> delta_ci_low=<points> grpo_minutes=<m>
reasoning_before=<x> reasoning_after=<y>`` (``delta_ci_low``: lower 95 % bound of the exact-grade change,
in percentage points).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

SPEC_NOTE = """Why this model: the fund prompt is long (~830 tokens with a fund-only byte-level BPE, ~2,150 with the
shared tiny tokenizer) and the reference answer ~155 tokens, so on 2 CPU cores the cost of a step is the
sequence, not the parameters. A tokenizer trained on fund text alone saturates at ~1,740 tokens (every
Korean term and two-digit number is one token), which halves the sequence against the shared vocabulary;
digits are not split (numbers are copied, not computed). Two layers of width 128 keep an SFT step of 8
rows near a second; the model is ~0.6 M parameters. The builder is the fund demo's (``app/fund_demo.py``)."""


def build_model(out: Path, source: str, args: argparse.Namespace) -> Path:
    """The tiny model, its tokenizer trained on training-split prompts and references only."""
    from evaluator.app.fund_demo import build_fund_model

    return build_fund_model(out, source, args.hidden, args.layers, args.seed)


def share_warm_start(work: Path, warm: Path) -> None:
    """Reuse another workdir's model, SFT warm start and its evaluation (seeds that vary GRPO only)."""
    for name in ("model", "sft", "eval_before"):
        if not (warm / name).exists():
            sys.exit(f"--warm-start {warm}: no {name}/ there (run that seed first)")
        target = work / name
        if not target.exists():
            target.symlink_to((warm / name).resolve(), target_is_directory=True)


def held_out(model: Path, out: Path, source: str, args: argparse.Namespace) -> dict[str, Any]:
    """The harness on every held-out fund (or the first ``--eval-limit``), greedy."""
    from evaluator.core.generation import GenerationSettings, ModelRef
    from evaluator.evaluation.harness import evaluate, load_report
    from evaluator.evaluation.inputs import Items, ReportFolder

    if (out / "report.json").exists():
        return load_report(out)
    return evaluate(
        "fund",
        ModelRef(str(model)),
        Items(data=source, split="test", limit=args.eval_limit),
        GenerationSettings(max_new_tokens=args.max_completion_length, batch_size=args.eval_batch),
        out=ReportFolder(out, force=True),
    )


def metric(report: dict[str, Any], name: str) -> float:
    return float(report["metrics"][name]["value"])


def paired(comparison: dict[str, Any], name: str) -> tuple[float, tuple[float, float]]:
    entry = comparison["metrics"][name]
    return float(entry["delta"]), (float(entry["ci95"][0]), float(entry["ci95"][1]))


def show_comparison(label: str, comparison: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> None:
    for name in ("grade_exact", "within_one", "abs_grade_error", "schema_valid", "reasoning_quality", "total_reward"):
        if name not in comparison["metrics"]:
            continue
        delta, (lo, hi) = paired(comparison, name)
        print(
            f"{label} {name}: {metric(a, name):.4f} -> {metric(b, name):.4f} "
            f"delta={delta:+.4f} ci95=[{lo:+.4f}, {hi:+.4f}]",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=Path("runs/fund-learning"))
    ap.add_argument("--funds", type=int, default=1800, help="Generated universe size (~97 %% get rated).")
    ap.add_argument("--universe-seed", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0, help="Model init, training order and sampling.")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--sft-steps", type=int, default=400)
    ap.add_argument("--sft-lr", type=float, default=2e-3)
    ap.add_argument("--sft-batch", type=int, default=8)
    ap.add_argument("--grpo-minutes", type=float, default=12.0)
    ap.add_argument("--grpo-lr", type=float, default=5e-5)
    ap.add_argument("--num-generations", type=int, default=8)
    ap.add_argument("--prompts-per-step", type=int, default=2)
    ap.add_argument("--temperature", type=float, default=0.7, help="1.0 broke the JSON of half the rollouts.")
    ap.add_argument("--max-completion-length", type=int, default=192, help="The references' longest is ~160.")
    ap.add_argument("--eval-limit", type=int, default=None, help="Held-out funds to grade (default: all).")
    ap.add_argument("--eval-batch", type=int, default=64)
    ap.add_argument("--skip-control", action="store_true")
    ap.add_argument(
        "--warm-start",
        type=Path,
        default=None,
        help="Another seed's workdir: reuse its model, SFT warm start and before-evaluation (GRPO's seed varies).",
    )
    ap.add_argument(
        "--agreement",
        nargs=2,
        metavar=("MODEL", "OUT"),
        help="Only the agreement stage for one trained model folder: fund evaluate --split test, fund agreement.",
    )
    ap.add_argument(
        "--control-seconds",
        type=float,
        default=None,
        help="Run only the continued-SFT control for this wall time (beside a GRPO run, under the same load).",
    )
    ap.add_argument("--kappa", action="store_true", help="Only κ against the engine from the workdir's evaluations.")
    ap.add_argument("--agreement-funds", type=int, default=600, help="CLI sample universe for --agreement.")
    args = ap.parse_args()
    if args.kappa:
        for name in ("eval_before", "eval_after", "eval_sft_control"):
            if (args.workdir / name / "samples.jsonl").exists():
                print(f"kappa {name}: {json.dumps(kappa_from_samples(args.workdir / name))}")
        return
    if args.agreement:
        doc = agreement(Path(args.agreement[0]), Path(args.agreement[1]), args.agreement_funds, args.max_completion_length)
        print(json.dumps(doc["overall"], ensure_ascii=False)[:3000])
        print(doc["summary_ko"])
        return

    from evaluator.core.outputs import atomic_write_json
    from evaluator.domains.fund.task.dataset import load_rows
    from evaluator.evaluation.compare import compare_reports
    from evaluator.training.config import TrainConfig
    from evaluator.training.grpo import train
    from evaluator.training.sft import sft

    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    if args.warm_start is not None:
        share_warm_start(work, args.warm_start)
    source = f"sample?funds={args.funds}&seed={args.universe_seed}"
    t0 = time.perf_counter()
    n_train, n_test = len(load_rows(source, "train")), len(load_rows(source, "test"))
    print(f"universe {source}: {n_train} train funds, {n_test} held-out funds ({time.perf_counter() - t0:.0f} s)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    model = build_model(work / "model", source, args)
    base = TrainConfig(domain="fund", model=str(model), data=source, lora=False, force=True, seed=args.seed)
    sft_common = dict(
        learning_rate=args.sft_lr,
        lr_scheduler_type="constant",
        per_device_train_batch_size=args.sft_batch,
        save_steps=100_000,
        logging_steps=10,
        max_seq_length=1280,
    )
    warm_dir = work / "sft"
    if not (warm_dir / "final" / "config.json").exists():
        warm = sft(base.replace(output_dir=str(warm_dir), max_steps=args.sft_steps, **sft_common), progress=False)
        print(f"sft warm start: {warm['global_step']} steps in {warm['seconds']:.0f} s, loss {warm['loss_first']} -> {warm['loss_last']}", flush=True)
    before = held_out(warm_dir / "final", work / "eval_before", source, args)
    print(f"before: exact {metric(before, 'grade_exact'):.4f} on {before['n_items']} held-out funds", flush=True)

    if args.control_seconds is not None:  # the control alone, e.g. beside GRPO under the same machine load
        run_control(work, base, sft_common, args.control_seconds)
        control = held_out(work / "sft_control" / "final", work / "eval_sft_control", source, args)
        show_comparison("sft_control", compare_reports(before, control, labels=("before", "sft_control")), before, control)
        return

    grpo_dir = work / "grpo"
    per_step = args.num_generations * args.prompts_per_step
    if not (grpo_dir / "run_summary.json").exists():
        train(
            base.replace(
                output_dir=str(grpo_dir),
                init_from=str(warm_dir / "final"),
                learning_rate=args.grpo_lr,
                lr_scheduler_type="constant",
                num_generations=args.num_generations,
                per_device_train_batch_size=per_step,
                max_completion_length=args.max_completion_length,
                temperature=args.temperature,
                max_steps=100_000,
                max_seconds=args.grpo_minutes * 60,
                save_steps=100_000,
                completions_per_log=per_step,
            ),
            progress=False,
        )
    grpo = json.loads((grpo_dir / "run_summary.json").read_text(encoding="utf-8"))
    audit_run(grpo_dir, source)
    after = held_out(grpo_dir / "final", work / "eval_after", source, args)
    comparison = compare_reports(before, after, labels=("before", "after"))
    atomic_write_json(work / "compare_grpo.json", comparison)
    print(f"grpo: {grpo['global_step']} steps in {grpo['seconds']:.0f} s", flush=True)
    show_comparison("grpo", comparison, before, after)

    if not args.skip_control:
        control_dir = run_control(work, base, sft_common, float(grpo["seconds"]))
        control = held_out(control_dir / "final", work / "eval_sft_control", source, args)
        versus = compare_reports(before, control, labels=("before", "sft_control"))
        atomic_write_json(work / "compare_sft_control.json", versus)
        show_comparison("sft_control", versus, before, control)
        head = compare_reports(control, after, labels=("sft_control", "grpo"))
        atomic_write_json(work / "compare_grpo_vs_sft.json", head)
        show_comparison("grpo_vs_sft", head, control, after)

    for name in ("eval_before", "eval_after", "eval_sft_control"):
        if (work / name / "samples.jsonl").exists():
            print(f"kappa vs engine, {name}: {json.dumps(kappa_from_samples(work / name))}", flush=True)
    _, (exact_lo, _) = paired(comparison, "grade_exact")
    print(
        f"fund_learning before={metric(before, 'grade_exact'):.4f} after={metric(after, 'grade_exact'):.4f} "
        f"delta_ci_low={exact_lo * 100:.2f} grpo_minutes={grpo['seconds'] / 60:.2f} "
        f"reasoning_before={metric(before, 'reasoning_quality'):.4f} "
        f"reasoning_after={metric(after, 'reasoning_quality'):.4f}"
    )


def run_control(work: Path, base: Any, sft_common: dict[str, Any], seconds: float) -> Path:
    """Continued SFT from the warm start for ``seconds`` of wall time (kept when already there)."""
    from evaluator.training.sft import sft

    control_dir = work / "sft_control"
    if not (control_dir / "final" / "config.json").exists():
        summary = sft(
            base.replace(
                output_dir=str(control_dir),
                init_from=str(work / "sft" / "final"),
                max_steps=100_000,
                max_seconds=seconds,
                **sft_common,
            ),
            progress=False,
        )
        print(f"sft control: {summary['global_step']} steps in {summary['seconds']:.0f} s", flush=True)
    return control_dir


def cli(*args: str, log: Path) -> None:
    """``evaluator ARGS`` in a subprocess, as a user runs it; abort with the log's tail when it fails."""
    import subprocess

    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"\n$ evaluator {' '.join(args)}\n")
        fh.flush()
        done = subprocess.run([sys.executable, "-m", "evaluator.app.cli", *args], stdout=fh, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"step failed: evaluator {' '.join(args)}\n{log.read_text(encoding='utf-8')[-3000:]}")


def agreement(model: Path, out: Path, funds: int, max_new_tokens: int) -> dict[str, Any]:
    """``fund evaluate --model M --split test`` on the CLI's sample universe, then ``fund agreement`` with
    the engine's grades as the experts file: the model's quadratic κ against the engine, with its CI."""
    import csv

    out.mkdir(parents=True, exist_ok=True)
    log, reports = out / "log.txt", out / "reports"
    if not (reports / "summary.json").exists():
        cli(
            "fund", "evaluate", "--sample", "--sample-funds", str(funds), "--model", str(model), "--split", "test",
            "--max-new-tokens", str(max_new_tokens), "--batch-size", "64", "--out", str(reports), "--force", log=log,
        )  # fmt: skip
    summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    experts = out / "engine_grades.csv"
    with open(experts, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["펀드코드", "등급", "평가자"])
        held_out = evaluated_codes(summary)
        for line in summary["funds"]:
            if line["fund_code"] in held_out:
                writer.writerow([line["fund_code"], line["grade"], "engine"])
    cli("fund", "agreement", str(reports), "--experts", str(experts), "--out", str(out / "agreement"), "--force", log=log)
    return json.loads((out / "agreement" / "agreement.json").read_text(encoding="utf-8"))


def kappa_from_samples(eval_dir: Path) -> dict[str, Any]:
    """The model's quadratic κ against the engine on the harness's held-out samples (readable grades only;
    ``agreement.compare``, the function ``fund agreement`` uses), with how many answers were unreadable."""
    from evaluator.domains.fund.agreement.stats import Pairs, compare

    samples = [json.loads(x) for x in (eval_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x]
    readable = [s for s in samples if s.get("extracted") is not None]
    pairs = Pairs(
        cluster=[str(s["id"]) for s in readable],
        rows=[int(s["gold"]) for s in readable],
        cols=[int(s["extracted"]) for s in readable],
    )
    result = compare(pairs, 5)
    return {"kappa": result["kappa"], "kappa_ci95": result["kappa_ci95"], "readable": len(readable), "n": len(samples)}


def evaluated_codes(summary: dict[str, Any]) -> set[str]:
    """Funds the model was asked about (its answer may be unreadable): the test split's rated funds."""
    from evaluator.domains.fund.task.dataset import split_of

    return {line["fund_code"] for line in summary["funds"] if line.get("grade") is not None and split_of(line["fund_code"]) == "test"}


def audit_run(grpo_dir: Path, source: str) -> None:
    """Per step: reward means, groups without signal, and each reward's zeroing rules (``grpo_audit.jsonl``)."""
    from evaluator.domains.fund.task.audit import audit_completions

    rows = audit_completions(grpo_dir / "completions.jsonl", source)
    with open(grpo_dir / "grpo_audit.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    if rows:
        first, last = rows[0], rows[-1]
        print(f"grpo audit, step {first['step']}: {json.dumps(first, ensure_ascii=False)}")
        print(f"grpo audit, step {last['step']}: {json.dumps(last, ensure_ascii=False)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
