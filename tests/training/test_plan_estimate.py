"""The memory estimate: its parts checked against real loads, caches and saved tensors, and its fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.training.config import TrainConfig
from evaluator.training.memory import costs as mc
from evaluator.training.memory.architectures import PRESET_ARCHS, arch_for
from evaluator.training.memory.plan import (
    GIB,
    OOM_ADVICE,
    JudgeSettings,
    PlanError,
    PlanSettings,
    estimate,
    plan_for_train_config,
    suggest_fixes,
    warn_if_too_big,
)


def row(plan, prefix: str):
    return next(r for r in plan.rows if r.name.startswith(prefix))


@pytest.fixture(scope="module")
def tiny_4bit(tiny_model_dir: Path):
    """The tiny model loaded the way a CUDA QLoRA run loads it: NF4, bf16 compute, then kbit preparation."""
    import torch
    from peft import prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM

    from evaluator.models.loading import bnb_config, disable_cpu_4bit_repack

    model = AutoModelForCausalLM.from_pretrained(
        tiny_model_dir, quantization_config=bnb_config("bfloat16"), dtype=torch.bfloat16, device_map="cpu"
    )
    disable_cpu_4bit_repack(model)
    return prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)


def test_weight_rows_match_a_real_4bit_load(tiny_4bit) -> None:
    quantised = other = 0
    for p in tiny_4bit.parameters():
        if p.__class__.__name__ == "Params4bit":
            qs = p.quant_state
            quantised += p.numel() * p.element_size() + qs.absmax.numel() * qs.absmax.element_size()
            if qs.nested:
                quantised += qs.state2.absmax.numel() * qs.state2.absmax.element_size()
        else:
            other += p.numel() * p.element_size()
    linear_b, other_b = mc.weight_bytes(
        arch_for("tiny").param_counts(), quantize_4bit=True, regime_name="qlora"
    )
    assert other_b == other  # embeddings and norms, float32 after prepare_model_for_kbit_training
    assert linear_b == pytest.approx(quantised, rel=0.01)


def test_kv_cache_matches_generate_and_is_float32_after_kbit_prep(tiny_4bit) -> None:
    import torch

    tiny_4bit.train()
    prompts = torch.randint(3, 1000, (3, 10))
    out = tiny_4bit.generate(
        prompts, max_new_tokens=6, min_new_tokens=6, do_sample=False, return_dict_in_generate=True
    )
    layers = out.past_key_values.layers
    held = sum(t.numel() * t.element_size() for layer in layers for t in (layer.keys, layer.values))
    assert {layer.keys.dtype for layer in layers} == {torch.float32}
    assert mc.hidden_bytes("qlora") == 4
    # the last generated token is never fed back, so the cache holds prompt + new - 1 positions
    assert held == mc.kv_cache_bytes(arch_for("tiny"), 3, 10 + 6 - 1, 4)


def saved_bytes(model, forward) -> int:
    """Bytes autograd saves for backward during ``forward`` (parameters excluded, shared storage once)."""
    import torch

    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[tuple[int, int], int] = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() and st.data_ptr() not in params:
            seen[(st.data_ptr(), st.nbytes())] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        forward()
    return sum(seen.values())


@pytest.mark.slow
def test_activation_estimate_matches_saved_tensors_of_the_trainers_model() -> None:
    """The policy exactly as the trainer wraps it (LoRA on every projection), forward on CPU in float32."""
    import torch

    from evaluator.training.run_setup import load_policy

    arch = arch_for("tiny-demo")
    policy = load_policy(TrainConfig(model="tiny-demo"))
    batch, seq = 4, 96
    ids = torch.randint(3, arch.vocab_size, (batch, seq))
    backbone = policy.model.get_base_model().model
    measured = saved_bytes(policy.model, lambda: backbone(input_ids=ids))
    estimated = arch.num_hidden_layers * mc.layer_activation_bytes(
        arch, "lora32", batch * seq, seq
    ) + mc.embedding_and_norm_bytes(arch, batch * seq, 4)
    assert estimated == pytest.approx(measured, rel=0.10)


def test_parts_respond_to_the_settings_they_depend_on() -> None:
    arch = PRESET_ARCHS["qwen3-0.6b"]
    base = PlanSettings(per_device_train_batch_size=4, gradient_accumulation_steps=1, max_completion_length=512, gradient_checkpointing=False)
    plan = estimate(arch, base)
    halved = estimate(arch, base.replace(per_device_train_batch_size=2, gradient_accumulation_steps=2))
    ckpt = estimate(arch, base.replace(gradient_checkpointing=True))
    assert row(halved, "Activations").bytes < 0.6 * row(plan, "Activations").bytes
    # TRL generates the whole generation batch (batch × accumulation) at once: same KV cache
    assert row(halved, "Generation KV cache").bytes == row(plan, "Generation KV cache").bytes
    assert row(ckpt, "Activations (gradient").bytes < 0.2 * row(plan, "Activations (no").bytes
    seq = 256 + 512
    assert row(plan, "Generation KV cache").bytes == 4 * 28 * seq * 2 * 8 * 128 * 4
    lower_rank = estimate(arch, base.replace(lora_r=8))
    assert row(lower_rank, "LoRA parameters").bytes * 2 == row(plan, "LoRA parameters").bytes
    assert plan.total_bytes > ckpt.total_bytes
    assert plan.peak_phase == "training"


def test_large_vocabulary_logits_are_tiled_not_materialised() -> None:
    plan = estimate(
        PRESET_ARCHS["atomicgpt-gemma2-9b"],
        PlanSettings(per_device_train_batch_size=8, gradient_accumulation_steps=1, max_completion_length=1024, num_generations=8),
    )
    logits = row(plan, "Logits")
    full = mc.full_logits_bytes(PRESET_ARCHS["atomicgpt-gemma2-9b"], 8 * 1024)
    assert full > 7 * GIB and logits.bytes < full / 4
    assert "256000" in logits.note and "full float32 logits" in logits.note


def test_judge_on_the_same_gpu_adds_weights_and_its_own_phase() -> None:
    arch = PRESET_ARCHS["atomicgpt-gemma2-9b"]
    alone = estimate(arch, PlanSettings())
    judged = estimate(arch, PlanSettings(local_judge=JudgeSettings("qwen3-8b", quantize="4bit")))
    weights = row(judged, "Judge model weights").bytes
    counts = PRESET_ARCHS["qwen3-8b"].param_counts()
    assert weights == int(counts.linear * mc.NF4_BYTES_DOUBLE_QUANT) + counts.not_quantized * 2
    assert "judging" in judged.phase_totals and "judging" not in alone.phase_totals
    assert judged.total_bytes > alone.total_bytes + weights


def test_moe_holds_every_expert_and_says_so() -> None:
    plan = estimate(PRESET_ARCHS["gpt-oss-20b"], PlanSettings())
    assert row(plan, "Base weights, not quantised").bytes > 19e9 * 4  # fused experts are not nn.Linear
    assert any("active per token" in n for n in plan.notes)


def test_invalid_settings_are_refused_like_the_trainer_would() -> None:
    arch = PRESET_ARCHS["qwen3-0.6b"]
    with pytest.raises(PlanError, match="divisible by num_generations"):
        estimate(arch, PlanSettings(per_device_train_batch_size=1, gradient_accumulation_steps=1, num_generations=4))
    with pytest.raises(PlanError, match="keep LoRA on"):
        estimate(arch, PlanSettings(lora=False, quantize="4bit"))


def test_fixes_follow_the_checklist_order_and_end_fitting() -> None:
    arch = PRESET_ARCHS["atomicgpt-gemma2-9b"]
    settings = PlanSettings(
        per_device_train_batch_size=8,
        gradient_accumulation_steps=1,
        num_generations=4,
        max_completion_length=1024,
        gradient_checkpointing=False,
        local_judge=JudgeSettings("qwen3-8b"),
    )
    gpu = 24 * GIB
    assert not estimate(arch, settings).fits(gpu)
    fixes = suggest_fixes(arch, settings, gpu)
    assert fixes and fixes[-1][1].fits(gpu)
    assert all(not p.fits(gpu) for _, p in fixes[:-1])
    order = ["per-device batch", "LoRA rank", "max completion length", "gradient checkpointing", "4-bit"]
    positions = [next(i for i, key in enumerate(order) if key in desc) for desc, _ in fixes]
    assert positions == sorted(positions)
    totals = [p.total_bytes for _, p in fixes]
    assert totals == sorted(totals, reverse=True)
    final = fixes[-1][1].settings
    assert final.per_device_train_batch_size * final.gradient_accumulation_steps == 8  # the effective batch is kept
    assert estimate(arch, final).total_bytes == fixes[-1][1].total_bytes


def test_no_fixes_when_it_fits_and_an_honest_failure_when_nothing_helps() -> None:
    assert suggest_fixes(PRESET_ARCHS["qwen3-0.6b"], PlanSettings(), 80 * GIB) == []
    fixes = suggest_fixes(PRESET_ARCHS["gpt-oss-20b"], PlanSettings(), 24 * GIB)
    assert not fixes or not fixes[-1][1].fits(24 * GIB)


def test_warning_for_the_trainer_only_when_too_big() -> None:
    cfg = TrainConfig(
        model="qwen3-8b",
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=1024,
        gradient_checkpointing=False,
    )
    text = warn_if_too_big(cfg, 24 * GIB, resident_bytes=0)
    assert text is not None and "exceeds" in text and "24.00 GiB" in text and "Cheapest change" in text
    assert warn_if_too_big(cfg, 400 * GIB, resident_bytes=0) is None
    total = plan_for_train_config(cfg).total_bytes
    # memory already held by this process (model loaded before the check) counts as available to the run
    assert warn_if_too_big(cfg, total - GIB, resident_bytes=2 * GIB) is None


def test_train_config_resolution_matches_the_trainer_on_each_device() -> None:
    cfg = TrainConfig(model="tiny")
    cpu = plan_for_train_config(cfg, device="cpu")
    assert (cpu.settings.quantize, cpu.settings.optim, cpu.settings.gradient_checkpointing) == (
        "none",
        "adamw_torch",
        False,
    )
    assert cpu.settings.compute_dtype == "float32"
    assert not any(r.phase == "overhead" for r in cpu.rows)
    gpu = plan_for_train_config(cfg.replace(judge={"kind": "local", "model": "qwen3-0.6b"}))
    assert (gpu.settings.quantize, gpu.settings.optim, gpu.settings.gradient_checkpointing) == (
        "4bit",
        "paged_adamw_8bit",
        True,
    )
    assert gpu.settings.local_judge == JudgeSettings("qwen3-0.6b", "4bit", 8, 256)
    api = plan_for_train_config(cfg.replace(judge={"kind": "api", "model": "gpt-4o-mini"}))
    assert api.settings.local_judge is None  # an HTTP judge takes no GPU memory


def test_oom_advice_lists_the_checklist_in_order() -> None:
    keys = ["--per-device-batch", "--grad-accum", "--lora-r", "--max-completion-length"]
    positions = [OOM_ADVICE.index(k) for k in keys]
    assert positions == sorted(positions)
