"""The rows of each phase of a GRPO step: what holds memory, how much and why.

Persistent rows (weights, trainable parameters, optimizer state, a local judge) live through every phase; the
load, generation, judging and training rows only while their phase runs. The byte formulas live in
:mod:`costs`; these functions say which of them apply to a run and how each row is explained.
"""

from __future__ import annotations

from typing import NamedTuple

from evaluator.training.memory import costs as mc
from evaluator.training.memory.architectures import ArchSpec, arch_for
from evaluator.training.memory.settings import (
    ALLOCATOR_SLACK,
    CUDA_CONTEXT_BYTES,
    JUDGE_PROMPT_EXTRA,
    PHASES,
    PlanSettings,
    Row,
    gib,
)


class Regime(NamedTuple):
    """How a run holds its numbers: the precision regime, hidden-state bytes and 4-bit weights or not."""

    name: str
    hidden_bytes: int
    quantize_4bit: bool

    @classmethod
    def of(cls, s: PlanSettings) -> Regime:
        q4 = s.quantize == "4bit"
        name = mc.regime(lora=s.lora, quantize_4bit=q4, compute_bytes=s.compute_bytes)
        return cls(name, mc.hidden_bytes(name), q4)

    @property
    def float32_rest(self) -> bool:
        """Non-quantised weights and the LM head kept in float32 (4-bit runs and float32 compute)."""
        return self.name in ("qlora", "lora32", "full32")


def _dtype_word(nbytes: int) -> str:
    return {2: "bf16", 4: "float32"}.get(nbytes, f"{nbytes}-byte")


def weight_rows(arch: ArchSpec, reg: Regime) -> list[Row]:
    """The base model's weights: 4-bit linear layers plus the rest, or all of it unquantised."""
    counts = arch.param_counts()
    linear_b, other_b = mc.weight_bytes(counts, quantize_4bit=reg.quantize_4bit, regime_name=reg.name)
    other_dtype = _dtype_word(4 if reg.float32_rest else 2)
    if not reg.quantize_4bit:
        return [
            Row(
                f"Base weights ({other_dtype})",
                linear_b + other_b,
                f"{counts.total / 1e9:.2f} B params",
                "persistent",
            )
        ]
    return [
        Row(
            "Base weights, 4-bit NF4",
            linear_b,
            f"{counts.linear / 1e9:.2f} B linear weights × {mc.NF4_BYTES_DOUBLE_QUANT:.3f} B",
            "persistent",
        ),
        Row(
            f"Base weights, not quantised ({other_dtype})",
            other_b,
            f"{counts.not_quantized / 1e9:.2f} B params: embeddings, norms, biases"
            + (", MoE experts" if arch.is_moe else ""),
            "persistent",
        ),
    ]


def trainable(arch: ArchSpec, s: PlanSettings, reg: Regime) -> tuple[list[int], int]:
    """The trainable tensors' sizes (the LoRA matrices, or the whole model) and their bytes per element."""
    if s.lora:
        return mc.lora_tensors(arch, s.lora_r, s.lora_target), 2 if reg.quantize_4bit else 4
    return [arch.param_counts().total], s.compute_bytes


def trainable_rows(s: PlanSettings, sizes: list[int], train_bytes: int) -> list[Row]:
    """LoRA parameters, optimizer state and (with a KL term) the reference adapter."""
    rows = []
    if s.lora:
        rows.append(
            Row(
                "LoRA parameters",
                sum(sizes) * train_bytes,
                f"{sum(sizes) / 1e6:.1f} M params (r={s.lora_r}, {s.lora_target}), {_dtype_word(train_bytes)}",
                "persistent",
            )
        )
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
    return rows


def load_rows(arch: ArchSpec, reg: Regime) -> list[Row]:
    """The one-at-a-time casts while a 4-bit model is loaded and prepared."""
    if not reg.quantize_4bit:
        return []
    counts = arch.param_counts()
    load = max(counts.largest_other * 2, counts.largest_linear * 2)
    return [Row("Loading and float32 casting", load, "largest tensor held twice while converted", "load")]


def generation_rows(arch: ArchSpec, s: PlanSettings, reg: Regime) -> list[Row]:
    """KV cache for the whole generation batch, prompts prefilled at once, sampling logits."""
    hid = reg.hidden_bytes
    seq = s.prompt_length + s.max_completion_length
    gen = s.generation_batch
    dequant = arch.param_counts().largest_linear * 2 if reg.quantize_4bit else 0
    work = mc.prefill_bytes(arch, gen, s.prompt_length, hid) + mc.sampling_bytes(arch, gen) + dequant
    if s.beta > 0:
        work = max(work, mc.prefill_bytes(arch, s.per_device_train_batch_size, seq, hid))
    note = f"{gen} sequences × {seq} tokens, {_dtype_word(hid)}"
    return _decoding_rows(
        "Generation", arch, gen, seq, hid, note, work, "prompt prefill, sampling logits", "generation"
    )


def training_rows(
    arch: ArchSpec, s: PlanSettings, reg: Regime, sizes: list[int], train_bytes: int
) -> list[Row]:
    """One micro-batch forward and backward: activations, the fused LM head, gradients, backward workspace."""
    hid = reg.hidden_bytes
    cuda = s.device == "cuda"
    seq = s.prompt_length + s.max_completion_length
    tokens = s.per_device_train_batch_size * seq
    completion_tokens = s.per_device_train_batch_size * s.max_completion_length
    layer = mc.layer_activation_bytes(arch, reg.name, tokens, seq)
    full_acts = arch.num_hidden_layers * layer
    ckpt_acts = arch.num_hidden_layers * tokens * arch.hidden_size * hid + layer
    base = mc.embedding_and_norm_bytes(arch, tokens, hid)
    shape = f"{s.per_device_train_batch_size} × {seq} tokens"
    if s.gradient_checkpointing:
        acts = Row(
            "Activations (gradient checkpointing)",
            ckpt_acts + base,
            f"{shape}; without checkpointing {gib(full_acts + base)} GiB",
            "training",
        )
    else:
        acts = Row(
            "Activations (no checkpointing)",
            full_acts + base,
            f"{shape}; with checkpointing {gib(ckpt_acts + base)} GiB",
            "training",
        )
    lm_bytes = 4 if reg.float32_rest else 2
    # with Triton (CUDA) only completion tokens are scored; the torch fallback scores every position
    scored = completion_tokens if cuda else s.per_device_train_batch_size * (seq - 1)
    head = mc.fused_head_bytes(
        arch, scored_tokens=scored, hidden=hid, lm_bytes=lm_bytes, compute_bytes=s.compute_bytes, cuda=cuda
    )
    dequant = arch.param_counts().largest_linear * 2 if reg.quantize_4bit else 0
    return [
        acts,
        Row(
            "Logits (fused LM head)",
            head,
            f"vocab {arch.vocab_size} × {completion_tokens} completion tokens scored in tiles; "
            f"full float32 logits would be {gib(mc.full_logits_bytes(arch, completion_tokens))} GiB",
            "training",
        ),
        Row("Gradients", sum(sizes) * train_bytes, "one per trainable parameter", "training"),
        Row(
            "Backward working memory",
            mc.backward_workspace_bytes(arch, tokens, hid) + dequant,
            "gradients in flight" + (", one dequantised weight" if reg.quantize_4bit else ""),
            "training",
        ),
    ]


def overhead_row(rows: list[Row]) -> Row:
    """CUDA's own context plus allocator slack on the largest phase."""
    peak = max(sum(r.bytes for r in rows if r.phase in ("persistent", p)) for p in PHASES)
    return Row(
        "CUDA context + allocator slack",
        CUDA_CONTEXT_BYTES + int(ALLOCATOR_SLACK * peak),
        f"{gib(CUDA_CONTEXT_BYTES)} GiB context, {int(ALLOCATOR_SLACK * 100)} % fragmentation",
        "overhead",
        False,
    )


def judge_rows(s: PlanSettings) -> list[Row]:
    """A local judge on the same GPU: its weights (persistent), its KV cache and working memory (judging)."""
    judge = s.local_judge
    if judge is None:
        return []
    cuda = s.device == "cuda"
    jarch = arch_for(judge.model)
    jcounts = jarch.param_counts()
    jq4 = judge.quantize == "4bit"
    linear_b, other_b = mc.weight_bytes(
        jcounts, quantize_4bit=jq4, regime_name="lora16" if cuda else "lora32"
    )
    elem = 2 if cuda else 4
    jseq = s.prompt_length + s.max_completion_length + JUDGE_PROMPT_EXTRA + judge.max_new_tokens
    batch = min(judge.batch_size, s.generation_batch)
    work = mc.prefill_bytes(jarch, batch, jseq - judge.max_new_tokens, elem) + mc.sampling_bytes(jarch, batch)
    work += jcounts.largest_linear * 2 if jq4 else 0
    return [
        Row(
            f"Judge model weights ({jarch.name})",
            linear_b + other_b,
            f"{jcounts.total / 1e9:.2f} B params, {'4-bit' if jq4 else 'unquantised'}",
            "persistent",
        ),
        *_decoding_rows("Judge", jarch, batch, jseq, elem, f"{batch} prompts × {jseq} tokens", work,
                        "judge prompt prefill, sampling", "judging"),
    ]  # fmt: skip


def _decoding_rows(
    who: str,
    arch: ArchSpec,
    batch: int,
    seq: int,
    elem: int,
    cache_note: str,
    work: int,
    work_note: str,
    phase: str,
) -> list[Row]:
    """A decoding phase's two rows: the KV cache of ``batch`` sequences of ``seq`` tokens, and its working memory."""
    return [
        Row(f"{who} KV cache", mc.kv_cache_bytes(arch, batch, seq, elem), cache_note, phase),
        Row(f"{who} working memory", work, work_note, phase),
    ]


def plan_notes(arch: ArchSpec, s: PlanSettings, reg: Regime) -> list[str]:
    """What the estimate assumed, and where a model is estimated less exactly."""
    notes = [f"prompts assumed {s.prompt_length} tokens, completions run to the full {s.max_completion_length}"]
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
    if reg.name == "qlora":
        notes.append(
            "4-bit runs keep non-quantised weights and hidden states in float32 "
            "(peft.prepare_model_for_kbit_training)"
        )
    return notes
