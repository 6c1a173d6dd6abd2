"""GPU validation of the memory planner: real QLoRA GRPO steps at preset shapes, planner vs measured.

For each model shape (default qwen3-0.6b, qwen3-8b, atomicgpt-gemma2-9b) the script builds a random-initialised
checkpoint from the shipped architecture facts (no download: initialised on the GPU in bf16 and saved to local
disk with the offline tiny tokenizer), then runs the project's trainer on it through the real 4-bit path
(NF4 + LoRA + paged 8-bit AdamW + bf16, gradient checkpointing as on CUDA by default) for 3 GRPO steps.
Recorded per model: ``torch.cuda.max_memory_allocated`` (compared with the plan's ``torch_allocated_bytes``),
``max_memory_reserved``, seconds per step and generated tokens per second (end to end). An out-of-memory
is caught per model and reported. Also checked: the 4-bit path trains (finite loss and grad norm, LoRA B
matrices move away from zero), and an absurd batch through ``evaluator train`` ends with the actionable
out-of-memory message, not a traceback.

The reward is a deterministic function of the generated token ids, so groups of a random model still differ
and the adapter gets gradients. A random model almost never samples EOS, so completions run to full length.

Run on a CUDA machine: ``python benchmarks/gpu_memory.py [--models ...] [--completion-length 512] [--out f.json]``.
``--cpu-smoke`` runs the same plumbing with shrunken shapes on CPU (no measurement) to check the script itself.
The last line printed is the summary.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evaluator.domains.gsm8k.pack import GSM8KPack

GIB = 1024**3
DEFAULT_MODELS = ("qwen3-0.6b", "qwen3-8b", "atomicgpt-gemma2-9b")
BENCH_DOMAIN = "gpu-bench"
TOLERANCE = 0.15


def token_id_reward(
    completions: list[Any], completion_ids: list[list[int]] | None = None, **_: Any
) -> list[float | None]:
    """A reward that differs between random completions (so advantages, and gradients, are not zero)."""
    ids = completion_ids or [[] for _ in completions]
    return [(sum(seq) % 97) / 97.0 for seq in ids]


class BenchPack(GSM8KPack):
    """GSM8K prompts with :func:`token_id_reward` only: a random model gets a learning signal."""

    name = BENCH_DOMAIN

    def reward_functions(self) -> dict[str, Any]:
        return {"token_id": token_id_reward}

    def rubric(self) -> dict[str, Any]:
        """GSM8K's rubric with its reward table replaced (the registry checks the table names these rewards)."""
        doc = super().rubric()
        doc["rewards"] = {"token_id": {"weight": 1.0, "description": "varies with the generated token ids"}}
        return doc


SMOKE_VOCAB = 1024  # the offline tiny tokenizer's vocabulary: every id it produces has an embedding


def shrink(arch: Any) -> Any:
    """A 2-layer, narrow version of ``arch`` (same family, the tiny tokenizer's vocabulary) for ``--cpu-smoke``."""
    extra = dict(arch.extra)
    if "layer_types" in extra:
        extra["layer_types"] = extra["layer_types"][:2]
    return dataclasses.replace(
        arch,
        num_hidden_layers=2,
        hidden_size=128,
        intermediate_size=256,
        vocab_size=min(arch.vocab_size, SMOKE_VOCAB),
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        sliding_layers=min(arch.sliding_layers, 1),
        extra=extra,
    )


def build_checkpoint(arch: Any, folder: Path, device: str) -> Path:
    """Save a random-initialised model of ``arch`` plus the offline tiny tokenizer to ``folder``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    from evaluator.models.loading import ensure_tiny

    tok = AutoTokenizer.from_pretrained(ensure_tiny("tiny"))
    kwargs = arch.config_kwargs()
    kwargs.update(pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=None)
    from transformers import AutoConfig

    config = AutoConfig.for_model(arch.model_type, **kwargs)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model.save_pretrained(folder, max_shard_size="4GB")
    tok.save_pretrained(folder)
    del model
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return folder


def read_metrics(out: Path) -> list[dict[str, Any]]:
    path = out / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def adapter_moved(out: Path) -> bool:
    """LoRA B matrices start at zero; any non-zero entry in the final adapter means the optimizer moved it."""
    import torch
    from safetensors.torch import load_file

    path = out / "final" / "adapter_model.safetensors"
    if not path.exists():
        return False
    state = load_file(str(path))
    return any(torch.count_nonzero(v) > 0 for k, v in state.items() if "lora_B" in k)


def measure_training(
    cfg: Any, plan: Any, *, cuda: bool, keep_logs: Path | None = None, callbacks: tuple[Any, ...] = ()
) -> dict[str, Any]:
    """Train ``cfg`` in this process and measure it against ``plan``; an OOM is a result, not a crash.

    Peak memory is ``torch.cuda.max_memory_allocated`` since this call (reset first). Generated tokens/s is end
    to end (generation plus the training step), from the metrics the run writes. ``keep_logs`` receives copies of
    the run's metrics, summary and config before the caller deletes the run folder.
    """
    import torch

    from evaluator.training.grpo import train
    from evaluator.training.memory.oom import TrainingOOM
    from evaluator.training.memory.plan import OOM_ADVICE

    out = Path(cfg.output_dir)
    result: dict[str, Any] = {}
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    try:
        summary = train(cfg, progress=False, callbacks=callbacks)
    except TrainingOOM as exc:
        result.update(status="OOM", message=str(exc), advice_shown=OOM_ADVICE in str(exc))
        summary = None
    result["wall_seconds"] = round(time.perf_counter() - t0, 1)
    if cuda:
        result["measured_max_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        result["measured_max_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
        est, got = plan.torch_allocated_bytes, result["measured_max_allocated_bytes"]
        result["error"] = (est - got) / got if got else None
    if keep_logs is not None:
        keep_logs.mkdir(parents=True, exist_ok=True)
        for name in ("metrics.jsonl", "run_summary.json", "run_config.yaml", "judge_evaluations.jsonl"):
            if (out / name).exists():
                shutil.copy2(out / name, keep_logs / name)
    if summary is not None:
        rows = read_metrics(out)
        per_step = cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps
        step_time = sum(float(r.get("step_time") or 0.0) for r in rows)
        tokens = sum(float(r.get("completions/mean_length") or 0.0) * per_step for r in rows)
        losses = [r.get("loss") for r in rows]
        norms = [r.get("grad_norm") for r in rows]
        clipped = [float(r["completions/clipped_ratio"]) for r in rows if r.get("completions/clipped_ratio") is not None]
        result.update(
            status="ok",
            steps=len(rows),
            stopped_for_time=bool(summary.get("stopped_for_time")),
            seconds_per_step=summary.get("seconds_per_step"),
            generated_tokens_per_s=round(tokens / step_time, 1) if step_time else None,
            clipped_ratio=round(sum(clipped) / len(clipped), 3) if clipped else None,
            finite_loss_and_grad=bool(rows)
            and all(v is not None and math.isfinite(float(v)) for v in losses + norms),
            lora_moved=adapter_moved(out),
            resolved=summary.get("resolved"),
            judge=summary.get("judge"),
        )
    return result


def run_model(name: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Build, train 3 steps, measure, and compare with the plan; an OOM is a result, not a crash."""
    import torch

    from evaluator.training.config import TrainConfig
    from evaluator.training.memory.architectures import PRESET_ARCHS
    from evaluator.training.memory.plan import longest_prompt_tokens, plan_for_train_config

    cuda = not args.cpu_smoke
    arch = PRESET_ARCHS[name] if cuda else shrink(PRESET_ARCHS[name])
    ckpt = build_checkpoint(arch, work / f"{name}-random", "cuda" if cuda else "cpu")
    out = work / f"{name}-run"
    cfg = TrainConfig(
        domain=BENCH_DOMAIN,
        model=str(ckpt),
        data="synthetic",
        limit=64,
        quantize="4bit",
        max_steps=args.steps,
        per_device_train_batch_size=args.per_device_batch,
        gradient_accumulation_steps=args.grad_accum,
        num_generations=args.num_generations,
        max_completion_length=args.completion_length,
        lora_r=args.lora_r,
        output_dir=str(out),
        save_steps=1000,
        logging_steps=1,
    )
    plan = plan_for_train_config(
        cfg, device="cuda" if cuda else "cpu", prompt_length=longest_prompt_tokens(cfg)
    )
    result: dict[str, Any] = {
        "model": name,
        "completion_length": args.completion_length,
        "prompt_length": plan.settings.prompt_length,
        "per_device_batch": args.per_device_batch,
        "num_generations": args.num_generations,
        "estimate_torch_bytes": plan.torch_allocated_bytes,
        "estimate_total_bytes": plan.total_bytes,
        "estimate_peak_phase": plan.peak_phase,
    }
    result.update(measure_training(cfg, plan, cuda=cuda))
    shutil.rmtree(ckpt, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return result


def induced_oom(work: Path) -> dict[str, Any]:
    """An absurd batch through the real CLI must end with the advice, exit code 2 and no traceback."""
    from evaluator.training.memory.architectures import PRESET_ARCHS
    from evaluator.training.memory.plan import OOM_ADVICE

    ckpt = build_checkpoint(PRESET_ARCHS["qwen3-0.6b"], work / "oom-random", "cuda")
    cmd = [
        sys.executable,
        "-m",
        "evaluator.app.cli",
        "train",
        "--domain",
        "gsm8k",
        "--model",
        str(ckpt),
        "--data",
        "synthetic",
        "--max-steps",
        "1",
        "--per-device-batch",
        "1024",
        "--num-generations",
        "4",
        "--max-completion-length",
        "4096",
        "--output-dir",
        str(work / "oom-run"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    shutil.rmtree(ckpt, ignore_errors=True)
    err = proc.stderr
    return {
        "exit_code": proc.returncode,
        "advice_shown": OOM_ADVICE.split(":")[0] in " ".join(err.split()),
        "traceback": "Traceback" in err,
        "stderr_tail": err.strip().splitlines()[-3:],
    }


def print_table(results: list[dict[str, Any]], device: str) -> None:
    print(f"Device: {device}")
    head = (
        f"{'model':<22}{'compl':>6}{'plan GiB':>10}{'measured':>10}{'error':>8}{'plan tot':>10}{'reserved':>10}"
        f"{'s/step':>8}{'tok/s':>8}  status"
    )
    print(head)
    for r in results:
        measured = r.get("measured_max_allocated_bytes")
        reserved = r.get("measured_max_reserved_bytes")
        err = r.get("error")
        print(
            f"{r['model']:<22}{r['completion_length']:>6}{r['estimate_torch_bytes'] / GIB:>10.2f}"
            f"{(measured / GIB if measured else float('nan')):>10.2f}"
            f"{(f'{err:+.0%}' if err is not None else 'n/a'):>8}{r['estimate_total_bytes'] / GIB:>10.2f}"
            f"{(reserved / GIB if reserved else float('nan')):>10.2f}{r.get('seconds_per_step') or 0:>8.1f}"
            f"{r.get('generated_tokens_per_s') or 0:>8.1f}  {r['status']}"
            + (
                f" (loss/grad finite: {r.get('finite_loss_and_grad')}, LoRA moved: {r.get('lora_moved')})"
                if r["status"] == "ok"
                else ""
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    parser.add_argument("--completion-length", type=int, default=512)
    parser.add_argument("--per-device-batch", type=int, default=4)
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--skip-oom-check", action="store_true")
    parser.add_argument(
        "--cpu-smoke", action="store_true", help="shrunken shapes on CPU: checks the script only"
    )
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument("--force", action="store_true", help="overwrite --out")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from evaluator.core.outputs import atomic_write_json, ensure_new_file
    from evaluator.domains.registry import register

    if args.out:
        ensure_new_file(args.out, force=args.force)
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("gpu_memory summary: no CUDA device; nothing measured (use --cpu-smoke to check the script)")
        return 1
    if args.cpu_smoke:
        args.steps, args.completion_length = min(args.steps, 1), min(args.completion_length, 16)
    register(BENCH_DOMAIN, f"{__name__}:BenchPack")
    device = "CPU (smoke test)" if args.cpu_smoke else torch.cuda.get_device_name(0)
    results = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("GPU_BENCH_DIR")) as tmp:
        work = Path(tmp)
        os.environ.setdefault("EVALUATOR_CACHE", str(work / "cache"))
        for name in args.models:
            print(f"== {name}", flush=True)
            results.append(run_model(name, args, work))
            print(json.dumps(results[-1], default=str), flush=True)
        oom = None if (args.skip_oom_check or args.cpu_smoke) else induced_oom(work)
    print_table(results, device)
    if oom is not None:
        print(
            f"Induced OOM via `evaluator train`: exit {oom['exit_code']}, advice shown {oom['advice_shown']}, "
            f"traceback {oom['traceback']}"
        )
    if args.out:
        atomic_write_json(
            args.out,
            {"device": device, "date": time.strftime("%Y-%m-%d"), "results": results, "induced_oom": oom},
        )
    measured = [r for r in results if r.get("error") is not None and r["status"] == "ok"]
    within = [r for r in measured if abs(r["error"]) <= TOLERANCE]
    worst = max((abs(r["error"]) for r in measured), default=0.0)
    if args.cpu_smoke:
        ok = all(r["status"] == "ok" and r.get("lora_moved") for r in results)
        print(
            f"gpu_memory summary: CPU smoke test {'passed' if ok else 'FAILED'} for {len(results)} model shapes "
            "(nothing measured)"
        )
        return 0 if ok else 1
    print(
        f"gpu_memory summary: {len(within)}/{len(results)} models within {TOLERANCE:.0%} of measured "
        f"max_memory_allocated (worst {worst:.0%}) on {device}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
