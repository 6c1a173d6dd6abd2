"""Know before launching whether a QLoRA GRPO run fits the GPU, and what to change when it does not.

The estimate itself is :func:`estimate` (module :mod:`estimate`). This module is what the trainer and
the ``evaluator plan`` command call: plans for a ``TrainConfig``, the users' checklist of fixes (lower the
per-device batch while raising gradient accumulation, lower the LoRA rank, shorten completions, then turn on
gradient checkpointing or 4-bit), the warning ``evaluator train`` prints, and the out-of-memory advice.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from evaluator.domains.registry import get_pack
from evaluator.models.chat_format import chat_format
from evaluator.models.loading import load_tokenizer
from evaluator.training.config import TrainConfig
from evaluator.training.memory.architectures import ArchSpec, arch_for
from evaluator.training.memory.estimate import MemoryPlan, estimate
from evaluator.training.memory.settings import (
    CUDA_CONTEXT_BYTES,
    DEFAULT_PROMPT_LENGTH,
    GIB,
    JudgeSettings,
    PlanError,
    PlanSettings,
    Row,
    gib,
    resolve,
)

__all__ = [
    "GIB",
    "OOM_ADVICE",
    "JudgeSettings",
    "MemoryPlan",
    "PlanError",
    "PlanSettings",
    "Row",
    "estimate",
    "gib",
    "plan_document",
    "plan_for_train_config",
    "required_grad_accum",
    "settings_for_train_config",
    "suggest_fixes",
    "warn_if_too_big",
]

OOM_ADVICE = (
    "To fit, change one thing at a time, in this order: "
    "(1) lower the per-device batch (--per-device-batch), "
    "(2) raise gradient accumulation (--grad-accum) so the effective batch stays the same, "
    "(3) lower the LoRA rank (--lora-r), "
    "(4) shorten completions (--max-completion-length). "
    "`evaluator plan` with the same settings estimates each change before you launch."
)


def _halvings(value: int, floor: int) -> list[int]:
    out, v = [], value
    while v // 2 >= floor:
        v //= 2
        out.append(v)
    return out


def _checklist(s: PlanSettings) -> list[tuple[str, list[tuple[str, PlanSettings]]]]:
    """Each checklist step with its candidate changes, least severe first."""
    effective = s.generation_batch
    batches = [
        b for b in range(s.per_device_train_batch_size - 1, 0, -1) if s.per_device_train_batch_size % b == 0 and effective % b == 0
    ]
    steps: list[tuple[str, list[tuple[str, PlanSettings]]]] = [
        (
            "batch",
            [
                (
                    f"per-device batch {s.per_device_train_batch_size} → {b}, gradient accumulation {s.gradient_accumulation_steps} → "
                    f"{effective // b} (same effective batch {effective})",
                    s.replace(per_device_train_batch_size=b, gradient_accumulation_steps=effective // b),
                )
                for b in batches
            ],
        ),
    ]
    if s.lora:
        steps.append(
            (
                "rank",
                [
                    (f"LoRA rank {s.lora_r} → {r}", s.replace(lora_r=r))
                    for r in _halvings(s.lora_r, 4)
                ],
            )
        )
    lengths = sorted(
        {max(64, int(s.max_completion_length * f) // 32 * 32) for f in (0.75, 0.5, 0.375, 0.25)}, reverse=True
    )
    steps.append(
        (
            "length",
            [
                (f"max completion length {s.max_completion_length} → {c}", s.replace(max_completion_length=c))
                for c in lengths
                if c < s.max_completion_length
            ],
        )
    )
    if not s.gradient_checkpointing:
        steps.append(
            ("checkpointing", [("turn on gradient checkpointing", s.replace(gradient_checkpointing=True))])
        )
    if s.quantize != "4bit" and s.lora:
        steps.append(
            ("4bit", [("load the base model in 4-bit (--quantize 4bit)", s.replace(quantize="4bit"))])
        )
    return steps


def suggest_fixes(
    arch: ArchSpec, settings: PlanSettings, gpu_bytes: int | float
) -> list[tuple[str, MemoryPlan]]:
    """The users' checklist applied in order until the run fits; each entry is cumulative with the ones before.

    A step takes its mildest change that fits; when none fits it takes its strongest one (if that helps at
    all) and the walk goes on. An empty list means the run already fits; if the last plan still does not
    fit, no checklist change is enough.
    """
    current = estimate(arch, settings)
    if current.fits(gpu_bytes):
        return []
    fixes: list[tuple[str, MemoryPlan]] = []
    for _step, candidates in _checklist(settings):
        tried: list[tuple[str, MemoryPlan]] = []
        for desc, candidate in candidates:
            merged = _merge(current.settings, candidate, settings)
            plan = estimate(arch, merged)
            tried.append((desc, plan))
            if plan.fits(gpu_bytes):
                fixes.append((desc, plan))
                return fixes
        if tried and tried[-1][1].total_bytes < current.total_bytes * 0.99:
            fixes.append(tried[-1])
            current = tried[-1][1]
    return fixes


def _merge(current: PlanSettings, candidate: PlanSettings, original: PlanSettings) -> PlanSettings:
    """Apply what ``candidate`` changed relative to ``original`` on top of the fixes already taken."""
    changes = {
        f.name: getattr(candidate, f.name)
        for f in dataclasses.fields(PlanSettings)
        if getattr(candidate, f.name) != getattr(original, f.name)
    }
    return current.replace(**changes)


PLAN_FIELDS = (
    "model", "quantize", "lora", "lora_r", "lora_target", "num_generations", "max_completion_length",
    "per_device_train_batch_size", "gradient_accumulation_steps", "gradient_checkpointing", "optim", "beta",
    "use_vllm", "vllm_mode", "vllm_gpu_memory_utilization",
)  # fmt: skip
"""The run-config fields that decide memory: what :func:`settings_for_train_config` reads (``evaluator plan``'s
flags)."""


def settings_for_train_config(
    cfg: Any, *, device: str = "cuda", prompt_length: int | None = None, gpu_total_bytes: int | None = None
) -> PlanSettings:
    """The run config as the planner reads it on ``device``, its hardware defaults resolved as the trainer's."""
    cuda = device == "cuda"
    judge = None
    jcfg = getattr(cfg, "judge", None) or None
    if isinstance(jcfg, dict) and str(jcfg.get("kind", "")).lower() == "local" and jcfg.get("model"):
        judge = JudgeSettings(
            model=str(jcfg["model"]),
            quantize=str(jcfg.get("quantize") or ("4bit" if cuda else "none")),
            batch_size=int(jcfg.get("batch_size") or 8),
            max_new_tokens=int(jcfg.get("max_new_tokens") or 256),
        )
    run = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(cfg, f.name)}
    run["lora_target"] = run.get("lora_target") or "all-linear"
    run["beta"] = float(run.get("beta") or 0.0)
    return resolve(
        PlanSettings(
            **run,
            device=device,
            prompt_length=prompt_length or DEFAULT_PROMPT_LENGTH,
            local_judge=judge,
            gpu_total_bytes=gpu_total_bytes,
        )
    )


def plan_for_train_config(
    cfg: Any, *, device: str = "cuda", prompt_length: int | None = None, gpu_total_bytes: int | None = None
) -> MemoryPlan:
    """The plan for a ``TrainConfig`` as ``evaluator train`` would run it on ``device``."""
    settings = settings_for_train_config(
        cfg, device=device, prompt_length=prompt_length, gpu_total_bytes=gpu_total_bytes
    )
    return estimate(arch_for(cfg.model), settings)


def resident_cuda_bytes() -> int:
    """What this process already holds on the GPU (torch's reserved pool plus the CUDA context), else 0."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return 0
    return int(torch.cuda.memory_reserved()) + CUDA_CONTEXT_BYTES


def warn_if_too_big(
    cfg: Any, free_bytes: int | float, *, resident_bytes: int | None = None, gpu_total_bytes: int | None = None
) -> str | None:
    """A warning when the estimated peak exceeds the GPU memory available (the trainer warns, never refuses).

    ``free_bytes`` is what ``torch.cuda.mem_get_info`` reports. Memory this process already holds (a model or
    judge loaded before the check) is part of the plan, so it is added back: ``resident_bytes``, by default
    torch's reserved pool plus the CUDA context when CUDA is already initialised.
    """
    resident = resident_cuda_bytes() if resident_bytes is None else resident_bytes
    available = free_bytes + resident
    plan = plan_for_train_config(cfg, gpu_total_bytes=gpu_total_bytes)
    if plan.fits(available):
        return None
    big = ", ".join(f"{r.name.lower()} {gib(r.bytes)} GiB" for r in plan.largest_rows(2))
    text = (
        f"estimated peak GPU memory {gib(plan.total_bytes)} GiB ({plan.peak_phase} phase; {big}) exceeds the "
        f"{gib(available)} GiB this GPU has for the run, so it may stop with out-of-memory."
    )
    fixes = suggest_fixes(plan.arch, plan.settings, available)
    if fixes and fixes[-1][1].fits(available):
        steps = "; then ".join(desc for desc, _ in fixes)
        text += f" Cheapest change that fits: {steps} (about {gib(fixes[-1][1].total_bytes)} GiB)."
    else:
        text += " No checklist change makes it fit; use a larger GPU or a smaller model."
    return text + " Run `evaluator plan` with your settings for the full table."


def required_grad_accum(per_device_batch: int, num_generations: int) -> int:
    """Smallest gradient accumulation for which batch × accumulation divides by ``num_generations``."""
    return num_generations // math.gcd(per_device_batch, num_generations)


def plan_document(
    plan: MemoryPlan, gpu_bytes: int | float | None = None, fixes: list[tuple[str, MemoryPlan]] | None = None
) -> dict[str, Any]:
    """The JSON document ``evaluator plan --json`` prints (schema: ``memory_plan.schema.json``)."""
    doc = plan.to_dict()
    if gpu_bytes is not None:
        doc["gpu_bytes"] = int(gpu_bytes)
        doc["fits"] = plan.fits(gpu_bytes)
        doc["fixes"] = [
            {
                "change": desc,
                "total_bytes": int(p.total_bytes),
                "total_gib": round(p.total_bytes / GIB, 3),
                "fits": p.fits(gpu_bytes),
                "settings": p.settings.document(),
            }
            for desc, p in (fixes or [])
        ]
    return doc


def longest_prompt_tokens(cfg: Any) -> int:
    """Longest prompt of the run's dataset in the model's own tokens, rendered exactly as training renders it
    (chat template, system folding and thinking switch from :mod:`evaluator.models.chat_format`).

    Loads the dataset and tokenizer, so it is for benchmarks and explicit checks, not the planner's default.
    """
    tok = load_tokenizer(cfg.model)
    pack = get_pack(cfg.domain)
    style = pack.check_style(cfg.style)
    fmt = chat_format(tok, style, pack)
    ds = pack.dataset(cfg.data, cfg.split, style=style, language=cfg.language, limit=cfg.limit, seed=cfg.seed)
    return max(len(tok(fmt.render(tok, row["prompt"]), add_special_tokens=False)["input_ids"]) for row in ds)
