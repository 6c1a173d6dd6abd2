"""CPU check of the memory planner (no GPU needed): its estimate against what PyTorch really allocates.

Three measurements:

1. ``tiny`` and ``tiny-demo`` trained for 3 GRPO steps with the project's trainer on CPU. Measured: the peak
   of live PyTorch CPU tensor bytes over the whole ``train()`` call (torch profiler allocation events, summed
   in time order), compared with the plan's ``torch_allocated_bytes`` for the same config. The process peak
   RSS growth is printed too, but it is dominated by imports and allocator caching, not by tensors.
2. Per-layer activations at the real layer shapes of the presets: a 1-layer and a 2-layer random model are
   loaded through the real QLoRA path (NF4 + prepare_model_for_kbit_training + bf16 LoRA, bf16 autocast on CPU)
   and the bytes autograd saves are counted with saved-tensor hooks; their difference is one layer.
3. ``--calibrate`` re-fits the per-layer activation coefficients the planner ships
   (``memory_costs.ACTIVATION_COEFFS``) from random shapes and prints them beside the shipped values.

Run: ``.venv/bin/python benchmarks/plan_memory.py [--skip-slices] [--calibrate]``. The last line is the summary.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

MIB = 1024**2


def quiet() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def torch_peak_bytes(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``fn`` under the torch profiler; return its result and the peak of live CPU tensor bytes."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
    cpu = torch._C._autograd.DeviceType.CPU

    def is_cpu_alloc(e: Any) -> bool:
        try:  # a few recorded names are not valid UTF-8; they are not memory events
            return e.name() == "[memory]" and e.device_type() == cpu
        except UnicodeDecodeError:
            return False

    events = sorted(
        (e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events() if is_cpu_alloc(e)
    )
    live = peak = 0
    for _, nbytes in events:
        live += nbytes
        peak = max(peak, live)
    return result, peak


def rss_peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def reset_rss_peak() -> None:
    with contextlib.suppress(OSError):  # resets VmHWM (Linux); harmless where unsupported
        Path("/proc/self/clear_refs").write_text("5")


def measure_training(name: str, work: Path) -> tuple[int, int, int]:
    """(estimated torch bytes, measured peak torch bytes, RSS growth) for 3 GRPO steps of ``name`` on CPU."""
    from evaluator.training.config import TrainConfig
    from evaluator.training.grpo import train
    from evaluator.training.memory.plan import longest_prompt_tokens, plan_for_train_config

    cfg = TrainConfig(
        model=name,
        data="synthetic",
        limit=64,
        max_steps=3,
        max_completion_length=64,
        per_device_train_batch_size=4,
        num_generations=4,
        output_dir=str(work / name),
        save_steps=1000,
        logging_steps=1,
    )
    plan = plan_for_train_config(cfg, device="cpu", prompt_length=longest_prompt_tokens(cfg))
    reset_rss_peak()
    rss0 = rss_peak_kib()
    _, peak = torch_peak_bytes(lambda: train(cfg, progress=False))
    rss = (rss_peak_kib() - rss0) * 1024
    print(
        f"  {name}: prompt {plan.settings.prompt_length} + completion {plan.settings.max_completion_length} tokens, "
        f"batch {plan.settings.per_device_train_batch_size}"
    )
    for r in plan.rows:
        print(f"    {r.name:<40} {r.bytes / MIB:9.2f} MiB  {r.phase}")
    print(
        f"    estimate {plan.torch_allocated_bytes / MIB:.2f} MiB ({plan.peak_phase}) · measured torch peak "
        f"{peak / MIB:.2f} MiB · peak RSS growth {rss / MIB:.1f} MiB"
    )
    return plan.torch_allocated_bytes, peak, rss


def saved_bytes(model: Any, forward: Callable[[], Any], autocast: bool) -> int:
    """Bytes autograd saves for backward during ``forward`` (parameters excluded, each storage once)."""
    import torch

    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[tuple[int, int], int] = {}

    def pack(t: Any) -> Any:
        st = t.untyped_storage()
        if st.data_ptr() and st.data_ptr() not in params:
            seen[(st.data_ptr(), st.nbytes())] = st.nbytes()
        return t

    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else torch.autocast("cpu", enabled=False)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), ctx:
        forward()
    return sum(seen.values())


def build_layers(arch: Any, layers: int, regime: str, work: Path) -> Any:
    """A random ``layers``-layer model of ``arch``'s layer shape, wrapped as the trainer wraps it."""
    import dataclasses

    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM

    from evaluator.models.loading import bnb_config, disable_cpu_4bit_repack

    extra = dict(arch.extra)
    if "layer_types" in extra:
        extra["layer_types"] = ["full_attention"] * layers
    small = dataclasses.replace(arch, num_hidden_layers=layers, vocab_size=256, extra=extra)
    cfg = small.to_transformers_config()
    torch.manual_seed(0)
    attn = arch.attn_implementation
    if regime == "qlora":
        folder = work / f"{arch.name}-{layers}"
        AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16).save_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(
            folder,
            quantization_config=bnb_config("bfloat16"),
            dtype=torch.bfloat16,
            device_map="cpu",
            attn_implementation=attn,
        )
        disable_cpu_4bit_repack(model)
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    else:
        dtype = torch.float32 if regime.endswith("32") else torch.bfloat16
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=attn)
    if not regime.startswith("full"):
        model = get_peft_model(
            model,
            LoraConfig(
                r=16, lora_alpha=32, lora_dropout=0.05, target_modules="all-linear", task_type="CAUSAL_LM"
            ),
        )
        if regime == "qlora":  # as TRL does for quantised models
            for p in model.parameters():
                if p.requires_grad:
                    p.data = p.data.to(torch.bfloat16)
        model.enable_input_require_grads()
    model.train()
    return model


def layer_bytes_measured(arch: Any, regime: str, batch: int, seq: int, work: Path) -> float:
    """Saved bytes of one decoder layer: a 2-layer model minus a 1-layer model."""
    import torch

    out = []
    for layers in (1, 2):
        model = build_layers(arch, layers, regime, work)
        ids = torch.randint(0, 256, (batch, seq))
        out.append(
            saved_bytes(
                model,
                lambda m=model, i=ids: m(input_ids=i, use_cache=False),
                autocast=not regime.endswith("32"),
            )
        )
        del model
    return float(out[1] - out[0])


def measure_slices(names: list[str], work: Path) -> list[float]:
    from evaluator.training.memory import costs as mc
    from evaluator.training.memory.architectures import PRESET_ARCHS

    ratios = []
    batch, seq = 1, 256
    for name in names:
        arch = PRESET_ARCHS[name]
        t0 = time.perf_counter()
        measured = layer_bytes_measured(arch, "qlora", batch, seq, work)
        estimated = mc.layer_activation_bytes(arch, "qlora", batch * seq, seq)
        ratios.append(estimated / measured)
        print(
            f"  {name}: one layer, {batch}×{seq} tokens, QLoRA: estimate {estimated / MIB:.1f} MiB · measured "
            f"{measured / MIB:.1f} MiB · ratio {estimated / measured:.3f} ({time.perf_counter() - t0:.0f} s)"
        )
    return ratios


CAL_SHAPES = [
    (256, 768, 4, 2, 64),
    (512, 768, 4, 2, 64),
    (256, 1536, 4, 2, 64),
    (256, 768, 8, 2, 64),
    (256, 768, 4, 4, 64),
    (256, 768, 4, 2, 128),
    (384, 1024, 6, 2, 64),
]
CAL_BASE = {"dense": "qwen3-0.6b", "gemma2": "atomicgpt-gemma2-9b", "gpt_oss": "gpt-oss-20b"}


def calibrate(work: Path, families: list[str]) -> None:
    """Least-squares fit of the per-layer coefficients on random shapes, printed beside the shipped table."""
    import dataclasses

    import numpy as np

    from evaluator.training.memory import costs as mc
    from evaluator.training.memory.architectures import PRESET_ARCHS

    for fam in families:
        base = PRESET_ARCHS[CAL_BASE[fam]]
        moe = {"num_experts": 8, "experts_per_token": 4} if base.is_moe else {}
        for regime in ("qlora", "lora16", "lora32", "full16", "full32"):
            rows, ys = [], []
            for h, i, nh, nkv, hd in CAL_SHAPES:
                arch = dataclasses.replace(
                    base,
                    hidden_size=h,
                    intermediate_size=i,
                    num_attention_heads=nh,
                    num_key_value_heads=nkv,
                    head_dim=hd,
                    **moe,
                )
                for batch, seq in ((2, 64), (1, 192)):
                    ys.append(layer_bytes_measured(arch, regime, batch, seq, work) / (batch * seq))
                    rows.append([h, mc.ffn_width(arch), nh * hd, nkv * hd, nh * seq])
            x, y = np.array(rows, float), np.array(ys)
            cols = [0, 1, 2, 3] + ([4] if base.attn_implementation == "eager" else [])
            coef = np.zeros(5)
            coef[cols] = np.linalg.lstsq(x[:, cols], y, rcond=None)[0]
            resid = float(np.max(np.abs(x @ coef - y) / y))
            shipped = mc.ACTIVATION_COEFFS[(fam, regime)]
            print(
                f"  ({fam!r}, {regime!r}): fitted ({', '.join(f'{c:.2f}' for c in coef)}) · shipped "
                f"{shipped} · max residual {resid:.3%}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--skip-slices", action="store_true", help="skip the per-layer checks at preset shapes"
    )
    parser.add_argument(
        "--calibrate",
        nargs="*",
        choices=sorted(CAL_BASE),
        default=None,
        help="re-fit activation coefficients for these families (all when none named)",
    )
    args = parser.parse_args()
    quiet()
    import torch

    torch.set_num_threads(min(4, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ.setdefault("EVALUATOR_CACHE", str(work / "cache"))
        if args.calibrate is not None:
            print("Calibration of per-layer activation coefficients (bytes per token per layer):")
            calibrate(work, args.calibrate or sorted(CAL_BASE))
            print("plan_memory calibrate: done")
            return
        print("1. GRPO on CPU with the project's trainer, 3 steps:")
        results = {name: measure_training(name, work) for name in ("tiny", "tiny-demo")}
        ratios: list[float] = []
        if not args.skip_slices:
            print("2. One decoder layer at real preset shapes (saved-for-backward bytes):")
            ratios = measure_slices(["qwen3-0.6b", "qwen3-8b", "atomicgpt-gemma2-9b"], work)
    parts = [
        f"{n} estimate {e / MIB:.1f} MiB vs measured {m / MIB:.1f} MiB ({(e - m) / m:+.0%})"
        for n, (e, m, _) in results.items()
    ]
    if ratios:
        parts.append(f"layer slices estimate/measured {min(ratios):.2f}–{max(ratios):.2f}")
    print("plan_memory summary: " + "; ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
