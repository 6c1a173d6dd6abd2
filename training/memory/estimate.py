"""The peak-memory estimate of a GRPO run: settings in, a table of what holds memory in which phase out.

A GRPO step passes through phases that do not hold memory at the same time: generation (KV cache for the
whole generation batch), judging (a local judge model's cache) and the policy update (activations, the fused
LM head, gradients). Weights, adapter and optimizer state persist through all of them. The estimated peak is
the largest phase plus what CUDA itself takes. The byte formulas live in :mod:`memory_costs`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

from evaluator.training.memory import costs as mc
from evaluator.training.memory.architectures import ArchSpec, arch_for
from evaluator.training.memory.vllm import vllm_notes, vllm_rows

GIB = 1024**3
CUDA_CONTEXT_BYTES = int(0.5 * GIB)
ALLOCATOR_SLACK = 0.10
DEFAULT_PROMPT_LENGTH = 256
JUDGE_PROMPT_EXTRA = 384
"""Tokens a judge prompt adds around the question and completion (instructions, rubric, scale)."""


class PlanError(ValueError):
    """The settings describe a run the trainer would refuse."""


@dataclass(frozen=True)
class JudgeSettings:
    """A judge model loaded on the same GPU as the student (the ``local`` judge kind)."""

    model: str
    quantize: str = "4bit"
    batch_size: int = 8
    max_new_tokens: int = 256


@dataclass(frozen=True)
class PlanSettings:
    """The run settings that decide memory. Defaults match ``evaluator train`` on a CUDA GPU."""

    per_device_batch: int = 4
    grad_accum: int = 1
    num_generations: int = 4
    prompt_length: int = DEFAULT_PROMPT_LENGTH
    completion_length: int = 256
    lora: bool = True
    lora_rank: int = 16
    lora_target: str = "all-linear"
    quantize: str = "4bit"
    gradient_checkpointing: bool = True
    optim: str = "paged_adamw_8bit"
    device: str = "cuda"
    compute_dtype: str = "bfloat16"
    beta: float = 0.0
    judge: JudgeSettings | None = None
    vllm_gpu_memory_utilization: float = 0.0
    """vLLM colocate mode's share of the GPU (0 = no vLLM on the training GPU)."""
    gpu_total_bytes: int | None = None
    """The card's total memory, needed to size the vLLM share."""

    @property
    def compute_bytes(self) -> int:
        return 4 if self.compute_dtype == "float32" else 2

    @property
    def generation_batch(self) -> int:
        return self.per_device_batch * self.grad_accum

    def replace(self, **changes: Any) -> PlanSettings:
        return dataclasses.replace(self, **changes)

    def problems(self) -> list[str]:
        out = []
        if self.quantize not in ("4bit", "none"):
            out.append(f"quantize must be 4bit or none, not {self.quantize!r}")
        if self.quantize == "4bit" and not self.lora:
            out.append("4-bit weights cannot be trained directly: keep LoRA on with 4-bit")
        for name in (
            "per_device_batch",
            "grad_accum",
            "num_generations",
            "prompt_length",
            "completion_length",
        ):
            if getattr(self, name) < 1:
                out.append(f"{name} must be at least 1")
        if self.lora and self.lora_rank < 1:
            out.append("lora_rank must be at least 1")
        if self.num_generations >= 1 and self.generation_batch % self.num_generations:
            out.append(
                f"per-device batch × gradient accumulation ({self.per_device_batch}×{self.grad_accum}) must be "
                f"divisible by num_generations ({self.num_generations})"
            )
        return out


class Row(NamedTuple):
    """One line of the plan: what holds memory, how much, why, and in which phase."""

    name: str
    bytes: int
    note: str
    phase: str
    torch_allocated: bool = True
    """False for memory outside torch's allocator statistics (CUDA context, paged optimizer state)."""


PHASES = ("persistent", "load", "generation", "judging", "training")


@dataclass(frozen=True)
class MemoryPlan:
    """The estimate: rows by phase, the phase peaks, and the total the GPU must hold."""

    model: str
    arch: ArchSpec
    settings: PlanSettings
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()

    def _phase_total(self, phase: str, torch_only: bool = False) -> int:
        return sum(
            r.bytes
            for r in self.rows
            if r.phase in ("persistent", phase) and (r.torch_allocated or not torch_only)
        )

    @property
    def phase_totals(self) -> dict[str, int]:
        """Device memory during each phase (persistent rows included), CUDA overhead excluded."""
        return {p: self._phase_total(p) for p in PHASES[1:] if any(r.phase == p for r in self.rows)}

    @property
    def peak_phase(self) -> str:
        totals = self.phase_totals
        return max(totals, key=lambda p: totals[p]) if totals else "persistent"

    @property
    def overhead_bytes(self) -> int:
        return sum(r.bytes for r in self.rows if r.phase == "overhead")

    @property
    def total_bytes(self) -> int:
        """Estimated peak the GPU must hold, CUDA context and allocator slack included."""
        return self._phase_total(self.peak_phase) + self.overhead_bytes

    @property
    def torch_allocated_bytes(self) -> int:
        """The peak ``torch.cuda.max_memory_allocated`` should report (no context, slack or paged state)."""
        return max(self._phase_total(p, torch_only=True) for p in [*self.phase_totals, "persistent"])

    def fits(self, gpu_bytes: int | float) -> bool:
        return self.total_bytes <= gpu_bytes

    def largest_rows(self, n: int = 3) -> list[Row]:
        return sorted(self.rows, key=lambda r: -r.bytes)[:n]

    def to_dict(self) -> dict[str, Any]:
        settings = dataclasses.asdict(self.settings)
        return {
            "model": self.model,
            "architecture": self.arch.to_dict(),
            "settings": settings,
            "rows": [
                {
                    "name": r.name,
                    "bytes": int(r.bytes),
                    "gib": round(r.bytes / GIB, 3),
                    "note": r.note,
                    "phase": r.phase,
                    "torch_allocated": r.torch_allocated,
                }
                for r in self.rows
            ],
            "phases": {p: int(b) for p, b in self.phase_totals.items()},
            "peak_phase": self.peak_phase,
            "total_bytes": int(self.total_bytes),
            "total_gib": round(self.total_bytes / GIB, 3),
            "torch_allocated_bytes": int(self.torch_allocated_bytes),
            "notes": list(self.notes),
        }


def gib(n: int | float) -> str:
    return f"{n / GIB:.2f}"


def _dtype_word(nbytes: int) -> str:
    return {2: "bf16", 4: "float32"}.get(nbytes, f"{nbytes}-byte")


def estimate(arch: ArchSpec, settings: PlanSettings) -> MemoryPlan:
    """Estimate the peak device memory of a GRPO run of ``arch`` with ``settings``."""
    problems = settings.problems()
    if problems:
        raise PlanError("; ".join(problems))
    s = settings
    cuda = s.device == "cuda"
    q4 = s.quantize == "4bit"
    reg = mc.regime(lora=s.lora, quantize_4bit=q4, compute_bytes=s.compute_bytes)
    hid = mc.hidden_bytes(reg)
    counts = arch.param_counts()
    rows: list[Row] = []
    notes: list[str] = []

    # persistent: weights, trainable parameters, optimizer state, judge
    linear_b, other_b = mc.weight_bytes(counts, quantize_4bit=q4, regime_name=reg)
    other_dtype = _dtype_word(4 if reg in ("qlora", "lora32", "full32") else 2)
    if q4:
        rows.append(
            Row(
                "Base weights, 4-bit NF4",
                linear_b,
                f"{counts.linear / 1e9:.2f} B linear weights × {mc.NF4_BYTES_DOUBLE_QUANT:.3f} B",
                "persistent",
            )
        )
        rows.append(
            Row(
                f"Base weights, not quantised ({other_dtype})",
                other_b,
                f"{counts.not_quantized / 1e9:.2f} B params: embeddings, norms, biases"
                + (", MoE experts" if arch.is_moe else ""),
                "persistent",
            )
        )
    else:
        rows.append(
            Row(
                f"Base weights ({other_dtype})",
                linear_b + other_b,
                f"{counts.total / 1e9:.2f} B params",
                "persistent",
            )
        )
    if s.lora:
        sizes = mc.lora_tensors(arch, s.lora_rank, s.lora_target)
        train_bytes = 2 if q4 else 4
        rows.append(
            Row(
                "LoRA parameters",
                sum(sizes) * train_bytes,
                f"{sum(sizes) / 1e6:.1f} M params (r={s.lora_rank}, {s.lora_target}), "
                f"{_dtype_word(train_bytes)}",
                "persistent",
            )
        )
    else:
        sizes = [counts.total]
        train_bytes = s.compute_bytes
    paged = mc.optimizer_is_paged(s.optim)
    rows.append(
        Row(
            "Optimizer states",
            mc.optimizer_bytes(sizes, s.optim, train_bytes),
            s.optim + (" (CUDA unified memory)" if paged else ""),
            "persistent",
            not paged,
        )
    )
    if s.lora and s.beta > 0:
        rows.append(
            Row(
                "Reference adapter (beta > 0)",
                sum(sizes) * train_bytes,
                "TRL keeps a frozen copy of the adapter",
                "persistent",
            )
        )
    if s.judge is not None:
        _judge_rows(rows, s, cuda)
    rows.extend(vllm_rows(s))

    # load: the one-at-a-time casts while loading and preparing the model
    if q4:
        load = max(counts.largest_other * 2, counts.largest_linear * 2)
        rows.append(
            Row("Loading and float32 casting", load, "largest tensor held twice while converted", "load")
        )

    # generation: KV cache for the whole generation batch, prompts prefilled at once
    seq = s.prompt_length + s.completion_length
    gen = s.generation_batch
    rows.append(
        Row(
            "Generation KV cache",
            mc.kv_cache_bytes(arch, gen, seq, hid),
            f"{gen} sequences × {seq} tokens, {_dtype_word(hid)}",
            "generation",
        )
    )
    dequant = counts.largest_linear * 2 if q4 else 0
    gen_work = mc.prefill_bytes(arch, gen, s.prompt_length, hid) + mc.sampling_bytes(arch, gen) + dequant
    if s.beta > 0:
        gen_work = max(gen_work, mc.prefill_bytes(arch, s.per_device_batch, seq, hid))
    rows.append(Row("Generation working memory", gen_work, "prompt prefill, sampling logits", "generation"))

    # training: one micro-batch forward + backward
    tokens = s.per_device_batch * seq
    completion_tokens = s.per_device_batch * s.completion_length
    layer = mc.layer_activation_bytes(arch, reg, tokens, seq)
    full_acts = arch.num_hidden_layers * layer
    ckpt_acts = arch.num_hidden_layers * tokens * arch.hidden_size * hid + layer
    base = mc.embedding_and_norm_bytes(arch, tokens, hid)
    if s.gradient_checkpointing:
        rows.append(
            Row(
                "Activations (gradient checkpointing)",
                ckpt_acts + base,
                f"{s.per_device_batch} × {seq} tokens; without checkpointing {gib(full_acts + base)} GiB",
                "training",
            )
        )
    else:
        rows.append(
            Row(
                "Activations (no checkpointing)",
                full_acts + base,
                f"{s.per_device_batch} × {seq} tokens; with checkpointing {gib(ckpt_acts + base)} GiB",
                "training",
            )
        )
    lm_bytes = 4 if reg in ("qlora", "lora32", "full32") else 2
    # with Triton (CUDA) only completion tokens are scored; the torch fallback scores every position
    scored = completion_tokens if cuda else s.per_device_batch * (seq - 1)
    head = mc.fused_head_bytes(
        arch, scored_tokens=scored, hidden=hid, lm_bytes=lm_bytes, compute_bytes=s.compute_bytes, cuda=cuda
    )
    rows.append(
        Row(
            "Logits (fused LM head)",
            head,
            f"vocab {arch.vocab_size} × {completion_tokens} completion tokens scored in tiles; "
            f"full float32 logits would be {gib(mc.full_logits_bytes(arch, completion_tokens))} GiB",
            "training",
        )
    )
    rows.append(Row("Gradients", sum(sizes) * train_bytes, "one per trainable parameter", "training"))
    rows.append(
        Row(
            "Backward working memory",
            mc.backward_workspace_bytes(arch, tokens, hid) + dequant,
            "gradients in flight" + (", one dequantised weight" if q4 else ""),
            "training",
        )
    )

    if cuda:
        peak = max(sum(r.bytes for r in rows if r.phase in ("persistent", p)) for p in PHASES)
        rows.append(
            Row(
                "CUDA context + allocator slack",
                CUDA_CONTEXT_BYTES + int(ALLOCATOR_SLACK * peak),
                f"{gib(CUDA_CONTEXT_BYTES)} GiB context, {int(ALLOCATOR_SLACK * 100)} % fragmentation",
                "overhead",
                False,
            )
        )
    notes.extend([*_notes(arch, s, reg), *vllm_notes(s)])
    return MemoryPlan(model=arch.name, arch=arch, settings=s, rows=tuple(rows), notes=tuple(notes))


def _judge_rows(rows: list[Row], s: PlanSettings, cuda: bool) -> None:
    judge = s.judge
    assert judge is not None
    jarch = arch_for(judge.model)
    jcounts = jarch.param_counts()
    jq4 = judge.quantize == "4bit"
    linear_b, other_b = mc.weight_bytes(
        jcounts, quantize_4bit=jq4, regime_name="lora16" if cuda else "lora32"
    )
    rows.append(
        Row(
            f"Judge model weights ({jarch.name})",
            linear_b + other_b,
            f"{jcounts.total / 1e9:.2f} B params, {'4-bit' if jq4 else 'unquantised'}",
            "persistent",
        )
    )
    elem = 2 if cuda else 4
    jseq = s.prompt_length + s.completion_length + JUDGE_PROMPT_EXTRA + judge.max_new_tokens
    batch = min(judge.batch_size, s.generation_batch)
    rows.append(
        Row(
            "Judge KV cache",
            mc.kv_cache_bytes(jarch, batch, jseq, elem),
            f"{batch} prompts × {jseq} tokens",
            "judging",
        )
    )
    work = mc.prefill_bytes(jarch, batch, jseq - judge.max_new_tokens, elem) + mc.sampling_bytes(jarch, batch)
    work += jcounts.largest_linear * 2 if jq4 else 0
    rows.append(Row("Judge working memory", work, "judge prompt prefill, sampling", "judging"))


def _notes(arch: ArchSpec, s: PlanSettings, reg: str) -> list[str]:
    notes = [f"prompts assumed {s.prompt_length} tokens, completions run to the full {s.completion_length}"]
    if arch.is_moe:
        counts = arch.param_counts()
        notes.append(
            f"MoE: all {counts.total / 1e9:.1f} B parameters are held in memory, {counts.active / 1e9:.1f} B are active "
            f"per token (top-{arch.experts_per_token} of {arch.num_experts} experts); bitsandbytes does not quantise "
            "the fused expert tensors, so they stay unquantised"
        )
    if not arch.family.modelled:
        notes.append(f"model type {arch.model_type!r} is estimated as a Llama-style dense decoder")
    if s.device != "cuda":
        notes.append("CPU run: no CUDA context or allocator slack counted")
    if reg == "qlora":
        notes.append(
            "4-bit runs keep non-quantised weights and hidden states in float32 "
            "(peft.prepare_model_for_kbit_training)"
        )
    return notes
