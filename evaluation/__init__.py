"""The evaluation harness: generate in batches, grade with the pack's own grader, report, compare.

Public entry points: :func:`~evaluator.evaluation.harness.evaluate`,
:class:`~evaluator.evaluation.backends.hf.Generator`, :func:`~evaluator.evaluation.scoring.score_rows`,
:func:`~evaluator.evaluation.predictions.score_predictions` and
:func:`~evaluator.evaluation.compare.compare_reports`.
"""
