"""Report folders: per-fund reports, summaries, data checks, plots, and the NAV series file (named here,
read by storage).

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.reports.batch import SERIES_FILE, BatchOutcome, write_reports
from evaluator.domains.fund.reports.data_checks import console_line, data_checks
from evaluator.domains.fund.reports.plots import label, looks_like_batch, plan_fund_batch
from evaluator.domains.fund.reports.report import (
    build_report,
    grade_distribution,
    report_schema,
    scale_problems,
    summary_schema,
)

__all__ = [
    "SERIES_FILE",
    "BatchOutcome",
    "build_report",
    "console_line",
    "data_checks",
    "grade_distribution",
    "label",
    "looks_like_batch",
    "plan_fund_batch",
    "report_schema",
    "scale_problems",
    "summary_schema",
    "write_reports",
]
