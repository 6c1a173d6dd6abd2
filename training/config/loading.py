"""Loading a run config (YAML file, then flags) through every check, and saving the resolved one with the run."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from evaluator.core.outputs import atomic_write_text
from evaluator.training.config.checks import check_types, coerce, validate
from evaluator.training.config.declaration import TrainConfig
from evaluator.training.config.errors import ConfigError


def load_config(
    path: str | Path | None = None, overrides: dict[str, Any] | None = None, cls: type[TrainConfig] = TrainConfig
) -> TrainConfig:
    """YAML file (optional) then non-None ``overrides``; unknown keys are an error, not a silent ignore.

    ``cls`` is the config class whose defaults fill the rest (``SFTRunConfig`` for ``evaluator sft``)."""
    data: dict[str, Any] = {}
    if path:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"config file {p} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p} is not valid YAML: {exc}") from exc
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p} must hold a mapping of config fields")
        data.update(loaded)
    typed = {k: v for k, v in (overrides or {}).items() if v is not None}
    if isinstance(data.get("trl"), dict) and isinstance(typed.get("trl"), dict):  # --trl keys over the YAML's
        typed["trl"] = {**data["trl"], **typed["trl"]}
    data.update(typed)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config field(s): {', '.join(unknown)}; known fields: {', '.join(sorted(known))}")
    problems = check_types(data, cls)
    if problems:
        where = f"{path}: " if path else ""
        raise ConfigError(where + "; ".join(problems))
    cfg = cls(**coerce(data, cls))
    validate(cfg)
    return cfg


def save_config(cfg: TrainConfig, path: str | Path, resolved: dict[str, Any] | None = None) -> None:
    """Write the resolved config (plus hardware decisions) as YAML, atomically."""
    doc = cfg.to_dict()
    if resolved:
        doc["resolved"] = resolved
    atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
