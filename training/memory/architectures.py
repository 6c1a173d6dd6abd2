"""Architecture facts for every model preset, so memory can be planned offline, before any download.

Each preset's shape is copied from the published ``config.json`` of its hub model (Qwen/Qwen3-*,
google/gemma-2-9b, which KAERI-MLP/AtomicGPT-gemma2-9B fine-tunes without changing the shape, and
openai/gpt-oss-20b). Rope settings are left out: they change no tensor size. For any other model the
planner reads the ``config.json`` of a local folder; ``tiny`` models are built locally and read the same way.

Parameter counts are computed from these facts by formula (no torch needed); the test suite checks them
against the model transformers builds from :meth:`ArchSpec.to_transformers_config` on the ``meta`` device.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evaluator.models.loading import TINY_NAMES, ensure_tiny
from evaluator.models.presets import PRESETS
from evaluator.training.memory.arch_spec import (
    FAMILIES,
    GENERIC,
    LINEAR_NAMES,
    ArchitectureError,
    ArchSpec,
    Family,
    ParamCounts,
)

__all__ = [
    "FAMILIES",
    "LINEAR_NAMES",
    "PRESET_ARCHS",
    "ArchSpec",
    "ArchitectureError",
    "Family",
    "ParamCounts",
    "arch_for",
    "from_config_dict",
    "from_config_file",
]


def _qwen3(name: str, layers: int, hidden: int, heads: int, inter: int, tie: bool) -> ArchSpec:
    return ArchSpec(
        name=name,
        model_type="qwen3",
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=inter,
        vocab_size=151936,
        tie_word_embeddings=tie,
        extra={
            "max_position_embeddings": 40960,
            "rms_norm_eps": 1e-6,
            "bos_token_id": 151643,
            "eos_token_id": 151645,
        },
    )


GEMMA2_9B = ArchSpec(
    name="atomicgpt-gemma2-9b",
    model_type="gemma2",
    num_hidden_layers=42,
    hidden_size=3584,
    num_attention_heads=16,
    num_key_value_heads=8,
    head_dim=256,
    intermediate_size=14336,
    vocab_size=256000,
    tie_word_embeddings=True,
    sliding_window=4096,
    sliding_layers=21,
    extra={
        "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-6,
        "query_pre_attn_scalar": 256,
        "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0,
        "hidden_activation": "gelu_pytorch_tanh",
        "pad_token_id": 0,
        "bos_token_id": 2,
        "eos_token_id": 1,
    },
)

GPT_OSS_20B = ArchSpec(
    name="gpt-oss-20b",
    model_type="gpt_oss",
    num_hidden_layers=24,
    hidden_size=2880,
    num_attention_heads=64,
    num_key_value_heads=8,
    head_dim=64,
    intermediate_size=2880,
    vocab_size=201088,
    tie_word_embeddings=False,
    attention_bias=True,
    num_experts=32,
    experts_per_token=4,
    sliding_window=128,
    sliding_layers=12,
    extra={
        "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-5,
        "swiglu_limit": 7.0,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
        "pad_token_id": 199999,
        "eos_token_id": 200002,
    },
)

PRESET_ARCHS: dict[str, ArchSpec] = {
    a.name: a
    for a in (
        _qwen3("qwen3-0.6b", 28, 1024, 16, 3072, tie=True),
        _qwen3("qwen3-1.7b", 28, 2048, 16, 6144, tie=True),
        _qwen3("qwen3-4b", 36, 2560, 32, 9728, tie=True),
        _qwen3("qwen3-8b", 36, 4096, 32, 12288, tie=False),
        _qwen3("qwen3-14b", 40, 5120, 40, 17408, tie=False),
        GEMMA2_9B,
        GPT_OSS_20B,
    )
}


def from_config_dict(doc: dict[str, Any], name: str, source: str = "config.json") -> ArchSpec:
    """Read a transformers ``config.json`` (top level or its ``text_config``) into an :class:`ArchSpec`."""
    cfg = doc.get("text_config") if isinstance(doc.get("text_config"), dict) else doc
    model_type = str(cfg.get("model_type") or doc.get("model_type") or "")
    fam = FAMILIES.get(model_type, GENERIC)
    try:
        hidden = int(cfg["hidden_size"])
        heads = int(cfg["num_attention_heads"])
        spec_values = {
            "num_hidden_layers": int(cfg["num_hidden_layers"]),
            "intermediate_size": int(cfg["intermediate_size"]),
            "vocab_size": int(cfg["vocab_size"]),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise ArchitectureError(
            f"{source} lacks a usable {exc} field; the planner needs hidden_size, num_attention_heads, "
            "num_hidden_layers, intermediate_size and vocab_size"
        ) from None
    layer_types = cfg.get("layer_types") or []
    sliding = sum(1 for t in layer_types if "sliding" in str(t))
    window = cfg.get("sliding_window")
    if model_type == "gemma2" and not layer_types:
        sliding = spec_values["num_hidden_layers"] // 2
    if cfg.get("use_sliding_window") is False:
        window, sliding = None, 0
    extra = {
        k: cfg[k]
        for k in (
            "layer_types",
            "query_pre_attn_scalar",
            "attn_logit_softcapping",
            "final_logit_softcapping",
            "pad_token_id",
        )
        if cfg.get(k) is not None
    }
    return ArchSpec(
        name=name,
        model_type=model_type or "unknown",
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=int(cfg.get("num_key_value_heads") or heads),
        head_dim=int(cfg.get("head_dim") or hidden // heads),
        tie_word_embeddings=bool(
            cfg.get("tie_word_embeddings", doc.get("tie_word_embeddings", fam.tie_default))
        ),
        attention_bias=bool(cfg.get("attention_bias", False)),
        mlp_bias=bool(cfg.get("mlp_bias", False)),
        num_experts=int(cfg.get("num_local_experts") or cfg.get("num_experts") or 0),
        experts_per_token=int(cfg.get("num_experts_per_tok") or cfg.get("experts_per_token") or 0),
        sliding_window=int(window) if window and sliding else None,
        sliding_layers=sliding if window else 0,
        extra=extra,
        source=source,
        **spec_values,
    )


def from_config_file(path: str | Path, name: str | None = None) -> ArchSpec:
    """Read ``path`` (a ``config.json`` or a folder holding one)."""
    p = Path(path)
    cfg_path = p / "config.json" if p.is_dir() else p
    if not cfg_path.is_file():
        raise ArchitectureError(f"{p} has no config.json")
    try:
        doc = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ArchitectureError(f"{cfg_path} is not readable JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ArchitectureError(f"{cfg_path} must hold a JSON object")
    return from_config_dict(doc, name or str(p), source=str(cfg_path))


def _cached_hub_config(repo_id: str) -> Path | None:
    """The ``config.json`` of a hub model already in the local Hugging Face cache (never downloads)."""
    if repo_id.count("/") != 1:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json", cache_dir=os.environ.get("HF_HUB_CACHE"))
    except Exception:  # an invalid repo id, or no huggingface_hub: not cached
        return None
    return Path(found) if isinstance(found, str) else None


def arch_for(model: str) -> ArchSpec:
    """Facts for a preset, a ``tiny`` model, a preset's hub id, a local folder with ``config.json``, or a hub
    model already in the local Hugging Face cache."""
    key = model.strip()
    if key.lower() in PRESET_ARCHS:
        return PRESET_ARCHS[key.lower()]
    if key.lower() in TINY_NAMES:
        return from_config_file(ensure_tiny(key.lower()), name=key.lower())
    for preset in PRESETS.values():
        if preset.hub_id.lower() == key.lower() and preset.name in PRESET_ARCHS:
            return PRESET_ARCHS[preset.name]
    if Path(key).exists():
        return from_config_file(key)
    cached = _cached_hub_config(key)
    if cached is not None:
        return from_config_file(cached, name=key)
    raise ArchitectureError(
        f"unknown model {model!r}: use a preset ({', '.join([*PRESET_ARCHS, *TINY_NAMES])}) or a local folder "
        "holding config.json (the planner works offline, so a hub id needs a downloaded copy)"
    )
