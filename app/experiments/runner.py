"""Run an experiment: plan the jobs, reuse the finished ones, run the rest in up to N processes, collect.

The warm start runs first (every arm starts from it); SFT-only arms wait for the baseline of their seed,
whose training seconds are their budget. A job that crashes is recorded as failed and the others go on;
a job that depends on a failed one fails with that reason instead of running.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.app.experiments.jobs import JOB_FILE, WARM, Job, read_job, reusable, write_spec
from evaluator.app.experiments.report import render_markdown
from evaluator.app.experiments.results import RESULTS_NAME, build_results
from evaluator.app.experiments.spec import ExperimentSpec, arm_fields, build_config
from evaluator.core.outputs import atomic_write_json, atomic_write_text
from evaluator.core.threads import share

SFT_OPEN_STEPS = 1_000_000
"""max_steps of a time-budgeted SFT arm: the budget, not the step count, ends it."""


def plan(spec: ExperimentSpec, out: Path) -> list[Job]:
    """Every job of the experiment, in an order that respects dependencies (budgets are filled in later)."""
    jobs: list[Job] = []
    warm_dir = out / "runs" / WARM
    warm_job: Job | None = None
    base_cfg = build_config(spec.base, output_dir=str(out), seed=spec.seeds[0])
    ev = {"max_new_tokens": base_cfg.max_completion_length, "data": base_cfg.data, **spec.eval}  # one for all
    if spec.warm_start is not None:
        values = {**spec.base, **spec.warm_start}
        seed = int(spec.warm_start.get("seed", spec.seeds[0]))
        cfg = build_config({k: v for k, v in values.items() if k != "seed"}, output_dir=str(warm_dir), seed=seed, force=True)
        warm_job = Job(WARM, seed, "warm", cfg.to_dict(), _eval_of(ev), str(warm_dir))
        jobs.append(warm_job)
    warm_hash = warm_job.digest() if warm_job else None
    for seed in spec.seeds:
        for arm in sorted(spec.arms, key=lambda a: a.algorithm == "sft"):  # budget sources first
            run_dir = out / "runs" / arm.name / f"seed-{seed}"
            values = arm_fields(spec, arm)
            runner: dict[str, Any] = {"output_dir": str(run_dir), "seed": seed, "force": True}
            if warm_job is not None:
                runner["init_from"] = str(warm_dir)
            kind = arm.algorithm
            budget_from = None
            if kind == "sft" and "max_seconds" not in arm.overrides and "max_steps" not in arm.overrides:
                budget_from = f"{spec.baseline}/seed-{seed}"
                runner["max_steps"] = SFT_OPEN_STEPS
            cfg = build_config(values, **runner)
            depends = ([WARM] if warm_job else []) + ([budget_from] if budget_from else [])
            jobs.append(
                Job(arm.name, seed, kind, cfg.to_dict(), _eval_of(ev), str(run_dir), depends, budget_from,
                    warm_hash=warm_hash)
            )
    return jobs


def _eval_of(ev: dict[str, Any]) -> dict[str, Any]:
    """The evaluation every job shares (the base's data and completion length unless the spec's eval says)."""
    return {k: v for k, v in ev.items() if v is not None}


def status_of(job: Job) -> str:
    """reuse (same hash, finished), changed (ran before with another spec or failed) or new."""
    if job.budget_from is not None and job.budget_seconds is None:
        return "waits"  # its hash needs the baseline's seconds
    if reusable(job) is not None:
        return "reuse"
    return "changed" if read_job(job.run_dir) is not None else "new"


def run_experiment(
    spec: ExperimentSpec, out: Path, *, jobs: int = 1, log: Callable[[str], None] = print
) -> dict[str, dict[str, Any]]:
    """Run (or reuse) every job; returns job key → its ``job.json`` record (plus ``reused``)."""
    todo = plan(spec, out)
    done: dict[str, dict[str, Any]] = {}
    running: dict[str, tuple[subprocess.Popen[bytes], Job, float, Any]] = {}
    pending = list(todo)
    slots = max(1, jobs)
    while pending or running:
        for job in list(pending):
            if len(running) >= slots:
                break
            blocked = [d for d in job.depends if d not in done]
            if blocked:
                continue
            pending.remove(job)
            failed = [d for d in job.depends if done[d].get("status") != "ok"]
            if failed:
                done[job.key] = _failed(job, f"not run: {', '.join(failed)} failed")
                log(f"[red]skipped[/] {job.key}: {', '.join(failed)} failed")
                continue
            if job.budget_from:
                job.budget_seconds = float(done[job.budget_from]["cost"]["seconds"])
                job.config["max_seconds"] = max(1.0, job.budget_seconds)
            earlier = reusable(job)
            if earlier is not None:
                done[job.key] = {**earlier, "reused": True}
                log(f"reused {job.key} ({job.digest()[:10]})")
                continue
            running[job.key] = _start(job, len(running), slots, out)
            log(f"started {job.key} ({job.kind}, {job.digest()[:10]})")
        finished = _reap(running, done, log)
        if not finished and running:
            time.sleep(0.2)
    return done


def _start(job: Job, slot: int, slots: int, out: Path) -> tuple[subprocess.Popen[bytes], Job, float, Any]:
    """A fresh run folder (the runner owns it) and a child process with its share of the CPU threads."""
    run_dir = Path(job.run_dir)
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    spec_path = write_spec(job)
    env = dict(os.environ)
    if slots > 1:
        env["OMP_NUM_THREADS"] = share(slots)  # the command's thread budget split between the jobs
        gpus = env.get("EVALUATOR_EXPERIMENT_GPUS")  # e.g. "0,1": one job per GPU in turn
        if gpus:
            ids = gpus.split(",")
            env["CUDA_VISIBLE_DEVICES"] = ids[slot % len(ids)]
    log_file = open(run_dir / "job.log", "wb")  # noqa: SIM115 - closed when the child is reaped
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaluator.app.experiments.jobs", str(spec_path)],
        stdout=log_file, stderr=subprocess.STDOUT, env=env,
    )
    return proc, job, time.perf_counter(), log_file


def _reap(running: dict[str, Any], done: dict[str, dict[str, Any]], log: Callable[[str], None]) -> bool:
    finished = False
    for key, (proc, job, t0, log_file) in list(running.items()):
        if proc.poll() is None:
            continue
        log_file.close()
        finished = True
        del running[key]
        record = read_job(job.run_dir)
        if record is None or record.get("hash") != job.digest():  # killed before it could write its record
            record = _failed(job, f"the job process ended with status {proc.returncode} and left no {JOB_FILE}")
        record["process_seconds"] = round(time.perf_counter() - t0, 3)
        done[key] = record
        if record.get("status") == "ok":
            log(f"[green]finished[/] {key} in {record['process_seconds']:.1f} s")
        else:
            log(f"[red]failed[/] {key}: {record.get('error')} (log: {Path(job.run_dir) / 'job.log'})")
    return finished


def _failed(job: Job, error: str) -> dict[str, Any]:
    return {"hash": job.digest(), "arm": job.arm, "seed": job.seed, "kind": job.kind, "status": "failed",
            "error": error, "run_dir": job.run_dir, "cost": {}}


def finish(spec: ExperimentSpec, out: Path, records: dict[str, dict[str, Any]], spec_text: str) -> dict[str, Any]:
    """Write ``results.json`` (validated) and ``results.md`` from the job records."""
    results = build_results(spec, records, spec_text)
    atomic_write_json(out / RESULTS_NAME, results)
    atomic_write_text(out / "results.md", render_markdown(results))
    return results


def collect(spec: ExperimentSpec, out: Path) -> dict[str, dict[str, Any]]:
    """The records on disk for every planned job (``experiment report`` runs nothing).

    Only a record whose hash is the plan's counts as the job: a folder that still holds the result of an
    earlier spec (a run interrupted before it reached that job) is reported as ``stale``, an absent or
    unreadable record as ``missing`` — neither is ever shown as the arm.
    """
    records: dict[str, dict[str, Any]] = {}
    for job in plan(spec, out):
        if job.budget_from:  # an SFT arm's hash holds its budget: the baseline's measured seconds
            source = records.get(job.budget_from) or {}
            seconds = (source.get("cost") or {}).get("seconds") if source.get("status") == "ok" else None
            if seconds is None:
                records[job.key] = _unusable(job, "missing", f"its budget source {job.budget_from} has no result")
                continue
            job.budget_seconds = float(seconds)
            job.config["max_seconds"] = max(1.0, job.budget_seconds)
        rec = read_job(job.run_dir)
        if rec is None:
            records[job.key] = _unusable(job, "missing", f"no readable {JOB_FILE}: not run under this spec")
        elif rec.get("hash") != job.digest():
            records[job.key] = _unusable(
                job, "stale",
                f"{JOB_FILE} holds the result of another spec (hash {str(rec.get('hash'))[:10]}, this spec "
                f"{job.digest()[:10]}); run `experiment run` again",
            )
        else:
            records[job.key] = rec
    return records


def _unusable(job: Job, status: str, error: str) -> dict[str, Any]:
    """The record of a job with no current result (``stale`` or ``missing``): reported, never averaged."""
    return {**_failed(job, error), "status": status}
