"""운용사 ratings: asset managers rated from their funds' scores and the analysts' qualitative pillars.

What other rooms, the pack's top level and the application may use; the modules inside are this room's own.
"""

from evaluator.domains.fund.companies.document import pillar_verdicts, type_verdicts
from evaluator.domains.fund.companies.history import company_history_for
from evaluator.domains.fund.companies.service import rate_folder, write_companies

__all__ = [
    "company_history_for",
    "pillar_verdicts",
    "rate_folder",
    "type_verdicts",
    "write_companies",
]
