"""The engine's tuning constants, declared once: the single-date engine and the history engine read the same
object, so a history stays bit-for-bit equal to evaluating each of its dates on its own.

Changing one of these changes grades; they are not options, and no command exposes them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineParameters:
    """Calendar, annualisation and reset-detection constants (see ``domains/fund/README.md``)."""

    trading_days: int = 252
    """Trading days a year: daily figures are annualised with it."""
    mrar_gamma: float = 2.0
    """Risk aversion of Morningstar's risk-adjusted return (MRAR)."""
    fill_limit: int = 3
    """Most consecutive market dates a fund's last NAV is carried over (a long holiday is a gap, not a fill)."""
    max_gap_days: int = 10
    """Longest calendar gap allowed between consecutive NAV dates (Korean holidays such as 추석 span ~5–7 days)."""
    reset_min_drop: float = 0.01
    """Smallest unexplained one-day drop read as a 결산 reset (1 %)."""
    reset_z_drop: float = 6.0
    """…and at least this many standard deviations of the fund's ordinary (non-candidate) excess returns."""
    reset_landing: float = 0.03
    """A reset lands within 3 % of the base."""
    reset_stride: int = 3
    """Beta and spread are estimated on every third day."""
    reset_wide: float = 0.10
    """First, cheap pass: NAVs within 10 % of the base."""
    reset_base: float = 1000.0
    """The NAV a 결산 resets to."""
    reset_prefilter: float = -0.005
    """First, cheap pass: a one-day return at most this (−0.5 %) before the detector's own tests."""


PARAMETERS = EngineParameters()
"""The one set of constants every engine runs with."""
