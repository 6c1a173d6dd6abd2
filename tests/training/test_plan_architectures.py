"""Architecture facts: every preset's parameter count must equal the model transformers builds from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.models.presets import PRESETS
from evaluator.training.memory.architectures import (
    PRESET_ARCHS,
    ArchitectureError,
    arch_for,
    from_config_file,
)


def meta_counts(config) -> tuple[int, int]:
    """(all parameters, nn.Linear weights outside the LM head) of the model built on the meta device."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    linear = sum(
        m.weight.numel()
        for name, m in model.named_modules()
        if type(m) is torch.nn.Linear and "lm_head" not in name
    )
    return total, linear


def test_every_preset_has_architecture_facts() -> None:
    assert set(PRESETS) - {"tiny"} == set(PRESET_ARCHS)


@pytest.mark.parametrize("name", sorted(PRESET_ARCHS))
def test_preset_param_count_equals_meta_model(name: str) -> None:
    arch = PRESET_ARCHS[name]
    total, linear = meta_counts(arch.to_transformers_config())
    counts = arch.param_counts()
    assert counts.total == total
    assert counts.linear == linear  # the part bitsandbytes quantises


def test_published_sizes_are_recognisable() -> None:
    """The totals match the sizes the model cards state (0.6 B, 8.2 B, 9.2 B, 20.9 B with 3.6 B active)."""
    billions = {n: round(a.param_counts().total / 1e9, 1) for n, a in PRESET_ARCHS.items()}
    assert billions["qwen3-0.6b"] == 0.6
    assert billions["qwen3-8b"] == 8.2
    assert billions["atomicgpt-gemma2-9b"] == 9.2
    assert billions["gpt-oss-20b"] == 20.9
    assert round(PRESET_ARCHS["gpt-oss-20b"].param_counts().active / 1e9, 1) == 3.6


@pytest.mark.parametrize("name", ["tiny", "tiny-demo", "tiny-demo-2l"])
def test_tiny_models_read_from_their_config_json(name: str) -> None:
    from transformers import AutoConfig

    from evaluator.models.loading import ensure_tiny

    arch = arch_for(name)
    total, _ = meta_counts(AutoConfig.from_pretrained(ensure_tiny(name)))
    assert arch.param_counts().total == total
    assert arch.model_type == "qwen3"


LOCAL_CONFIGS = {
    "qwen2": {
        "model_type": "qwen2",
        "hidden_size": 128,
        "intermediate_size": 320,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 500,
        "tie_word_embeddings": False,
    },
    "llama": {
        "model_type": "llama",
        "hidden_size": 96,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 6,
        "num_key_value_heads": 3,
        "vocab_size": 300,
        "attention_bias": True,
        "mlp_bias": True,
    },
    "mistral": {
        "model_type": "mistral",
        "hidden_size": 64,
        "intermediate_size": 160,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "vocab_size": 200,
        "head_dim": 32,
    },
    "gemma": {
        "model_type": "gemma",
        "hidden_size": 64,
        "intermediate_size": 192,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 48,
        "vocab_size": 256,
    },
    "gpt_oss": {
        "model_type": "gpt_oss",
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": 128,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "sliding_window": 8,
        "layer_types": ["sliding_attention", "full_attention"],
    },
}


@pytest.mark.parametrize("family", sorted(LOCAL_CONFIGS))
def test_local_config_json_counts_match(tmp_path: Path, family: str) -> None:
    """A config.json written by transformers itself is read back into the same parameter count."""
    from transformers import AutoConfig

    doc = dict(LOCAL_CONFIGS[family])
    config = AutoConfig.for_model(doc.pop("model_type"), **doc)
    config.save_pretrained(tmp_path)
    arch = from_config_file(tmp_path)
    total, linear = meta_counts(config)
    assert (arch.param_counts().total, arch.param_counts().linear) == (total, linear)
    assert arch_for(str(tmp_path)).param_counts().total == total


def test_sliding_window_layers_cap_the_kv_cache() -> None:
    arch = PRESET_ARCHS["gpt-oss-20b"]
    assert arch.kv_tokens(1000) == 12 * 128 + 12 * 1000
    assert PRESET_ARCHS["qwen3-8b"].kv_tokens(1000) == 36 * 1000


def test_hub_id_of_a_preset_resolves_offline() -> None:
    assert arch_for("Qwen/Qwen3-8B") is PRESET_ARCHS["qwen3-8b"]
    assert arch_for("KAERI-MLP/AtomicGPT-gemma2-9B").vocab_size == 256000


def test_unknown_model_and_bad_folders_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ArchitectureError, match="preset"):
        arch_for("someone/some-model")
    with pytest.raises(ArchitectureError, match=r"no config\.json"):
        arch_for(str(tmp_path))
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "llama", "hidden_size": 8}), encoding="utf-8"
    )
    with pytest.raises(ArchitectureError, match="num_attention_heads"):
        arch_for(str(tmp_path))
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ArchitectureError, match="not readable JSON"):
        arch_for(str(tmp_path))


def test_lora_targets_follow_the_target_setting() -> None:
    arch = PRESET_ARCHS["qwen3-0.6b"]
    assert set(arch.lora_targets("all-linear")) == {
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    }
    assert arch.lora_targets("q_proj, v_proj") == {"q_proj": (1024, 2048), "v_proj": (1024, 1024)}
    assert set(PRESET_ARCHS["gpt-oss-20b"].lora_targets("all-linear")) == {
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
    }
    with pytest.raises(ArchitectureError, match="not known projections"):
        arch.lora_targets("qkv")


def test_hub_model_already_in_the_local_cache_is_read_offline(tmp_path: Path, monkeypatch) -> None:
    """A hub id that is not a preset works when its config.json sits in the Hugging Face cache."""
    from transformers import LlamaConfig

    snapshot = tmp_path / "models--someorg--small-llama" / "snapshots" / "abc123"
    LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, vocab_size=100
    ).save_pretrained(snapshot)
    refs = tmp_path / "models--someorg--small-llama" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text("abc123", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    arch = arch_for("someorg/small-llama")
    assert (arch.model_type, arch.hidden_size, arch.num_hidden_layers) == ("llama", 64, 2)
    with pytest.raises(ArchitectureError, match="downloaded copy"):
        arch_for("someorg/not-cached")
