"""Config checks for the scale-out options (several processes, vLLM), kept beside their own modules."""

from __future__ import annotations

from evaluator.training.config import TrainConfig


def validate_scale(cfg: TrainConfig) -> None:
    from evaluator.training.launch import validate_launch
    from evaluator.training.vllm_options import validate_vllm

    validate_launch(cfg)
    validate_vllm(cfg)
