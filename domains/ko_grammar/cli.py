"""What the pack adds to the command line: its BERTScore metric's options on ``eval`` and ``score``.

Kept apart from ``pack.py`` and free of heavy imports, so the command line can list it at start-up.
"""

from __future__ import annotations

from pathlib import Path

from evaluator.domains.base import MetricOption

METRIC_OPTIONS = (
    MetricOption(
        "bertscore_model",
        "--bertscore-model",
        Path,
        "Local encoder folder for the BERTScore metric (ko-grammar; skipped with a notice without it).",
    ),
    MetricOption(
        "bertscore_num_layers",
        "--bertscore-layers",
        int,
        "Encoder layer BERTScore reads (needs --bertscore-model; default: the model's last).",
    ),
)
