"""Grade histories (every month-end in one pass) and their backtests.

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.history.backtest import backtest
from evaluator.domains.fund.history.backtest_plot import PNG_NAMES, looks_like_backtest, plan_backtest
from evaluator.domains.fund.history.io import LATEST, SUMMARY, write_history
from evaluator.domains.fund.history.run import History, as_of_dates, parse_month, run_history

__all__ = [
    "LATEST",
    "PNG_NAMES",
    "SUMMARY",
    "History",
    "as_of_dates",
    "backtest",
    "looks_like_backtest",
    "parse_month",
    "plan_backtest",
    "run_history",
    "write_history",
]
