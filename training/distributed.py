"""Rank helpers for runs started by ``evaluator train --num-processes N``: who writes files, which device.

The launcher (accelerate or torchrun) sets ``RANK`` / ``LOCAL_RANK`` / ``WORLD_SIZE``; the Trainer (through
accelerate) sets up the process group itself. These helpers only read that state, so a one-process run
behaves exactly as before: rank 0 of a world of 1.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from evaluator.training.run_setup import save_model_atomically

LAUNCHED_ENV = "EVALUATOR_LAUNCHED"
"""Set by the launcher in every child process: the child trains instead of launching again."""


def launched_child() -> bool:
    """True inside a process started by ``evaluator train --num-processes N`` (never re-launch from here)."""
    return os.environ.get(LAUNCHED_ENV) == "1"


def _dist() -> Any:
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - torch is a dependency
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def world_size() -> int:
    dist = _dist()
    if dist is not None:
        return int(dist.get_world_size())
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def rank() -> int:
    dist = _dist()
    if dist is not None:
        return int(dist.get_rank())
    return int(os.environ.get("RANK", "0") or 0)


def is_main_process() -> bool:
    """Only rank 0 writes run files: metrics, completions, the judge log, adapters, the summary."""
    return rank() == 0


def barrier() -> None:
    dist = _dist()
    if dist is not None:
        dist.barrier()


def shutdown() -> None:
    """Leave the process group cleanly: every rank waits for the others, then the group is destroyed. Exiting
    with a live gloo group can abort a rank at interpreter exit ("terminate called without an active
    exception", SIGABRT), which torchrun reports as a failed run although the training finished."""
    dist = _dist()
    if dist is not None:
        dist.barrier()
        dist.destroy_process_group()


def any_rank(flag: bool) -> bool:
    """True on every rank when ``flag`` is true on any rank (a stop decision all ranks must share)."""
    dist = _dist()
    if dist is None:
        return flag
    import torch

    t = torch.tensor([1 if flag else 0], dtype=torch.int64)
    if dist.get_backend() == "nccl":
        t = t.cuda()
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


def gather(value: Any) -> list[Any]:
    """``value`` from every rank, in rank order (a list of one outside a distributed run)."""
    dist = _dist()
    if dist is None:
        return [value]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def parameter_digest(model: Any) -> str:
    """SHA-256 over the trainable parameters (names and values): equal digests mean ranks are in sync."""
    h = hashlib.sha256()
    for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
        if not p.requires_grad:
            continue
        h.update(name.removeprefix("module.").encode())
        h.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def save_final(trainer: Any, tokenizer: Any, target: Path) -> None:
    """Save the final adapter/model. One process: atomic save. Several: the Trainer gathers, rank 0 swaps in.

    ``trainer.save_model`` knows how to gather FSDP / ZeRO-3 shards and writes on the main process only.
    """
    if world_size() == 1:
        save_model_atomically(trainer.model, tokenizer, target)
        return
    tmp = target.with_name(f".{target.name}.tmp")
    if is_main_process() and tmp.exists():
        shutil.rmtree(tmp)
    barrier()
    trainer.save_model(str(tmp))
    barrier()
    if is_main_process():
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        old = target.with_name(f".{target.name}.old")
        if target.exists():
            target.rename(old)
        tmp.rename(target)
        if old.exists():
            shutil.rmtree(old)
    barrier()


def scale_summary(model: Any) -> dict[str, Any]:
    """What ``run_summary.json`` records about the processes: world size and, with several, whether they agree."""
    size = world_size()
    out: dict[str, Any] = {"world_size": size}
    if size > 1:
        digests = gather(parameter_digest(model))
        out["rank_parameter_digests"] = digests
        out["ranks_in_sync"] = len(set(digests)) == 1
    return out
