"""What GRPO and SFT runs share: output folder rules, model + LoRA/QLoRA setup, precision, optimizer choice.

Kept in one place so ``evaluator sft`` and ``evaluator train`` can never drift apart on how a model is
loaded, quantised or wrapped with an adapter.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.outputs import OutputExistsError, dumps
from evaluator.models.hardware import hardware_defaults
from evaluator.models.loading import Precision, load_model, model_source, resolve_precision
from evaluator.training.config import TrainConfig, TrainingError, report_to, trl_kwargs
from evaluator.training.trl_fields import checked_overrides

CHECKPOINT_PREFIX = "checkpoint-"


def prepare_run_dir(cfg: TrainConfig) -> Path:
    """Create the output folder; refuse to mix a new run into an old one unless resuming or forced."""
    out = Path(cfg.output_dir)
    if cfg.resume:
        if last_checkpoint(out) is None:
            raise TrainingError(f"--resume: no {CHECKPOINT_PREFIX}N folder in {out} to continue from")
        return out
    if out.exists() and any(out.iterdir()) and not cfg.force:
        raise OutputExistsError(
            f"{out} already holds a run; pass --resume to continue it or --force to start over in it"
        )
    if out.is_dir() and cfg.force:
        clear_run_outputs(out, cfg)
    out.mkdir(parents=True, exist_ok=True)
    return out


RUN_OUTPUTS = ("README.md", "metrics.jsonl", "completions.jsonl", "run_config.yaml", "run_summary.json", "final", "best_adapter",
               "judge_evaluations.jsonl", "grpo_audit.jsonl", "eval", "plots", "runs")
"""What a run writes into its folder (with ``checkpoint-N`` and the ``*.before-resume`` files)."""


def is_run_output(name: str) -> bool:
    stem = name.split(".before-resume")[0]
    return stem in RUN_OUTPUTS or name.startswith(CHECKPOINT_PREFIX)


def clear_run_outputs(out: Path, cfg: TrainConfig) -> None:
    """``--force``: remove the earlier run's outputs first, so no old checkpoint, metric row or best adapter
    is ever read as this run's (a later ``--resume`` would otherwise continue the old run's checkpoint).
    Other files (an experiment job's spec and log) stay; a start model inside the folder is refused."""
    if cfg.init_from and Path(out).resolve() in Path(cfg.init_from).resolve().parents:
        raise TrainingError(f"--init-from {cfg.init_from} lies inside {out}, which --force would clear")
    for entry in out.iterdir():
        if is_run_output(entry.name):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def last_checkpoint(out: Path) -> Path | None:
    """The highest-numbered complete checkpoint folder, or None."""
    if not out.is_dir():
        return None
    found = []
    for p in out.iterdir():
        suffix = p.name[len(CHECKPOINT_PREFIX) :]
        if p.name.startswith(CHECKPOINT_PREFIX) and suffix.isdigit() and (p / "trainer_state.json").exists():
            found.append((int(suffix), p))
    return max(found)[1] if found else None


@dataclass
class LoadedPolicy:
    model: Any
    tokenizer: Any
    precision: Precision
    optim: str
    gradient_checkpointing: bool

    def resolved(self) -> dict[str, Any]:
        return {
            "device": self.precision.device,
            "dtype": self.precision.dtype_name,
            "bf16": self.precision.bf16,
            "quantize": "4bit" if self.precision.quantize_4bit else "none",
            "optim": self.optim,
            "gradient_checkpointing": self.gradient_checkpointing,
        }


def full_model_dir(path: Path) -> Path | None:
    """A run folder or model folder holding full weights (not an adapter), e.g. a full fine-tune's ``final/``."""
    for candidate in (path, path / "final"):
        if (candidate / "config.json").exists() and not (candidate / "adapter_config.json").exists():
            return candidate
    return None


def starting_model(cfg: TrainConfig) -> tuple[str, TrainConfig, str, str]:
    """(model to load, config, its role and flag for messages): ``init_from`` full weights replace ``model``.

    Checks only what is on disk or reachable (no weights are read), so a run can refuse early.
    """
    base, role, flag = cfg.model, "model", "--model"
    if cfg.init_from:
        start = Path(cfg.init_from).expanduser()
        if not start.is_dir():
            raise TrainingError(
                f"--init-from folder {cfg.init_from} does not exist (looked for {start.absolute()}); pass the "
                "output folder of an `evaluator sft` or `evaluator train` run, or its final/"
            )
        if (full := full_model_dir(start)) is not None:
            base, cfg, role, flag = str(full), cfg.replace(init_from=None), "--init-from model", "--init-from"
    return base, cfg, role, flag


_FOUND_MODELS: set[str] = set()
"""Models this process has already located: the CLI checks before importing TRL, the trainer again for library
callers, and the lookup (a hub probe for a remote id) runs once."""


def check_model_available(cfg: TrainConfig) -> None:
    """Fail within seconds, before a run folder or dataset is made, when the model cannot be loaded here."""
    check_trackers(cfg)
    base, _, role, flag = starting_model(cfg)
    if base not in _FOUND_MODELS:
        model_source(base, role=role, flag=flag)
        _FOUND_MODELS.add(base)


def load_policy(cfg: TrainConfig) -> LoadedPolicy:
    """Load the student with the run's precision, then wrap it with a (new or initial) LoRA adapter.

    ``init_from`` may name an adapter (continued as the trainable adapter) or a full fine-tune's weights
    (loaded as the starting model instead of ``model``).
    """
    base, cfg, role, flag = starting_model(cfg)
    model, tokenizer, precision = load_model(base, quantize=cfg.quantize, for_training=True, role=role, flag=flag)
    planned = planned_policy(cfg, precision)
    gc, optim = planned.gradient_checkpointing, planned.optim
    if precision.quantize_4bit:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gc)
    if cfg.lora:
        model = _with_adapter(model, cfg)
    elif cfg.init_from:
        raise TrainingError(f"--init-from {cfg.init_from} is a LoRA adapter; continuing it needs LoRA on")
    model.train()
    return LoadedPolicy(model, tokenizer, precision, optim, gc)


def planned_policy(cfg: TrainConfig, precision: Precision | None = None) -> LoadedPolicy:
    """The policy's settings (device, precision, optimizer, checkpointing) decided without loading a weight,
    so the whole TRL config can be built and checked before anything loads. Model and tokenizer are None."""
    precision = precision or resolve_precision(cfg.quantize)
    hw = hardware_defaults(precision.device, optim=cfg.optim, gradient_checkpointing=cfg.gradient_checkpointing)
    return LoadedPolicy(None, None, precision, hw.optim, hw.gradient_checkpointing)


def _with_adapter(model: Any, cfg: TrainConfig) -> Any:
    from peft import LoraConfig, PeftModel, get_peft_model

    if cfg.init_from:
        src = adapter_dir(Path(cfg.init_from))
        return PeftModel.from_pretrained(model, str(src), is_trainable=True)
    import torch

    torch.manual_seed(cfg.seed)  # the adapter's random start follows the run's seed: one seed, one run
    lora = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=cfg.lora_target,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)


TRACKER_MODULES = {"tensorboard": "tensorboard", "wandb": "wandb", "trackio": "trackio"}


def check_trackers(cfg: TrainConfig) -> None:
    """A tracker whose package is missing fails now with the install line, not as a traceback inside TRL."""
    import importlib.util

    missing = [t for t in cfg.report_to or [] if t in TRACKER_MODULES and not importlib.util.find_spec(TRACKER_MODULES[t])]
    if missing:
        raise TrainingError(
            f"--report-to {','.join(missing)}: not installed here; `pip install {' '.join(missing)}` "
            "(tensorboard also comes with `pip install evaluator[tracking]`) or drop it"
        )


def trainer_kwargs(cfg: TrainConfig, out: Path, policy: LoadedPolicy, target: type, trainer: str) -> dict[str, Any]:
    """TRL config arguments: the declared fields (:func:`trl_kwargs`) plus what the run derives (paths,
    precision, optimizer, trackers), shared by GRPO and SFT."""
    p = policy.precision
    return {
        **checked_overrides(cfg, trainer),  # the run's `trl:` mapping, under everything the project declares
        **trl_kwargs(cfg, target, trainer),
        "output_dir": str(out),
        "save_strategy": "steps",
        "bf16": p.bf16,
        "fp16": False,
        "use_cpu": p.device == "cpu",
        "gradient_checkpointing": policy.gradient_checkpointing,
        "optim": policy.optim,
        "report_to": report_to(cfg),
        "run_name": cfg.run_name or out.name,
        "disable_tqdm": True,
    }


def adapter_dir(path: Path) -> Path:
    """Accept a run folder (uses its ``final/``) or an adapter folder itself."""
    if (path / "adapter_config.json").exists():
        return path
    if (path / "final" / "adapter_config.json").exists():
        return path / "final"
    raise TrainingError(f"{path} holds no LoRA adapter (adapter_config.json), nor a run with final/")


def save_model_atomically(
    model: Any,
    tokenizer: Any,
    target: Path,
    extra: dict[str, Any] | None = None,
    extra_name: str = "info.json",
    readme_note: str | None = None,
) -> None:
    """Save an adapter (or model) into a temp sibling, then swap it in, so a crash never leaves half of one."""
    tmp = target.with_name(f".{target.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(tmp)
    if tokenizer is not None:
        tokenizer.save_pretrained(tmp)
    if extra is not None:
        (tmp / extra_name).write_text(dumps(extra, indent=2) + "\n", encoding="utf-8")
    if readme_note is not None:  # the folder's model card says how these weights were chosen
        card = tmp / "README.md"
        head = card.read_text(encoding="utf-8") if card.exists() else ""
        card.write_text(f"{head}\n{readme_note}\n", encoding="utf-8")
    old = target.with_name(f".{target.name}.old")
    if target.exists():
        if old.exists():
            shutil.rmtree(old)
        target.rename(old)
    tmp.rename(target)
    if old.exists():
        shutil.rmtree(old)
