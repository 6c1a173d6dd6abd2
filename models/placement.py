"""Device placement for a model being loaded: this process's own GPU, or none under parameter sharding.

Read from what the launcher exports (``LOCAL_RANK``, accelerate's FSDP/DeepSpeed variables), so loading needs
nothing from the training floor.
"""

from __future__ import annotations

import os


def local_rank() -> int:
    """This process's GPU index on its machine (0 for a one-process run)."""
    return int(os.environ.get("LOCAL_RANK", "0") or 0)


def sharded_launch() -> str | None:
    """``"fsdp"`` or ``"zero3"`` when accelerate launched this process with parameter sharding, else None.

    Read from the variables ``accelerate launch`` itself exports, so a hand-written config file counts too.
    """
    if os.environ.get("ACCELERATE_USE_FSDP", "").lower() in ("1", "true"):
        return "fsdp"
    if (
        os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() in ("1", "true")
        and os.environ.get("ACCELERATE_DEEPSPEED_ZERO_STAGE") == "3"
    ):
        return "zero3"
    return None


def cuda_device_map() -> dict[str, int] | None:
    """Where a CUDA student goes: this process's own GPU; None under FSDP/ZeRO-3 (the engine places shards)."""
    if sharded_launch():
        return None
    return {"": local_rank()}
