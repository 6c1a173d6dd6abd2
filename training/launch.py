"""``evaluator train --num-processes N``: check once, then re-launch the same run in N processes.

GPUs go through ``accelerate launch`` with a shipped config file (DDP, FSDP, DeepSpeed ZeRO-2/3) or the
user's own; CPUs go through ``torch.distributed.run`` (torchrun) with the gloo backend, because
``accelerate launch --cpu --num_processes N`` starts a single process without an MPI hostfile. No
distributed code lives here: the launchers start the processes, the Trainer (accelerate) joins them.

Every child gets ``EVALUATOR_LAUNCHED=1`` so it trains instead of launching again, and reads the run's
resolved config from a temporary YAML file, so the children see exactly what the parent checked.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from evaluator.core.threads import share
from evaluator.models.loading import resolve_precision
from evaluator.training.config import TrainConfig, TrainingError
from evaluator.training.config.scale import launch_kind, resolve_launch_config
from evaluator.training.distributed import LAUNCHED_ENV, launched_child
from evaluator.training.memory.oom import warn_if_plan_exceeds
from evaluator.training.run_setup import check_model_available, prepare_run_dir
from evaluator.training.vllm_options import require_vllm

DEEPSPEED_HINT = "pip install 'evaluator[deepspeed]' (DeepSpeed is an optional extra)"


class LaunchError(TrainingError):
    """The multi-process run cannot be started, or one of its processes failed."""


def needs_launch(cfg: TrainConfig) -> bool:
    """A run asks for several processes and this is not already one of them (ours, or a launcher's)."""
    return cfg.num_processes > 1 and not launched_child() and int(os.environ.get("WORLD_SIZE", "1") or 1) == 1


def check_hardware(cfg: TrainConfig, cuda: bool, gpus: int) -> str:
    """Refuse what this machine cannot run; returns the launch kind (``ddp`` …)."""
    kind = launch_kind(resolve_launch_config(cfg.launch_config))
    if not cuda:
        if kind != "ddp":
            raise LaunchError(
                f"--launch-config {cfg.launch_config} ({kind}) shards the model across GPUs; on CPU only ddp "
                "(gloo data parallel) runs"
            )
        return kind
    if cfg.num_processes > gpus:
        raise LaunchError(f"--num-processes {cfg.num_processes} but this machine shows {gpus} GPU(s)")
    if kind.startswith("zero") and importlib.util.find_spec("deepspeed") is None:
        raise LaunchError(f"--launch-config {cfg.launch_config} needs DeepSpeed, which is not installed: {DEEPSPEED_HINT}")
    return kind


def child_args(config_file: Path) -> list[str]:
    """What every child runs: the same ``train`` command on the parent's resolved config."""
    return ["-m", "evaluator.app.cli", "train", "--config", str(config_file)]


def launch_command(cfg: TrainConfig, config_file: Path, *, cuda: bool, port: int | None = None) -> list[str]:
    """The command line that starts ``cfg.num_processes`` training processes."""
    n = str(cfg.num_processes)
    if not cuda:
        rdzv = ["--standalone"] if port is None else ["--master_addr", "127.0.0.1", "--master_port", str(port)]
        return [sys.executable, "-m", "torch.distributed.run", *rdzv, "--nnodes", "1", "--nproc_per_node", n,
                *child_args(config_file)]
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
           str(resolve_launch_config(cfg.launch_config)), "--num_processes", n]
    if port is not None:
        cmd += ["--main_process_port", str(port)]
    return [*cmd, *child_args(config_file)]  # accelerate launch and torchrun both take -m MODULE ARGS


def child_env(cfg: TrainConfig, *, cuda: bool) -> dict[str, str]:
    env = dict(os.environ)
    env[LAUNCHED_ENV] = "1"
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not cuda:  # share the cores instead of every process starting one thread per core
        env["OMP_NUM_THREADS"] = share(cfg.num_processes)
    return env


def child_config(cfg: TrainConfig) -> dict[str, Any]:
    """The children's config: the output folder was already checked and prepared by the parent."""
    doc = cfg.to_dict()
    doc["force"] = False
    return doc


def launch(cfg: TrainConfig, *, cuda: bool, port: int | None = None) -> int:
    """Run the children to completion; returns their exit code (0 = every process succeeded)."""
    with tempfile.TemporaryDirectory(prefix="evaluator-launch-") as tmp:
        config_file = Path(tmp) / "run_config.yaml"
        config_file.write_text(yaml.safe_dump(child_config(cfg), sort_keys=False, allow_unicode=True), "utf-8")
        cmd = launch_command(cfg, config_file, cuda=cuda, port=port)
        return subprocess.run(cmd, env=child_env(cfg, cuda=cuda), check=False).returncode


def train_launched(cfg: TrainConfig, *, console: Any = None) -> dict[str, Any]:
    """The parent's side: plan and check the output folder once, launch, then return rank 0's summary."""
    import torch  # heavy: imported when a run starts

    precision = resolve_precision(cfg.quantize)
    cuda = precision.device == "cuda"
    check_hardware(cfg, cuda, torch.cuda.device_count() if cuda else 0)
    require_vllm(cfg)
    check_model_available(cfg)  # also builds the tiny model once, so the children never race to build it
    out = prepare_run_dir(cfg)
    warn_if_plan_exceeds(cfg, precision, console)
    summary_path = out / "run_summary.json"
    before = summary_path.stat().st_mtime_ns if summary_path.exists() else None
    code = launch(cfg, cuda=cuda)
    if code != 0:
        raise LaunchError(f"the {cfg.num_processes}-process run failed (exit code {code}); see the messages above")
    if not summary_path.exists() or summary_path.stat().st_mtime_ns == before:
        raise LaunchError(f"the {cfg.num_processes}-process run ended without writing {summary_path}")
    return json.loads(summary_path.read_text(encoding="utf-8"))
