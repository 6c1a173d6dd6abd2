"""The fund pack's shared vocabulary, at the bottom of the pack so every room can use it and none points up.

``DataError`` is what every room raises for input it cannot use; ``Adjustments`` is what the data room reads
about distributions and the engine turns into total-return levels; the status words are what a fund's (or a
운용사's) evaluation ended in, written into every report, summary, history and database row.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["ERROR", "NOT_RATED", "OK", "Adjustments", "DataError"]

OK, NOT_RATED, ERROR = "ok", "not_rated", "error"
"""A fund's evaluation ends rated, not rated (a rule of the rubric) or in an error (its data)."""


class DataError(ValueError):
    """An input file cannot be used at all (unreadable, or a required column is missing)."""


@dataclass(frozen=True)
class Adjustments:
    """What the data says about distributions, as dates × funds tables (NaN where a fund has no value).

    ``adjusted``: 수정기준가격; ``distribution``: 분배금 per 1,000좌; ``rate``: 분배율 in %. A fund "has"
    a kind of information when any of its cells in that table holds a value (0 included).
    """

    adjusted: pd.DataFrame | None = None
    distribution: pd.DataFrame | None = None
    rate: pd.DataFrame | None = None

    def empty(self) -> bool:
        return all(t is None or t.empty for t in (self.adjusted, self.distribution, self.rate))
