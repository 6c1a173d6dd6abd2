"""Bytes held by each part of a QLoRA GRPO step, as the project's trainer (TRL 1.16 + PEFT + bitsandbytes) runs it.

Facts these formulas encode, each read from the installed libraries:

* bitsandbytes quantises only ``nn.Linear`` weights (NF4: half a byte per weight plus the double-quantised
  block scales); embeddings, the LM head, norms, biases and fused MoE expert tensors are not quantised.
* ``peft.prepare_model_for_kbit_training`` (called by the trainer for 4-bit runs) casts every parameter that
  is not 4-bit to float32, so those weights, and the hidden states that flow from the float32 embeddings
  (activations, the generation KV cache), are float32. TRL then casts the LoRA weights to bfloat16.
* TRL 1.16 never materialises the ``(tokens × vocab)`` logits: its fused LM head scores the completion tokens
  in tiles of at most 4096 tokens × 32768 vocabulary entries.
* TRL generates the whole generation batch (per-device batch × gradient accumulation) in one ``generate``.

Per-layer activation memory comes from coefficients measured with torch saved-tensor hooks on real
PEFT/bitsandbytes layers (``benchmarks/plan_memory.py --calibrate`` re-measures them); the rest is arithmetic.
"""

from __future__ import annotations

from evaluator.training.memory.arch_spec import ArchSpec, ParamCounts

NF4_BYTES_DOUBLE_QUANT = 0.5 + 1 / 64 + 4 / (64 * 256)
"""4-bit weight + one 8-bit scale per 64 weights + one float32 scale per 256 scales."""
NF4_BYTES = 0.5 + 4 / 64
FUSED_HEAD_TOKENS = 4096
FUSED_HEAD_VOCAB = 32768
BNB_8BIT_MIN_SIZE = 4096
"""bitsandbytes keeps optimizer state in 32 bits for tensors with fewer elements than this."""

# Saved-for-backward bytes per token per decoder layer = cH·hidden + cI·ffn + cQ·(heads·head_dim)
# + cKV·(kv_heads·head_dim) + cS·heads·seq_len (eager attention only). For MoE the ffn term is
# experts_per_token · intermediate_size. Keys: (activation family, regime). Regimes: qlora = NF4 weights
# + float32 non-quantised weights + bf16 LoRA under bf16 autocast; lora16 = bf16 weights + float32 LoRA under
# bf16 autocast; lora32 = float32 everything (CPU); full16/full32 = full fine-tuning.
ACTIVATION_COEFFS: dict[tuple[str, str], tuple[float, float, float, float, float]] = {
    ("dense", "qlora"): (28.25, 16.09, 12.21, 8.29, 0.0),
    ("dense", "lora16"): (39.71, 12.71, 14.63, 8.71, 0.0),
    ("dense", "lora32"): (48.46, 20.16, 20.33, 12.59, 0.0),
    ("dense", "full16"): (16.04, 8.01, 10.09, 10.0, 0.0),
    ("dense", "full32"): (24.04, 16.01, 16.09, 16.0, 0.0),
    ("gemma2", "qlora"): (36.33, 16.08, 10.13, 0.32, 8.0),
    ("gemma2", "lora16"): (48.04, 12.79, 13.52, 0.10, 7.37),
    ("gemma2", "lora32"): (56.53, 20.15, 20.23, 0.63, 8.01),
    ("gemma2", "full16"): (36.13, 8.01, 8.03, 0.01, 7.99),
    ("gemma2", "full32"): (40.13, 16.01, 16.03, 0.01, 7.99),
    ("gpt_oss", "qlora"): (36.15, 24.0, 10.01, 0.10, 6.11),
    ("gpt_oss", "lora16"): (35.21, 12.03, 13.02, 0.50, 1.78),
    ("gpt_oss", "lora32"): (48.42, 24.04, 20.31, 0.51, 4.04),
    ("gpt_oss", "full16"): (35.21, 12.03, 13.02, 0.50, 1.78),
    ("gpt_oss", "full32"): (48.42, 24.04, 20.31, 0.51, 4.04),
}


def regime(*, lora: bool, quantize_4bit: bool, compute_bytes: int) -> str:
    """Which measured setup a run matches."""
    wide = compute_bytes >= 4
    if not lora:
        return "full32" if wide else "full16"
    if quantize_4bit and not wide:
        return "qlora"
    return "lora32" if wide else "lora16"


def hidden_bytes(regime_name: str) -> int:
    """Bytes per element of the hidden states (and KV cache): float32 wherever the embeddings are."""
    return 2 if regime_name in ("lora16", "full16") else 4


def activation_family(arch: ArchSpec) -> str:
    return arch.model_type if arch.model_type in ("gemma2", "gpt_oss") else "dense"


def ffn_width(arch: ArchSpec) -> int:
    """Feed-forward width one token passes through (MoE: its top-k experts)."""
    return arch.intermediate_size * (arch.experts_per_token if arch.is_moe else 1)


def layer_activation_bytes(arch: ArchSpec, regime_name: str, tokens: int, seq_len: int) -> int:
    """What one decoder layer saves for backward over ``tokens`` tokens in sequences of ``seq_len``."""
    c_h, c_i, c_q, c_kv, c_s = ACTIVATION_COEFFS[(activation_family(arch), regime_name)]
    eager = arch.attn_implementation == "eager"
    per_token = (
        c_h * arch.hidden_size
        + c_i * ffn_width(arch)
        + c_q * arch.num_attention_heads * arch.head_dim
        + c_kv * arch.num_key_value_heads * arch.head_dim
        + (c_s * arch.num_attention_heads * seq_len if eager else 0.0)
    )
    return int(per_token * tokens)


def weight_bytes(counts: ParamCounts, *, quantize_4bit: bool, regime_name: str) -> tuple[int, int]:
    """(quantised linear weights, everything else) in bytes as they sit on the device during training."""
    if quantize_4bit:
        other = 4 if regime_name in ("qlora", "lora32") else 2
        return int(counts.linear * NF4_BYTES_DOUBLE_QUANT), counts.not_quantized * other
    per = 4 if regime_name.endswith("32") else 2
    return counts.linear * per, counts.not_quantized * per


def lora_tensors(arch: ArchSpec, rank: int, target: str) -> list[int]:
    """Element counts of every LoRA A and B matrix."""
    sizes: list[int] = []
    for fan_in, fan_out in arch.lora_targets(target).values():
        sizes += [rank * fan_in, fan_out * rank]
    return sizes * arch.num_hidden_layers


def optimizer_bytes(tensor_sizes: list[int], optim: str, param_bytes: int) -> int:
    """Optimizer state for trainable tensors of the given sizes."""
    name = optim.lower()
    states = 1 if "lion" in name else 0 if name == "sgd" else 2
    if "8bit" in name:
        small = sum(n for n in tensor_sizes if n < BNB_8BIT_MIN_SIZE)
        large = sum(tensor_sizes) - small
        return int(states * (large * (1 + 4 / 256) + small * 4))
    if name.startswith(("paged_", "adamw_bnb", "lion_32bit")) or "32bit" in name:
        return states * 4 * sum(tensor_sizes)
    if name == "adafactor":
        return 4 * sum(tensor_sizes) // 64
    return states * param_bytes * sum(tensor_sizes)


def optimizer_is_paged(optim: str) -> bool:
    """Paged optimizers keep state in CUDA unified memory, outside torch's allocator statistics."""
    return optim.lower().startswith("paged_")


def fused_head_bytes(
    arch: ArchSpec, *, scored_tokens: int, hidden: int, lm_bytes: int, compute_bytes: int, cuda: bool
) -> int:
    """TRL's fused LM head: saved hidden rows, the float32 hidden gradient and its tile buffer.

    The buffer is always ``min(tokens, 4096) × 32768`` entries in the compute dtype, whatever the vocabulary.
    Without Triton (CPU) the torch fallback adds a few float32 copies of each tile.
    """
    h = arch.hidden_size
    rows = min(scored_tokens, FUSED_HEAD_TOKENS)
    cols = min(arch.vocab_size, FUSED_HEAD_VOCAB)
    tile = rows * FUSED_HEAD_VOCAB * compute_bytes + (0 if cuda else rows * cols * 4 * 5)
    weight_cast = cols * h * compute_bytes if lm_bytes != compute_bytes else 0
    return scored_tokens * h * (hidden + 4) + tile + weight_cast


def full_logits_bytes(arch: ArchSpec, completion_tokens: int) -> int:
    """What float32 logits for every completion token would take (TRL 1.16 does not build them)."""
    return completion_tokens * arch.vocab_size * 4


def embedding_and_norm_bytes(arch: ArchSpec, tokens: int, hidden: int) -> int:
    """Embedding output (Gemma also scales it) and the final norm's saved tensors."""
    copies = 2 if arch.model_type.startswith("gemma") else 1
    return tokens * arch.hidden_size * (copies * hidden + 4 + 4 + hidden)


def backward_workspace_bytes(arch: ArchSpec, tokens: int, hidden: int) -> int:
    """Gradients in flight while one layer's backward runs (residual stream, MLP intermediates)."""
    return tokens * (3 * arch.hidden_size * max(hidden, 4) + 2 * ffn_width(arch) * hidden)


def kv_cache_bytes(arch: ArchSpec, sequences: int, seq_len: int, elem_bytes: int) -> int:
    """Keys and values for ``sequences`` sequences of ``seq_len`` tokens, every layer."""
    return sequences * arch.kv_tokens(seq_len) * 2 * arch.num_key_value_heads * arch.head_dim * elem_bytes


def prefill_bytes(arch: ArchSpec, sequences: int, prompt_len: int, elem_bytes: int) -> int:
    """Peak of one no-grad layer over the prompts: MLP intermediates, and the score matrix if eager."""
    tokens = sequences * prompt_len
    mlp = tokens * (3 * ffn_width(arch) + 4 * arch.hidden_size) * elem_bytes
    scores = 0
    if arch.attn_implementation == "eager":
        scores = sequences * arch.num_attention_heads * prompt_len * prompt_len * (2 * elem_bytes + 8)
    return mlp + scores


def sampling_bytes(arch: ArchSpec, sequences: int) -> int:
    """Next-token logits and the sampler's float32 copies (temperature, top-p sort) per decoding step."""
    return sequences * arch.vocab_size * 4 * 5
