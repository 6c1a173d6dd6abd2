"""The run configuration: its declaration, its two errors, the checks every value passes, loading and saving.

Modules inside this package import each other directly (``errors`` at the bottom, then ``declaration``,
``scale``, ``checks``, ``loading``); everything else imports the names below from the package.
"""

from __future__ import annotations

from evaluator.training.config.checks import check_types, coerce, validate
from evaluator.training.config.declaration import (
    SFT_DEFAULT_LR,
    TRL_FAMILIES,
    SFTRunConfig,
    TrainConfig,
    field_kinds,
    report_to,
    trl_kwargs,
    trl_names,
)
from evaluator.training.config.errors import ConfigError, TrainingError
from evaluator.training.config.loading import load_config, save_config

__all__ = [
    "SFT_DEFAULT_LR", "TRL_FAMILIES", "ConfigError", "SFTRunConfig", "TrainConfig", "TrainingError", "check_types",
    "coerce", "field_kinds", "load_config", "report_to", "save_config", "trl_kwargs", "trl_names", "validate",
]  # fmt: skip
