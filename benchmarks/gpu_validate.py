"""GPU validation driver: the QLoRA path, a 4-bit local judge, an induced OOM and the planner, within a deadline.

Built for a GPU machine lent for minutes: it runs checks small to large and writes every result the moment it
has it, so a run cut short still returns what it measured. Checks (``--checks``, in order):

- ``env``: versions (torch, CUDA, transformers, peft, accelerate, trl, bitsandbytes, datasets, pyarrow, pandas)
  and the GPU; always first.
- ``grpo:<preset>[@<completion length>]``: a random-weight checkpoint of the preset's shape (no download, see
  ``gpu_memory.py``), a few GRPO steps through the project's trainer at the users' settings (4 generations,
  QLoRA defaults: NF4 + LoRA r=16 + paged 8-bit AdamW + bf16, gradient checkpointing), the planner's torch peak
  against ``torch.cuda.max_memory_allocated``, step time and generated tokens/s. Random weights rarely emit
  EOS, so completions run to the limit: the speed rows are worst-case length.
- ``judge``: the same with a 4-bit local judge (a random ``qwen3-0.6b``) loaded beside the student.
- ``oom``: ``evaluator train`` with an absurd batch while this process holds all but ``--oom-free-gib`` of the
  GPU: it must exit 2 with the planner's checklist and no traceback. ``--cpu-smoke`` raises a simulated CUDA
  OOM from a reward instead (CPU cannot run out), which exercises the same handling and reporting.

On CUDA each check runs in a child process (its own peak memory; a hang or crash costs one row), killed when
the deadline comes; a trainer callback ends a run after the step when another would pass the deadline, so it
still saves its adapter and row. A check is skipped when less time is left than it needs (``MIN_SECONDS``, ``--min-seconds``).
Files written into ``--out-dir`` (at most five): ``results.jsonl`` (one row per check, appended as it ends),
``summary.txt`` (the table and a markdown table for ``benchmarks/README.md``, rewritten after each row),
``environment.json``, ``logs.tar.gz`` (each check's log and run files, rebuilt after each row), ``driver.log``.
The last line printed is the summary.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_memory as gm  # the sibling benchmark: checkpoints, bench pack, measurement
from gpu_results import Recorder, summary_line

DEFAULT_CHECKS = ("env", "grpo:qwen3-0.6b@512", "judge", "oom", "grpo:qwen3-8b@512", "grpo:atomicgpt-gemma2-9b@512")
MIN_SECONDS = {"env": 0, "grpo:qwen3-0.6b": 40, "judge": 50, "oom": 40, "grpo:qwen3-8b": 110, "grpo:atomicgpt-gemma2-9b": 120}
RESERVE_S = 15.0  # what a run needs after its last step (saving the adapter, measuring, cleaning up)
OOM_DOMAIN = "gpu-bench-oom"
VERSIONED = ("torch", "transformers", "peft", "accelerate", "trl", "bitsandbytes", "datasets", "pyarrow", "pandas",
             "numpy", "huggingface_hub", "tokenizers", "safetensors", "math-verify", "jsonschema", "evaluator")


class SimulatedOOMPack(gm.BenchPack):
    """A reward that raises a CUDA out-of-memory error: the smoke test's stand-in for a full GPU."""

    name = OOM_DOMAIN

    def reward_functions(self) -> dict[str, Any]:
        def token_id(*_: Any, **__: Any) -> list[float | None]:
            import torch

            raise torch.OutOfMemoryError("CUDA out of memory (simulated on CPU by gpu_validate --cpu-smoke)")

        return {"token_id": token_id}


def register_packs() -> None:
    from evaluator.domains.registry import register

    register(gm.BENCH_DOMAIN, "gpu_memory:BenchPack")
    register(OOM_DOMAIN, "gpu_validate:SimulatedOOMPack")


def check_key(spec: str) -> str:
    return spec.split("@")[0]


def min_seconds(spec: str, overrides: dict[str, float]) -> float:
    key = check_key(spec)
    return overrides.get(key, overrides.get(spec, MIN_SECONDS.get(key, 60.0)))


def env_check(args: argparse.Namespace) -> dict[str, Any]:
    """Versions and the device; importing bitsandbytes here loads its CUDA library (a missing one shows now)."""
    import importlib
    import importlib.metadata as md

    row: dict[str, Any] = {"python": sys.version.split()[0], "versions": {}, "imports": {}}
    for name in VERSIONED:
        try:
            row["versions"][name] = md.version(name)
        except md.PackageNotFoundError:
            row["versions"][name] = None
    for module in ("trl", "bitsandbytes", "datasets", "math_verify", "jsonschema", "evaluator.training.grpo"):
        try:
            importlib.import_module(module)
            row["imports"][module] = "ok"
        except Exception as exc:  # a missing or broken package is the finding, not a crash
            row["imports"][module] = f"{type(exc).__name__}: {exc}"
    import torch

    row["cuda_available"] = torch.cuda.is_available()
    row["torch_cuda"] = torch.version.cuda
    if row["cuda_available"]:
        row["device"] = torch.cuda.get_device_name(0)
        row["gpu_total_bytes"] = torch.cuda.mem_get_info()[1]
    else:
        row["device"] = "CPU (smoke test)" if args.cpu_smoke else "no CUDA device"
    row["status"] = "ok" if all(v == "ok" for v in row["imports"].values()) else "failed"
    return row


def checkpoint(name: str, args: argparse.Namespace, work: Path) -> Path:
    """The random checkpoint of ``name``'s shape, built once per run (small ones are kept for later checks)."""
    from evaluator.training.memory.architectures import PRESET_ARCHS

    folder = work / "ckpt" / name
    if not (folder / "config.json").exists():
        arch = gm.shrink(PRESET_ARCHS[name]) if args.cpu_smoke else PRESET_ARCHS[name]
        gm.build_checkpoint(arch, folder, "cpu" if args.cpu_smoke else "cuda")
    return folder


def stop_at_deadline(deadline_at: float) -> Any:
    """A trainer callback that ends training after a step when another step of the same length would pass the
    deadline (less what the run needs to save and report), so the run still saves its adapter and row."""
    from transformers import TrainerCallback

    class StopAtDeadline(TrainerCallback):
        def __init__(self) -> None:
            self.stopped, self.longest, self.began = False, 0.0, time.time()

        def on_step_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            self.began = time.time()

        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            now = time.time()
            self.longest = max(self.longest, now - self.began)
            if now + self.longest > deadline_at - RESERVE_S and not control.should_training_stop:
                self.stopped = control.should_training_stop = state.global_step < state.max_steps
            return control

    return StopAtDeadline()


def train_check(spec: str, args: argparse.Namespace, work: Path, deadline_at: float) -> dict[str, Any]:
    """``grpo:<preset>[@len]`` or ``judge``: train a few steps in this process, measured against the plan."""
    from evaluator.training.config import TrainConfig
    from evaluator.training.memory.plan import longest_prompt_tokens, plan_for_train_config

    judge = spec == "judge"
    name = "qwen3-0.6b" if judge else check_key(spec).split(":", 1)[1]
    length = int(spec.split("@")[1]) if "@" in spec else (256 if judge else args.completion_length)
    if args.cpu_smoke:
        length = min(length, 8)
    ckpt = checkpoint(name, args, work)
    out = work / "runs" / spec.replace(":", "-").replace("@", "-")
    cfg = TrainConfig(
        domain=gm.BENCH_DOMAIN, model=str(ckpt), data="synthetic", limit=64, quantize="4bit", max_steps=args.steps,
        per_device_train_batch_size=args.per_device_batch, num_generations=args.num_generations,
        max_completion_length=length, lora_r=args.lora_r, output_dir=str(out), save_steps=1000, logging_steps=1,
        max_seconds=args.max_train_seconds,
        judge={"kind": "local", "model": str(ckpt), "quantize": "4bit", "weight": 0.3, "prefill": True,
               "max_new_tokens": 16, "batch_size": 8} if judge else None,
    )
    device = "cpu" if args.cpu_smoke else "cuda"
    plan = plan_for_train_config(cfg, device=device, prompt_length=longest_prompt_tokens(cfg))
    row: dict[str, Any] = {
        "model": name, "completion_length": length, "prompt_length": plan.settings.prompt_length,
        "per_device_batch": cfg.per_device_train_batch_size, "num_generations": cfg.num_generations,
        "estimate_torch_bytes": plan.torch_allocated_bytes,
        "estimate_total_bytes": plan.total_bytes, "estimate_peak_phase": plan.peak_phase,
    }
    stop = stop_at_deadline(deadline_at)
    row.update(gm.measure_training(cfg, plan, cuda=not args.cpu_smoke, keep_logs=Path(args.logs) / out.name,
                                   callbacks=(stop,)))
    row["stopped_at_deadline"] = stop.stopped
    if judge and row.get("status") == "ok":
        means = [r.get("rewards/judge/mean") for r in gm.read_metrics(out)]
        row["judge_reward_finite"] = bool(means) and all(isinstance(m, (int, float)) for m in means)
    shutil.rmtree(out, ignore_errors=True)
    if name not in ("qwen3-0.6b",):
        shutil.rmtree(ckpt, ignore_errors=True)  # 16–18 GB on disk; the small one serves the judge and OOM checks
    return row


def invoke_cli(argv: list[str]) -> tuple[int, str, bool]:
    """``evaluator <argv>`` through the real entry point in this process: exit code, its output, traceback?"""
    from evaluator.app import cli

    buf, code, tb = io.StringIO(), 0, False
    old_argv = sys.argv
    sys.argv = ["evaluator", *argv]
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(buf):
        try:
            cli.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # what a user would see as a traceback
            code, tb = 1, True
            buf.write(traceback.format_exc())
        finally:
            sys.argv = old_argv
    return code, buf.getvalue(), tb or "Traceback (most recent call last)" in buf.getvalue()


def oom_check(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """An absurd batch with the GPU nearly full must end with the checklist, exit 2 and no traceback."""
    from evaluator.training.memory.plan import OOM_ADVICE

    ckpt = checkpoint("qwen3-0.6b", args, work)
    ballast = None
    domain, batch, length = (OOM_DOMAIN, 4, 8) if args.cpu_smoke else ("gsm8k", 256, 4096)
    if not args.cpu_smoke:
        import torch

        free = torch.cuda.mem_get_info()[0] - int(args.oom_free_gib * 2**30)
        ballast = torch.empty(max(free, 0), dtype=torch.uint8, device="cuda")
    argv = ["train", "--domain", domain, "--model", str(ckpt), "--data", "synthetic", "--limit", "256",
            "--max-steps", "1", "--per-device-batch", str(batch), "--num-generations", "4",
            "--max-completion-length", str(length), "--output-dir", str(work / "runs" / "oom")]
    t0 = time.perf_counter()
    code, text, tb = invoke_cli(argv)
    del ballast
    (Path(args.logs) / "oom.txt").write_text(text, encoding="utf-8")
    flat = " ".join(text.split())
    advice = " ".join(OOM_ADVICE.split()) in flat
    return {
        "status": "ok" if code == 2 and advice and not tb else "failed", "exit_code": code, "advice_shown": advice,
        "traceback": tb, "plan_warning_shown": "may stop with out-of-memory" in flat,
        "simulated": bool(args.cpu_smoke), "seconds": round(time.perf_counter() - t0, 1),
        "per_device_batch": batch, "completion_length": length, "output_tail": text.strip().splitlines()[-6:],
    }


def run_check(spec: str, args: argparse.Namespace, work: Path, deadline_at: float) -> dict[str, Any]:
    """One check in this process; any exception becomes a row (with the traceback in the logs)."""
    t0 = time.perf_counter()
    try:
        if spec == "env":
            row = env_check(args)
        elif spec == "oom":
            row = oom_check(args, work)
        elif spec == "judge" or spec.startswith("grpo:"):
            row = train_check(spec, args, work, deadline_at)
        else:
            row = {"status": "failed", "reason": f"unknown check {spec!r}"}
    except Exception as exc:
        (Path(args.logs) / f"{safe(spec)}.error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        row = {"status": "failed", "reason": f"{type(exc).__name__}: {str(exc)[:500]}"}
    return {"check": spec, **row, "check_seconds": round(time.perf_counter() - t0, 1)}


def safe(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "-" for c in spec)


_RUNNING: list[subprocess.Popen[bytes]] = []  # the child a SIGTERM to the driver must take down with it


def stop_children(signum: int, _frame: Any) -> None:
    """An outer ``timeout`` stops the driver: stop the running check's process group too, then exit."""
    for proc in _RUNNING:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit(128 + signum)


def run_child(cmd: list[str], timeout: float, log_path: Path, result_path: Path) -> dict[str, Any]:
    """Run ``cmd`` in its own process group; past ``timeout`` the whole group is stopped and the row says so."""
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _RUNNING[:] = [proc]
        try:
            code = proc.wait(timeout=max(timeout, 1.0))
        except subprocess.TimeoutExpired:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=wait)
                    break
            return {"status": "killed", "reason": f"still running at the deadline (after {timeout:.0f} s)"}
    if result_path.exists():
        return json.loads(result_path.read_text(encoding="utf-8"))
    tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-8:]
    return {"status": "crashed", "reason": f"exit {code} without a result (logs/{log_path.name})", "log_tail": tail}


def child_command(spec: str, args: argparse.Namespace, work: Path, deadline_at: float) -> list[str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", spec, "--work", str(work),
           "--logs", str(args.logs), "--deadline-at", repr(deadline_at)]
    for flag in ("steps", "per_device_batch", "num_generations", "lora_r", "completion_length", "oom_free_gib",
                 "max_train_seconds"):
        value = getattr(args, flag)
        if value is not None:
            cmd += [f"--{flag.replace('_', '-')}", str(value)]
    return [*cmd, "--cpu-smoke"] if args.cpu_smoke else cmd


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, help="where the result files go (on the device: $OUT)")
    parser.add_argument("--checks", nargs="+", default=list(DEFAULT_CHECKS))
    parser.add_argument("--deadline-s", type=float, default=240.0, help="seconds of work before a clean stop")
    parser.add_argument("--min-seconds", nargs="*", default=[], metavar="CHECK=S",
                        help="override the time a check needs to be started (e.g. grpo:qwen3-8b=90)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--completion-length", type=int, default=512, help="for grpo checks without @length")
    parser.add_argument("--per-device-batch", type=int, default=4)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--oom-free-gib", type=float, default=6.0, help="GPU memory left free for the OOM check")
    parser.add_argument("--max-train-seconds", type=float, help="cap each run's max_seconds (tests the clean stop)")
    parser.add_argument("--cpu-smoke", action="store_true", help="shrunken shapes on CPU, in one process")
    parser.add_argument("--isolate", action="store_true",
                        help="with --cpu-smoke: one child process per check, as on CUDA (checks the driver's own path)")
    parser.add_argument("--force", action="store_true", help="replace result files already in --out-dir")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--logs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--deadline-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.child and not args.out_dir:
        parser.error("--out-dir is required")
    return args


def in_process(args: argparse.Namespace) -> bool:
    return bool(args.cpu_smoke and not args.isolate)


def drive(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """Run the checks in order until the deadline; every row is recorded the moment it exists."""
    deadline_at = time.time() + args.deadline_s
    args.logs = work / "logs"
    args.logs.mkdir(parents=True, exist_ok=True)
    overrides = {k: float(v) for k, _, v in (item.partition("=") for item in args.min_seconds)}
    rec = Recorder(args.out_dir, args.logs, force=args.force)
    rec.log(f"checks {' '.join(args.checks)}; deadline {args.deadline_s:.0f} s; "
            f"{'in this process (CPU smoke)' if in_process(args) else 'one child process per check'}")
    stop_reason = None
    for spec in args.checks:
        left, need = deadline_at - time.time(), min_seconds(spec, overrides)
        if stop_reason or (spec != "env" and left < need):
            rec.add({"check": spec, "status": "skipped",
                     "reason": stop_reason or f"deadline: {left:.0f} s left, the check needs {need:.0f} s"})
            continue
        rec.log(f"start {spec} ({left:.0f} s left)")
        if in_process(args):
            row = run_check(spec, args, work, deadline_at)
        else:
            result = work / "results" / f"{safe(spec)}.json"
            cmd = child_command(spec, args, work, deadline_at)
            row = {"check": spec, **run_child(cmd, deadline_at - time.time() + 10, args.logs / f"{safe(spec)}.log", result)}
        rec.add(row)
        if spec == "env" and not args.cpu_smoke and not row.get("cuda_available"):
            stop_reason = "no CUDA device (see the env row)"
    rec.log(summary_line(rec.rows))
    return rec.rows


def child_main(args: argparse.Namespace) -> int:
    register_packs()
    row = run_check(args.child, args, args.work, args.deadline_at)
    result = args.work / "results" / f"{safe(args.child)}.json"
    result.parent.mkdir(parents=True, exist_ok=True)
    result.write_text(json.dumps(row, default=str), encoding="utf-8")
    print(json.dumps(row, default=str), flush=True)
    return 0


def work_root(cpu_smoke: bool) -> str | None:
    """``GPU_BENCH_DIR``, else ``/dev/shm`` when it can hold a 9B bf16 checkpoint twice over (RAM is faster than
    disk for the 16–18 GB each large check writes and reads back), else the system's temporary folder."""
    if os.environ.get("GPU_BENCH_DIR") or cpu_smoke:
        return os.environ.get("GPU_BENCH_DIR")
    try:
        free = shutil.disk_usage("/dev/shm").free
    except OSError:
        return None
    return "/dev/shm" if free >= 48 * 2**30 else None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        return child_main(args)
    if in_process(args):
        register_packs()
    else:
        signal.signal(signal.SIGTERM, stop_children)
    with tempfile.TemporaryDirectory(dir=work_root(args.cpu_smoke)) as tmp:
        work = Path(tmp)
        os.environ.setdefault("EVALUATOR_CACHE", str(work / "cache"))
        rows = drive(args, work)
    print(summary_line(rows))
    return 0 if all(r.get("status") in ("ok", "skipped") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
