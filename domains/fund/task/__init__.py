"""The fund pack's model task: prompts, the dataset, the grader, rewards, reference answers, model runs.

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.task.answer import extract_grade, read_answer, scale_problems
from evaluator.domains.fund.task.dataset import SPLITS, load_rows
from evaluator.domains.fund.task.grading import METRICS, fund_score
from evaluator.domains.fund.task.model_eval import add_model_to_summary, fund_rows, model_evaluations
from evaluator.domains.fund.task.prompts import SYSTEM_PROMPT
from evaluator.domains.fund.task.reference import reference_json
from evaluator.domains.fund.task.rewards import build_reward_functions, gold_grade, load_facts, scale_grades

__all__ = [
    "METRICS",
    "SPLITS",
    "SYSTEM_PROMPT",
    "add_model_to_summary",
    "build_reward_functions",
    "extract_grade",
    "fund_rows",
    "fund_score",
    "gold_grade",
    "load_facts",
    "load_rows",
    "model_evaluations",
    "read_answer",
    "reference_json",
    "scale_grades",
    "scale_problems",
]
