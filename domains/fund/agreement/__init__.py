"""Agreement between the engine's grades and analysts' (expert) grades.

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.agreement.io import parse_date, read_experts
from evaluator.domains.fund.agreement.plot import by_type_figure, confusion_figure
from evaluator.domains.fund.agreement.report import agreement_schema, build_agreement, csv_rows, fund_rows
from evaluator.domains.fund.agreement.reports import read_batch

__all__ = [
    "agreement_schema",
    "build_agreement",
    "by_type_figure",
    "confusion_figure",
    "csv_rows",
    "fund_rows",
    "parse_date",
    "read_batch",
    "read_experts",
]
