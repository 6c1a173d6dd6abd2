"""The two errors a run reports to its user, at the bottom of the training floor so every module can raise them."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config file or override is not understood."""


class TrainingError(RuntimeError):
    """A run cannot start or continue; the message says what to change."""
