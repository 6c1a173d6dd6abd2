"""Run folders in the formats the product writes, built with the product's own writers (fast: no model).

A training run: ``run_config.yaml`` through ``save_config``, metrics and completion rows shaped like the
trainer's (``MetricsLogger`` rows, the GRPO trainer's completion rows), ``best_adapter/best.json`` and a judge
log whose prompts fence each response the way the judge does. Evaluations come from ``score_predictions`` on
completions we choose (so correctness is known), comparisons from ``compare_reports``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

REWARDS = ("correctness", "int", "strict_format", "soft_format", "xmlcount")


def metrics_row(step: int, rng: random.Random) -> dict[str, Any]:
    row: dict[str, Any] = {"step": step, "epoch": step / 1000, "time": 1.7e9 + step, "loss": rng.random() / 10,
                           "grad_norm": rng.random(), "learning_rate": 5e-6, "num_tokens": 1000.0 * step,
                           "completions/mean_length": 40 + rng.random() * 20, "completions/min_length": 10.0,
                           "completions/max_length": 64.0, "completions/clipped_ratio": 0.1}
    for name in REWARDS:
        row[f"rewards/{name}/mean"] = rng.random()
        row[f"rewards/{name}/std"] = rng.random() / 5
    row.update({"reward": rng.random() * 3, "reward_std": 0.2, "frac_reward_zero_std": 0.5, "entropy": 2.0,
                "step_time": 0.1})
    return row


def completion_row(step: int, k: int, rng: random.Random, filler: int = 0) -> dict[str, Any]:
    answer = 10 + (step * 7 + k) % 90
    work = " ".join(f"step {i}: {answer - 3} plus 3 is {answer}." for i in range(filler // 28))
    return {
        "step": step,
        "prompt": f"Tom has {answer - 3} apples and buys 3 more. How many apples does Tom have? (step {step} #{k})",
        "completion": f"<reasoning>{work}{answer - 3} + 3 = {answer}</reasoning>\n<answer>\n{answer}\n</answer>",
        "rewards": {name: round(rng.random(), 3) if name != "correctness" else float(2 * (k % 2)) for name in REWARDS},
        "advantage": round(rng.uniform(-1, 1), 4),
    }


def write_lines(path: Path, rows: list[Any]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def make_training_run(folder: Path, *, steps: int = 20, per_step: int = 4, eval_every: int = 5,
                      judge: bool = True, seed: int = 0, filler: int = 0, finished: bool = True) -> Path:
    """A GRPO run folder: ``steps`` metrics rows (and held-out rows), ``per_step`` completions a step.

    ``filler`` adds about that many characters of reasoning to each completion (realistic file sizes);
    ``finished`` writes the ``run_summary.json`` a run leaves when it ends.
    """
    from evaluator.core.outputs import atomic_write_json
    from evaluator.training.config import TrainConfig, save_config

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    cfg = TrainConfig(domain="gsm8k", model="tiny", data="synthetic", output_dir=str(folder), max_steps=steps,
                      logging_steps=1, eval_every=eval_every, eval_limit=8)
    save_config(cfg, folder / "run_config.yaml", resolved={"device": "cpu", "style": "xml",
                                                             "rewards": dict.fromkeys(REWARDS, 1.0)})
    metrics, completions = [], []
    for step in range(1, steps + 1):
        metrics.append(metrics_row(step, rng))
        if eval_every and step % eval_every == 0:
            acc = min(1.0, step / steps)
            metrics.append({"step": step, "epoch": 0, "time": 1.7e9, "eval/accuracy": acc,
                            "eval/accuracy_ci_low": max(0.0, acc - 0.2), "eval/accuracy_ci_high": min(1.0, acc + 0.1),
                            "eval/format_rate": 1.0, "eval/n": 8.0, "step_time": None})
        completions += [completion_row(step, k, rng, filler) for k in range(per_step)]
    write_lines(folder / "metrics.jsonl", metrics)
    write_lines(folder / "completions.jsonl", completions)
    best_step = steps - steps % eval_every if eval_every else steps
    (folder / "best_adapter").mkdir(exist_ok=True)
    atomic_write_json(folder / "best_adapter" / "best.json", {
        "metric": "eval/accuracy", "value": best_step / steps, "step": best_step, "reward": 1.0, "note": "test"})
    if judge:
        write_judge_log(folder, completions[:8])
    if finished:
        atomic_write_json(folder / "run_summary.json", {
            "domain": "gsm8k", "model": "tiny", "output_dir": str(folder), "global_step": steps,
            "seconds": 1.5 * steps, "seconds_per_step": 1.5, "reward_last": metrics[-1].get("reward"),
            "best": {"metric": "eval/accuracy", "step": best_step}, "final_adapter": str(folder / "final")})
    return folder


def write_judge_log(folder: Path, completions: list[dict[str, Any]]) -> None:
    from evaluator.training.judges.prompt import build_judge_messages

    rows = []
    for i, c in enumerate(completions):
        messages = build_judge_messages({"task": c["prompt"], "reference": "x"}, {"5": "right"}, c["completion"])
        rows.append({"time": "2026-01-01T00:00:00+00:00", "step": c["step"] - 1, "sample_id": None, "index": i,
                     "judge": {"kind": "local", "model": "tiny-judge"}, "prompt": messages,
                     "raw_output": "{}", "score": 4, "reward": 0.8,
                     "feedback": f"판정 {i}: the sum is computed correctly", "latency_s": 0.1, "attempts": 1,
                     "retries": 0, "cached": False, "parse_errors": [], "error": None})
    write_lines(folder / "judge_evaluations.jsonl", rows)


def make_evaluation(folder: Path, right: list[bool], *, seed: int = 0) -> Path:
    """An evaluation whose item i is answered right exactly when ``right[i]``."""
    from evaluator.domains.registry import get_pack
    from evaluator.evaluation.predictions import score_predictions
    from evaluator.evaluation.report import write_report, write_samples

    folder.mkdir(parents=True, exist_ok=True)
    preds = folder.parent / f"{folder.name}-predictions.jsonl"
    lines = []
    for i, ok in enumerate(right):
        gold = 10 + i
        answer = gold if ok else gold + 1
        lines.append({"id": f"item-{i:03d}", "question": f"What is {gold - 1} + 1? (item {i})", "answer": str(gold),
                      "completion": f"<reasoning>work</reasoning>\n<answer>\n{answer}\n</answer>"})
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    report, samples = score_predictions(get_pack("gsm8k"), preds, seed=seed, samples_file="samples.jsonl")
    write_samples(folder / "samples.jsonl", samples)
    write_report(folder / "report.json", report)
    preds.unlink()
    return folder


def make_comparison(a: Path, b: Path, out: Path) -> Path:
    from evaluator.core.outputs import atomic_write_json
    from evaluator.evaluation.compare import compare_reports
    from evaluator.evaluation.harness import load_report

    result = compare_reports(load_report(a), load_report(b), 0, labels=(str(a), str(b)))
    atomic_write_json(out, result)
    return out


def make_experiment(folder: Path, runs: dict[str, Path]) -> Path:
    """``results.json`` in the experiment runner's shape (``app/experiments/results.schema.json``): arms ×
    seeds with metrics and cost, paired comparisons with Holm-adjusted p, the statistics used; each arm's
    run gets its evaluation in ``<run>/eval`` as the runner writes it."""
    from evaluator.core.outputs import atomic_write_json

    folder.mkdir(parents=True, exist_ok=True)
    arms = []
    for n, (name, run) in enumerate(runs.items()):
        if not (run / "eval" / "report.json").exists():
            make_evaluation(run / "eval", [i % (n + 2) == 0 for i in range(6)])
        seeds = [{"seed": s, "status": "ok", "reused": s == 1, "run_dir": str(run),
                  "metrics": {"accuracy": 0.5 + 0.1 * n + 0.01 * s},
                  "cost": {"seconds": 10.0 + s, "steps": 20, "seconds_per_step": 0.5, "peak_memory_mib": 700.0,
                           "judge_calls": 8 * n, "judge_tokens": 100 * n, "judge_bytes_sent": 4096 * n,
                           "failures": 0}, "error": None, "algorithm": "grpo"} for s in (0, 1)]
        arms.append({"name": name, "algorithm": "grpo", "spec": {}, "seeds": seeds, "n_seeds_ok": 2,
                     "mean": {"accuracy": 0.505 + 0.1 * n}, "ci": {"accuracy": [0.4 + 0.1 * n, 0.6 + 0.1 * n]}})
    names = list(runs)
    comparisons = [{"arm": a, "baseline": names[0], "metric": "accuracy", "arm_mean": 0.505 + 0.1 * k,
                    "baseline_mean": 0.505, "diff": 0.1 * k, "ci_low": -0.05, "ci_high": 0.2, "p": 0.2,
                    "p_adjusted": 0.2, "n_items": 6, "seeds": [0, 1]} for k, a in enumerate(names[1:], 1)]
    atomic_write_json(folder / "results.json", {
        "schema_version": 1, "name": "reward-approaches", "baseline": names[0], "seeds": [0, 1],
        "eval": {"split": "test", "n_items": 6}, "metrics": {"accuracy": {"higher_is_better": True}},
        "warm_start": None, "arms": arms, "comparisons": comparisons,
        "statistics": {"interval": "95% bootstrap clustered by item", "test": "paired sign-flip",
                       "correction": "holm", "family_size": len(comparisons)},
        "notes": [], "failures": []})
    return folder
