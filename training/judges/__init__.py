"""LLM judges as GRPO reward functions: an on-prem model beside the student, or an OpenAI-compatible API."""

from evaluator.training.judges.config import JudgeConfigError, JudgeSpec
from evaluator.training.judges.reward import JudgeReward, build_judge_reward

__all__ = ["JudgeConfigError", "JudgeReward", "JudgeSpec", "build_judge_reward"]
