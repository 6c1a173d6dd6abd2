"""The shape of a decoder-only transformer and the parameter counts that follow from it, with no torch.

An :class:`ArchSpec` holds what a ``config.json`` states about a model's shape. :meth:`ArchSpec.param_counts`
splits the parameters by how they are stored (only ``nn.Linear`` weights are quantised by bitsandbytes);
:meth:`ArchSpec.to_transformers_config` gives the transformers config the same facts describe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluator.models.presets import PRESETS


class ArchitectureError(ValueError):
    """The model's architecture is unknown and cannot be read offline."""


@dataclass(frozen=True)
class Family:
    """What a model family's decoder layer holds beyond the shared shape facts."""

    qkv_bias: bool | None = None
    """True/False fixed by the family; None = follows the config's ``attention_bias``."""
    o_bias: bool | None = None
    qk_norm: bool = False
    norms_per_layer: int = 2
    attention_sinks: bool = False
    attn_implementation: str = "sdpa"
    tie_default: bool = False
    modelled: bool = True
    """False for families estimated as a plain Llama-style decoder (a note says so)."""


FAMILIES: dict[str, Family] = {
    "qwen3": Family(qk_norm=True),
    "qwen2": Family(qkv_bias=True, o_bias=False),
    "llama": Family(),
    "mistral": Family(qkv_bias=False, o_bias=False),
    "gemma": Family(tie_default=True),
    "gemma2": Family(norms_per_layer=4, attn_implementation="eager", tie_default=True),
    "gpt_oss": Family(attention_sinks=True, attn_implementation="eager"),
}
GENERIC = Family(modelled=False)

LINEAR_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by how they are stored: only ``linear`` weights are quantised to 4-bit by bitsandbytes."""

    embed: int
    lm_head: int
    linear: int
    linear_bias: int
    norms: int
    experts: int
    router: int
    other: int
    largest_linear: int
    largest_other: int
    active: int
    """Parameters one token computes with (MoE: attention + top-k experts), input embedding table excluded."""

    @property
    def total(self) -> int:
        return (
            self.embed
            + self.lm_head
            + self.linear
            + self.linear_bias
            + self.norms
            + self.experts
            + self.router
            + self.other
        )

    @property
    def not_quantized(self) -> int:
        return self.total - self.linear


@dataclass(frozen=True)
class ArchSpec:
    """The shape of a decoder-only transformer, as its ``config.json`` states it."""

    name: str
    model_type: str
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    attention_bias: bool = False
    mlp_bias: bool = False
    num_experts: int = 0
    experts_per_token: int = 0
    sliding_window: int | None = None
    sliding_layers: int = 0
    """How many layers attend within ``sliding_window`` only (their KV cache stops growing there)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further config fields passed to transformers as they are (softcapping, layer types, …)."""
    source: str = "preset"

    @property
    def family(self) -> Family:
        return FAMILIES.get(self.model_type, GENERIC)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def attn_implementation(self) -> str:
        preset = PRESETS.get(self.name)
        return (preset.attn_implementation if preset else None) or self.family.attn_implementation

    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """``name -> (in_features, out_features)`` of one layer's ``nn.Linear`` projections."""
        h, q, kv = (
            self.hidden_size,
            self.num_attention_heads * self.head_dim,
            self.num_key_value_heads * self.head_dim,
        )
        shapes = {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h)}
        if not self.is_moe:
            i = self.intermediate_size
            shapes.update({"gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)})
        return shapes

    def param_counts(self) -> ParamCounts:
        """Every parameter by storage class, from the shape facts alone."""
        fam, h, n_layers = self.family, self.hidden_size, self.num_hidden_layers
        shapes = self.linear_shapes()
        linear = sum(i * o for i, o in shapes.values())
        qkv_bias = self.attention_bias if fam.qkv_bias is None else fam.qkv_bias
        o_bias = self.attention_bias if fam.o_bias is None else fam.o_bias
        bias = sum(o for name, (_, o) in shapes.items() if name in ("q_proj", "k_proj", "v_proj")) * qkv_bias
        bias += h * o_bias
        if self.mlp_bias and not self.is_moe:
            bias += 2 * self.intermediate_size + h
        norms = fam.norms_per_layer * h + (2 * self.head_dim if fam.qk_norm else 0)
        experts = router = 0
        expert_one = 0
        if self.is_moe:
            i, e = self.intermediate_size, self.num_experts
            expert_one = h * 2 * i + 2 * i + i * h + h  # fused gate/up and down projections with biases
            experts, router = e * expert_one, e * h + e
        sinks = self.num_attention_heads if fam.attention_sinks else 0
        embed = self.vocab_size * h
        lm_head = 0 if self.tie_word_embeddings else embed
        per_layer_dense = linear + bias + norms + router + sinks
        head = (
            self.vocab_size * h
        )  # the output projection; the input embedding is a lookup, as model cards count
        active = n_layers * (per_layer_dense + self.experts_per_token * expert_one) + head + h
        return ParamCounts(
            embed=embed,
            lm_head=lm_head,
            linear=n_layers * linear,
            linear_bias=n_layers * bias,
            norms=n_layers * norms + h,
            experts=n_layers * experts,
            router=n_layers * router,
            other=n_layers * sinks,
            largest_linear=max(i * o for i, o in shapes.values()),
            largest_other=max(embed, self.num_experts * h * 2 * self.intermediate_size if self.is_moe else 0),
            active=active,
        )

    def lora_targets(self, target: str = "all-linear") -> dict[str, tuple[int, int]]:
        """The projections a LoRA ``target_modules`` setting wraps (``all-linear`` = every ``nn.Linear``)."""
        shapes = self.linear_shapes()
        if target.strip() in ("all-linear", "all"):
            return shapes
        wanted = [t.strip() for t in target.replace(";", ",").split(",") if t.strip()]
        unknown = [t for t in wanted if t not in LINEAR_NAMES]
        if unknown:
            raise ArchitectureError(
                f"LoRA target(s) {', '.join(unknown)} are not known projections; use all-linear or a comma list of "
                f"{', '.join(LINEAR_NAMES)}"
            )
        return {name: shapes[name] for name in wanted if name in shapes}

    def kv_tokens(self, seq_len: int) -> int:
        """Token slots the KV cache holds summed over layers (sliding-window layers stop at the window)."""
        if self.sliding_window and self.sliding_layers:
            sliding = self.sliding_layers * min(seq_len, self.sliding_window)
            return sliding + (self.num_hidden_layers - self.sliding_layers) * seq_len
        return self.num_hidden_layers * seq_len

    def config_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the transformers config class of ``model_type``."""
        kw: dict[str, Any] = {
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "tie_word_embeddings": self.tie_word_embeddings,
            "attention_bias": self.attention_bias,
        }
        if self.mlp_bias:
            kw["mlp_bias"] = True
        if self.is_moe:
            kw.update(num_local_experts=self.num_experts, num_experts_per_tok=self.experts_per_token)
        if self.sliding_window:
            kw["sliding_window"] = self.sliding_window
        kw.update(self.extra)
        return kw

    def to_transformers_config(self) -> Any:
        """The transformers config (Qwen3Config, Gemma2Config, GptOssConfig, …) these facts describe."""
        from transformers import AutoConfig

        return AutoConfig.for_model(self.model_type, **self.config_kwargs())

    def to_dict(self) -> dict[str, Any]:
        counts = self.param_counts()
        return {
            "name": self.name,
            "model_type": self.model_type,
            "source": self.source,
            "num_hidden_layers": self.num_hidden_layers,
            "hidden_size": self.hidden_size,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "vocab_size": self.vocab_size,
            "tie_word_embeddings": self.tie_word_embeddings,
            "num_experts": self.num_experts,
            "experts_per_token": self.experts_per_token,
            "parameters": counts.total,
            "active_parameters": counts.active,
        }
