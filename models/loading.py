"""Loading a student (or judge) model: presets, the offline ``tiny`` model, 4-bit NF4, devices, dtypes.

Names are looked up locally first (:mod:`evaluator.models.source`): a folder, then the Hugging Face
cache, and only then the hub, so an offline machine gets one clear message instead of a retrying traceback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from evaluator.domains.registry import corpus_fingerprint, pack_names, tokenizer_corpus
from evaluator.models.hardware import hardware_defaults
from evaluator.models.placement import cuda_device_map, sharded_launch
from evaluator.models.presets import resolve_preset
from evaluator.models.source import ModelNotAvailable, ModelSource, locate
from evaluator.models.tiny import DEMO_2L_SPEC, DEMO_SPEC, TinySpec, build_tiny

TINY_NAMES = {"tiny": TinySpec(), "tiny-demo": DEMO_SPEC, "tiny-demo-2l": DEMO_2L_SPEC}


def cache_dir() -> Path:
    """Where built models live: ``$EVALUATOR_CACHE`` or ``~/.cache/evaluator``."""
    return Path(os.environ.get("EVALUATOR_CACHE") or Path.home() / ".cache" / "evaluator")


def tiny_corpus(limit: int = 400) -> list[str]:
    """Text to train the tiny tokenizer on: every pack's synthetic data (offline, deterministic)."""
    return list(_corpus_and_key(tuple(pack_names_now()), limit)[0])


def pack_names_now() -> list[str]:
    return pack_names()


@cache
def _corpus_and_key(names: tuple[str, ...], limit: int = 400) -> tuple[tuple[str, ...], str]:
    """The packs' corpus and its fingerprint, computed once per process for a set of registered packs."""
    texts = tokenizer_corpus(limit)
    return tuple(texts), corpus_fingerprint(texts)


def tiny_dir(name: str) -> Path:
    """Where the cached tiny model ``name`` lives: the folder name carries the packs' corpus fingerprint."""
    return cache_dir() / "models" / f"{name}-{_corpus_and_key(tuple(pack_names_now()))[1]}"


def ensure_tiny(name: str = "tiny", out_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the folder of the named tiny model, building it on first use."""
    spec = TINY_NAMES[name]
    target = Path(out_dir) if out_dir else tiny_dir(name)
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return target
    return build_tiny(target, tiny_corpus(), spec)


def resolve_model_path(model: str) -> tuple[str, str | None]:
    """Map a preset, tiny name, hub id or local path to what ``from_pretrained`` takes, plus attention impl."""
    if model.lower() in TINY_NAMES:
        return str(ensure_tiny(model.lower())), None
    preset = resolve_preset(model)
    if preset:
        return preset.hub_id, preset.attn_implementation
    return model, None


def model_source(
    model: str, *, role: str = "model", flag: str = "--model", need: str = "config.json"
) -> tuple[ModelSource, str | None]:
    """Where to load ``model`` from (raising :class:`ModelNotAvailable` when nowhere), plus attention impl."""
    if model.lower() in TINY_NAMES:
        return ModelSource(name=model, path=str(ensure_tiny(model.lower()))), None
    preset = resolve_preset(model)
    if preset:
        return locate(model, preset.hub_id, role=role, flag=flag, need=need), preset.attn_implementation
    return locate(model, role=role, flag=flag, need=need), None


def _from_pretrained(loader: Any, src: ModelSource, role: str, **kwargs: Any) -> Any:
    """``loader.from_pretrained`` with the source's cache arguments; a load failure becomes one clear message."""
    try:
        return loader.from_pretrained(src.path, **src.load_kwargs(), **kwargs)
    except OSError as exc:
        where = f"its Hugging Face cache folder {src.path}" if src.cached else src.path
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelNotAvailable(f"could not load {role} {src.name} from {where}: {first}") from exc


@dataclass(frozen=True)
class Precision:
    """Resolved numeric setup for a device: what dtype to compute in and whether bf16/4-bit apply."""

    device: str
    dtype_name: str
    bf16: bool
    quantize_4bit: bool


def resolve_precision(quantize: str | None = None, device: str | None = None) -> Precision:
    """bf16 on GPUs that support it, fp32 on CPU; 4-bit by default only on CUDA."""
    import torch

    cuda = torch.cuda.is_available() and device != "cpu"
    hw = hardware_defaults("cuda" if cuda else "cpu", bf16_supported=cuda and torch.cuda.is_bf16_supported(),
                           quantize=quantize)
    return Precision(device=hw.device, dtype_name=hw.dtype_name, bf16=hw.bf16, quantize_4bit=hw.quantize == "4bit")


def bnb_config(compute_dtype_name: str) -> Any:
    """NF4 4-bit with double quantisation, the QLoRA recipe."""
    import torch
    from transformers import BitsAndBytesConfig

    dtype = getattr(torch, compute_dtype_name)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=dtype,
        # FSDP / ZeRO-3 shard the packed 4-bit weights only when they are stored in the compute dtype
        bnb_4bit_quant_storage=dtype if sharded_launch() else torch.uint8,
    )


def disable_cpu_4bit_repack(model: Any) -> int:
    """Work around the bitsandbytes AVX512-BF16 repack that corrupts LoRA gradients on CPU.

    On such CPUs a no-grad eval forward through ``Linear4bit`` repacks the weights, after which
    gradients are wrong. Turning the feature off per layer is harmless elsewhere. Returns layers touched.
    """
    try:
        import bitsandbytes as bnb
    except ImportError:
        return 0
    n = 0
    for module in model.modules():
        if isinstance(module, bnb.nn.Linear4bit) and hasattr(module, "support_avx512bf16_for_cpu"):
            module.support_avx512bf16_for_cpu = False
            n += 1
    return n


def load_tokenizer(model: str, *, role: str = "model", flag: str = "--model") -> Any:
    from transformers import AutoTokenizer

    src, _ = model_source(model, role=role, flag=flag, need="tokenizer_config.json")
    tok = _from_pretrained(AutoTokenizer, src, f"{role} tokenizer")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(model: str, *, quantize: str | None = None, device: str | None = None,
               for_training: bool = True, role: str = "model", flag: str = "--model") -> tuple[Any, Any, Precision]:
    """Load (model, tokenizer, precision). 4-bit models get the CPU repack workaround applied.

    ``role`` and ``flag`` name the model in messages ("judge model", "--init-from" …).
    """
    import torch
    from transformers import AutoModelForCausalLM

    precision = resolve_precision(quantize, device)
    src, attn = model_source(model, role=role, flag=flag)
    kwargs: dict[str, Any] = {"dtype": getattr(torch, precision.dtype_name)}
    if attn:
        kwargs["attn_implementation"] = attn
    if precision.quantize_4bit:
        kwargs["quantization_config"] = bnb_config(precision.dtype_name)
        kwargs["device_map"] = cuda_device_map() if precision.device == "cuda" else "cpu"
    elif precision.device == "cuda":
        kwargs["device_map"] = cuda_device_map()
    mdl = _from_pretrained(AutoModelForCausalLM, src, role, **kwargs)
    if precision.quantize_4bit:
        disable_cpu_4bit_repack(mdl)
    if for_training:
        mdl.train()
    tok = load_tokenizer(model, role=role, flag=flag)
    return mdl, tok, precision
