"""How the grade-history tests compare a history cell with a single-date result: one rule for all of them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def cell(v: object) -> object:
    """A table cell as a plain Python value: None for missing (None, NaN, NA), numpy scalars unwrapped."""
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    return v.item() if isinstance(v, np.integer | np.floating) else v


def same(a: object, b: object) -> bool:
    """Equal, floats to 1e-9 relative (1e-12 absolute near 0), and None only with None."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b
