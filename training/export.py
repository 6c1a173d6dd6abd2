"""``evaluator export``: merge a run's LoRA adapter into its base model and save a standard HF folder.

PEFT's ``merge_and_unload`` does the merge. The base is loaded unquantised (bf16 or fp32), because a merge
into NF4 weights would round the adapter away; the README written beside the weights says so.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from evaluator.core.outputs import OutputExistsError
from evaluator.models.loading import _from_pretrained, load_tokenizer, model_source
from evaluator.models.source import offline_requested
from evaluator.training.config import TrainingError
from evaluator.training.run_setup import full_model_dir

DTYPES = {"bf16": "bfloat16", "fp32": "float32"}
ADAPTERS = {"final": "final", "best": "best_adapter"}


class ExportError(TrainingError):
    """The run cannot be exported as asked; the message says why."""


def run_adapter(run_dir: Path, which: str) -> Path:
    if which not in ADAPTERS:
        raise ExportError(f"--adapter must be final or best, not {which!r}")
    if not run_dir.is_dir():
        raise ExportError(f"run folder {run_dir} does not exist")
    adapter = run_dir / ADAPTERS[which]
    if not (adapter / "adapter_config.json").is_file():
        if (adapter / "config.json").is_file():
            raise ExportError(f"{adapter} holds full weights (a --no-lora run): it is already a model, nothing to merge")
        raise ExportError(f"{run_dir} has no {which} LoRA adapter ({adapter}/adapter_config.json is missing)")
    return adapter


def base_model_of(run_dir: Path, adapter: Path) -> str:
    """The model the adapter was trained on: the run's ``init_from`` full weights, else its ``model``."""
    cfg_file = run_dir / "run_config.yaml"
    if cfg_file.is_file():
        doc = yaml.safe_load(cfg_file.read_text(encoding="utf-8")) or {}
        init = doc.get("init_from")
        if init and (full := full_model_dir(Path(init).expanduser())) is not None:
            return str(full)  # the run started from full fine-tuned weights (e.g. an SFT run)
        if doc.get("model"):
            return str(doc["model"])
    base = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8")).get("base_model_name_or_path")
    if not base:
        raise ExportError(f"{run_dir} names no base model (no run_config.yaml, no base_model_name_or_path)")
    return str(base)


def readme_text(base: str, adapter: Path, dtype: str, quantized: bool) -> str:
    trained = "NF4 4-bit (QLoRA)" if quantized else "unquantised"
    return (
        f"# Merged model\n\n"
        f"- Base model: `{base}`\n- Adapter: `{adapter}`\n- Saved dtype: {dtype}\n"
        f"- The adapter was trained against the {trained} base.\n\n"
        "The LoRA adapter was merged into the base weights with PEFT `merge_and_unload`. "
        "A merged full-precision model is not the NF4 model the adapter was trained against: a QLoRA adapter "
        "learned its corrections on top of 4-bit-rounded weights, so the merged model's outputs can differ "
        "slightly from those seen in training. Evaluate the merged model before shipping it "
        "(`evaluator evaluate --model <this folder>`).\n"
    )


def merge_run(run_dir: Path, out: Path, *, adapter: str = "final", dtype: str = "fp32", force: bool = False) -> dict[str, Any]:
    """Merge and save; returns what was written. Nothing in ``out`` is replaced without ``force``."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    if dtype not in DTYPES:
        raise ExportError(f"--dtype must be bf16 or fp32, not {dtype!r}")
    adapter_path = run_adapter(run_dir, adapter)
    if out.exists() and any(out.iterdir()) and not force:
        raise OutputExistsError(f"{out} is not empty; pass --force to replace it")
    if out.resolve() == run_dir.resolve() or run_dir.resolve() in out.resolve().parents:
        raise ExportError(f"--out {out} lies inside the run folder {run_dir}; choose a folder outside it")
    base = base_model_of(run_dir, adapter_path)
    src, _ = model_source(base, role="base model", flag="run_config.yaml model")
    model = _from_pretrained(AutoModelForCausalLM, src, "base model", dtype=getattr(torch, DTYPES[dtype]))
    merged = PeftModel.from_pretrained(model, str(adapter_path)).merge_and_unload()
    tokenizer = load_tokenizer(str(adapter_path)) if (adapter_path / "tokenizer_config.json").is_file() else (
        load_tokenizer(base, role="base model")
    )
    quantized = _trained_4bit(run_dir)
    tmp = out.with_name(f".{out.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    merged.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / "README.md").write_text(readme_text(base, adapter_path, DTYPES[dtype], quantized), encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(out)
    return {"out": str(out), "base": base, "adapter": str(adapter_path), "dtype": DTYPES[dtype],
            "trained_4bit": quantized, "chat_template": getattr(tokenizer, "chat_template", None) is not None}


def _trained_4bit(run_dir: Path) -> bool:
    cfg_file = run_dir / "run_config.yaml"
    if not cfg_file.is_file():
        return False
    doc = yaml.safe_load(cfg_file.read_text(encoding="utf-8")) or {}
    return (doc.get("resolved") or {}).get("quantize") == "4bit"


def check_push(repo: str) -> None:
    """Before merging: refuse an upload that cannot happen (offline, no token, malformed repo id)."""
    parts = repo.split("/")
    if len(parts) != 2 or not all(parts) or any(c.isspace() for c in repo):
        raise ExportError(f"--push-to-hub expects a hub repo id like user/name, not {repo!r}")
    if offline_requested():
        raise ExportError(
            f"--push-to-hub {repo}: HF_HUB_OFFLINE is set, so nothing can be uploaded from here. Export without "
            "--push-to-hub, then on a machine with network access run `hf upload <repo> <folder>`"
        )
    if not (os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")):
        raise ExportError(f"--push-to-hub {repo}: set HF_TOKEN in the environment (a write token) first")


def push_folder(folder: Path, repo: str) -> str:
    """Upload the exported folder (after :func:`check_push`)."""
    check_push(repo)
    from huggingface_hub import HfApi

    try:
        api = HfApi()
        api.create_repo(repo, exist_ok=True, private=True)
        api.upload_folder(folder_path=str(folder), repo_id=repo)
    except Exception as exc:  # network and auth errors become one line
        raise ExportError(f"--push-to-hub {repo} failed: {type(exc).__name__}: {str(exc).splitlines()[0]}") from exc
    return f"https://huggingface.co/{repo}"
