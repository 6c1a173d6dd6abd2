"""One arm × seed (or the shared warm start) as a job: its resolved spec, its hash, and how a child runs it.

A job runs in its own process (``python -m evaluator.app.experiments.jobs JOB.json``): the normal trainer as
a library (``train`` for GRPO/RLOO, ``sft`` for SFT), then the evaluation harness on the experiment's
held-out items. It leaves ``job.json`` with its status, metrics and cost. The hash covers everything that
decides the result (config, algorithm, evaluation, the warm start's hash, the SFT time budget), so a
finished job with the same hash is reused and a changed one reruns alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluator.core.generation import GenerationSettings, ModelRef
from evaluator.core.outputs import atomic_write_json
from evaluator.evaluation.harness import evaluate
from evaluator.evaluation.inputs import Items, ReportFolder
from evaluator.evaluation.policy import grade_policy
from evaluator.training.config import TrainConfig, validate
from evaluator.training.grpo import train
from evaluator.training.mixing import pack_names
from evaluator.training.run_setup import starting_model
from evaluator.training.sft import sft

JOB_FILE = "job.json"
SPEC_FILE = "job_spec.json"
WARM = "_warm_start"
RUNNER_VERSION = 1
UNHASHED = ("output_dir", "force", "resume", "init_from", "report_to", "run_name")
"""Fields that place or label a run without changing what it learns."""


@dataclass
class Job:
    arm: str
    seed: int
    kind: str  # "warm" | "grpo" | "rloo" | "sft"
    config: dict[str, Any]
    eval: dict[str, Any]
    run_dir: str
    depends: list[str] = field(default_factory=list)  # job keys that must finish first
    budget_from: str | None = None  # SFT arms: the job whose training seconds are this one's budget
    budget_seconds: float | None = None
    warm_hash: str | None = None

    @property
    def key(self) -> str:
        return f"{self.arm}/seed-{self.seed}" if self.kind != "warm" else WARM

    def digest(self) -> str:
        """SHA-256 of what decides the result (not where it is written).

        Only values that differ from the config's defaults enter it, so a release that adds a config field
        (with a default that keeps the old behaviour) does not invalidate every finished job.
        """
        defaults = _defaults()
        cfg = {k: v for k, v in self.config.items() if k not in UNHASHED and (k not in defaults or v != defaults[k])}
        doc = {
            "version": RUNNER_VERSION,
            "kind": self.kind,
            "config": cfg,
            "eval": self.eval,
            "warm": self.warm_hash,
            "budget_seconds": self.budget_seconds,
        }
        text = json.dumps(doc, sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _defaults() -> dict[str, Any]:
    return TrainConfig().to_dict()


def read_job(run_dir: str | Path) -> dict[str, Any] | None:
    """A job's ``job.json`` (None when absent or unreadable: the job then runs again)."""
    path = Path(run_dir) / JOB_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def reusable(job: Job) -> dict[str, Any] | None:
    """The earlier result when it finished with the same hash."""
    done = read_job(job.run_dir)
    if done and done.get("status") == "ok" and done.get("hash") == job.digest():
        return done
    return None


# ---- in the child process ------------------------------------------------------------------------------


def _peak_memory_mib() -> float | None:
    """Peak memory of this process: CUDA's allocator peak on a GPU, else the resident-set high-water mark."""
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return round(torch.cuda.max_memory_allocated() / 2**20, 1)
    except Exception:  # torch missing or broken: fall back to the process figure
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux reports KiB


def _eval_target(cfg: Any) -> tuple[str, str | None]:
    """(model, adapter) to evaluate a finished run: its adapter on its starting model, or its full weights."""
    final = Path(cfg.output_dir) / "final"
    if not cfg.lora:
        return str(final), None
    base, _, _, _ = starting_model(cfg)
    return base, str(final)


def run_job(spec_path: Path) -> int:
    """Train, evaluate and record one job; returns the exit status (0 ok, 1 failed)."""
    doc = json.loads(spec_path.read_text(encoding="utf-8"))
    job = Job(**doc["job"])
    out = Path(job.run_dir)
    t0 = time.perf_counter()
    record: dict[str, Any] = {"hash": doc["hash"], "arm": job.arm, "seed": job.seed, "kind": job.kind}
    try:
        record.update(_train_and_eval(job, out))
        record["status"] = "ok"
    except BaseException as exc:  # a crashed arm is reported; the experiment goes on
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        record["traceback"] = traceback.format_exc()[-4000:]
    record["wall_seconds"] = round(time.perf_counter() - t0, 3)
    record.setdefault("cost", {})["peak_memory_mib"] = _peak_memory_mib()
    atomic_write_json(out / JOB_FILE, record)
    return 0 if record["status"] == "ok" else 1


def _train_and_eval(job: Job, out: Path) -> dict[str, Any]:
    cfg = TrainConfig(**job.config)
    validate(cfg)
    t_train = time.perf_counter()
    if job.kind in ("warm", "sft"):
        summary = sft(cfg, progress=False)
    else:
        summary = train(cfg, progress=False, grade_policy=grade_policy)
    train_wall = time.perf_counter() - t_train
    model, adapter = _eval_target(cfg)
    t_eval = time.perf_counter()
    ev = job.eval
    packs = pack_names(cfg.domain)
    metrics: dict[str, Any] = {}
    generation = GenerationSettings(
        max_new_tokens=ev.get("max_new_tokens", cfg.max_completion_length), batch_size=ev.get("batch_size", 32), seed=0
    )
    for pack in packs:  # a mixed run is evaluated on each pack's held-out items, into eval/<pack>/
        mixed = len(packs) > 1
        items = Items(
            data=None if mixed else ev.get("data", cfg.data), split=ev["split"], limit=ev.get("limit"),
            style=None if mixed else cfg.style, language=None if mixed else cfg.language,
        )
        report = evaluate(
            pack, ModelRef(model, adapter=adapter), items, generation,
            out=ReportFolder(out / "eval" / pack if mixed else out / "eval", force=True),
        )
        prefix = f"{pack}/" if mixed else ""
        metrics.update({prefix + name: m["value"] for name, m in (report.get("metrics") or {}).items()})
    eval_wall = time.perf_counter() - t_eval
    return {
        "run_dir": str(out),
        "metrics": metrics,
        "cost": cost_of(summary, train_wall, eval_wall),
        "algorithm": summary.get("algorithm"),
        "dynamic_sampling": summary.get("dynamic_sampling"),
        "held_out": summary.get("held_out"),
        "stopped_for_time": summary.get("stopped_for_time"),
        "health": summary.get("health"),
    }


def cost_of(summary: dict[str, Any], train_wall: float, eval_wall: float) -> dict[str, Any]:
    """The cost columns: training time and steps, and what a judge cost (calls, tokens, bytes that left)."""
    judge = summary.get("judge") or {}
    steps = int(summary.get("global_step") or 0)
    seconds = float(summary.get("seconds") or 0.0)
    return {
        "seconds": round(seconds, 3),
        "steps": steps,
        "seconds_per_step": round(seconds / steps, 4) if steps else None,
        "peak_memory_mib": None,  # filled in at the end of the job (the whole process's peak)
        "judge_calls": int(judge.get("calls", 0)),
        "judge_tokens": int(judge.get("tokens", 0)),
        "judge_bytes_sent": int(judge.get("bytes_sent", 0)),
        "failures": int(judge.get("failures", 0)),
        "train_wall_seconds": round(train_wall, 3),
        "eval_seconds": round(eval_wall, 3),
    }


def write_spec(job: Job) -> Path:
    """The child's instructions, inside its run folder."""
    path = Path(job.run_dir) / SPEC_FILE
    atomic_write_json(path, {"job": asdict(job), "hash": job.digest()})
    return path


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    sys.exit(run_job(Path(sys.argv[1])))
