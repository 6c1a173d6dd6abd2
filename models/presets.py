"""Model presets: short names researchers type, mapped to hub ids and the loading quirks they need."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelPreset:
    name: str
    hub_id: str
    family: str
    attn_implementation: str | None = None
    """Gemma2 needs ``eager`` attention (soft-capping is not in SDPA)."""
    chat_template_note: str = ""
    """What the shared rendering rule does with this model's stock template (it decides from the template
    itself, never from this note; see ``evaluator.models.chat_format``)."""


QWEN3_NOTE = "thinking off (on for qwen3-think)"
GEMMA2_NOTE = "system prompt folded into user turn"

PRESETS: dict[str, ModelPreset] = {
    p.name: p
    for p in (
        ModelPreset("qwen3-0.6b", "Qwen/Qwen3-0.6B", "qwen3", chat_template_note=QWEN3_NOTE),
        ModelPreset("qwen3-1.7b", "Qwen/Qwen3-1.7B", "qwen3", chat_template_note=QWEN3_NOTE),
        ModelPreset("qwen3-4b", "Qwen/Qwen3-4B", "qwen3", chat_template_note=QWEN3_NOTE),
        ModelPreset("qwen3-8b", "Qwen/Qwen3-8B", "qwen3", chat_template_note=QWEN3_NOTE),
        ModelPreset("qwen3-14b", "Qwen/Qwen3-14B", "qwen3", chat_template_note=QWEN3_NOTE),
        ModelPreset(
            "atomicgpt-gemma2-9b", "KAERI-MLP/AtomicGPT-gemma2-9B", "gemma2", attn_implementation="eager",
            chat_template_note=GEMMA2_NOTE,
        ),
        ModelPreset("gpt-oss-20b", "openai/gpt-oss-20b", "gpt_oss", attn_implementation="eager"),
        ModelPreset("tiny", "tiny", "qwen3"),
    )
}


def resolve_preset(name_or_path: str) -> ModelPreset | None:
    """The preset for a short name (case-insensitive), or None for hub ids and local paths."""
    return PRESETS.get(name_or_path.lower())
