"""What one as-of date of a grade history decides before grading: errors, eligibility, what to measure.

:class:`~evaluator.domains.fund.history.prep.CrossDate` builds these; the history engine grades from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class DateFlags:
    """One as-of date: calendar row, which funds are errors / rated, and which have levels to measure."""

    row: int
    errored: np.ndarray
    eligible: np.ndarray
    measured: np.ndarray
    """Funds whose metrics come from the whole-file levels (own NAV on the date, no error)."""
    weights: np.ndarray
    """Funds × periods: the rubric's period weights for the fund's history."""
    redated: tuple[np.ndarray, np.ndarray] | None = None
    """Funds whose distributions are dated differently on the truncated data, and their levels then."""
