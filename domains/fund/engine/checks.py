"""Per-fund checks on a dates × funds NAV matrix, vectorised; messages are Korean (they go into reports).

A fund with a data error (a hole in its NAV history, a non-positive NAV, a calendar gap) is reported with
status ``error``; one that is fine but cannot be rated yet (stale, no NAV before the as-of date) is
``not_rated``. Checks only flag; they never drop a fund, so every fund still gets its report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.parameters import PARAMETERS

MAX_GAP_DAYS = PARAMETERS.max_gap_days
"""Longest calendar gap allowed between consecutive NAV dates (see :class:`EngineParameters`)."""


@dataclass
class FundFlags:
    """Reasons per fund column index; the engine turns them into report statuses."""

    errors: dict[int, list[str]] = field(default_factory=dict)
    not_rated: dict[int, list[str]] = field(default_factory=dict)
    warnings: dict[int, list[str]] = field(default_factory=dict)
    codes: dict[int, list[str]] = field(default_factory=dict)
    """Machine-readable reason codes (e.g. ``unadjusted_distribution``) beside the Korean reasons."""

    def warn(self, i: int, msg: str) -> None:
        self.warnings.setdefault(i, []).append(msg)

    def error(self, i: int, msg: str) -> None:
        self.errors.setdefault(i, []).append(msg)

    def skip(self, i: int, msg: str, code: str | None = None) -> None:
        self.not_rated.setdefault(i, []).append(msg)
        if code is not None:
            self.codes.setdefault(i, []).append(code)


@dataclass(frozen=True)
class Lifespan:
    """Where each fund's NAV starts and ends in the matrix (−1 when it has none)."""

    first: np.ndarray
    last: np.ndarray
    has_any: np.ndarray


def lifespans(nav: np.ndarray, present: np.ndarray | None = None) -> Lifespan:
    """First and last rows with a NAV per fund (``present``: ``np.isfinite(nav)``, if already computed).

    Most funds are priced on the matrix's first or last row; only the others are searched (an
    ``argmax`` down the rows of a row-major matrix copies it), with the same answer.
    """
    present = np.isfinite(nav) if present is None else present
    rows = nav.shape[0]
    has_any = present.any(axis=0)
    first = np.full(nav.shape[1], -1)
    last = np.full(nav.shape[1], -1)
    if rows:
        first[present[0]] = 0
        last[present[-1]] = rows - 1
    for out, search in ((first, present), (last, present[::-1])):
        todo = np.flatnonzero(has_any & (out < 0))
        if todo.size:
            hit = search[:, todo].argmax(axis=0)
            out[todo] = hit if search is present else rows - 1 - hit
    return Lifespan(first=first, last=last, has_any=has_any)


def _day(dates: pd.DatetimeIndex, row: int) -> str:
    return dates[row].strftime("%Y-%m-%d")


def check_matrix(nav: np.ndarray, dates: pd.DatetimeIndex, as_of: pd.Timestamp, flags: FundFlags) -> Lifespan:
    """Flag holes, non-positive NAVs, calendar gaps, stale and empty histories; return the lifespans.

    ``nav`` holds only the rows dated on or before ``as_of``; a fund must have a NAV on the last of them.
    """
    as_of_row = nav.shape[0] - 1
    present = np.isfinite(nav)
    span = lifespans(nav, present)
    holes = np.where(span.has_any, (span.last - span.first + 1) - present.sum(axis=0), 0)
    for i in np.flatnonzero(holes > 0):
        col = present[span.first[i] : span.last[i] + 1, i]
        first_missing = span.first[i] + int(np.argmin(col))
        flags.error(
            int(i),
            f"운용기간 중 {int(holes[i])}개 기준일에 기준가격이 없습니다 (첫 누락 {_day(dates, first_missing)})",
        )
    with np.errstate(invalid="ignore"):
        nonpos = nav <= 0
    for i in np.flatnonzero(nonpos.any(axis=0)):
        row = int(np.argmax(nonpos[:, i]))
        flags.error(int(i), f"0 이하의 기준가격 {nav[row, i]:g} ({_day(dates, row)})")
    gap_rows = (
        np.flatnonzero(np.diff(dates.to_numpy()).astype("timedelta64[D]").astype(int) > MAX_GAP_DAYS) + 1
    )
    for g in gap_rows:
        days = (dates[g] - dates[g - 1]).days
        for i in np.flatnonzero(span.has_any & (span.first < g) & (span.last >= g)):
            flags.error(
                int(i),
                f"기준일 사이에 {days}일 공백이 있습니다 ({_day(dates, g - 1)} ~ {_day(dates, g)}, 허용 {MAX_GAP_DAYS}일)",
            )
    day = as_of.strftime("%Y-%m-%d")
    for i in np.flatnonzero(~span.has_any):
        flags.skip(int(i), f"평가기준일 {day} 이전의 기준가격이 없습니다")
    for i in np.flatnonzero(span.has_any & (span.last < as_of_row)):
        flags.skip(
            int(i),
            f"마지막 기준가격이 {_day(dates, int(span.last[i]))}로 평가기준일 {day}의 최근 기준일보다 이릅니다",
        )
    return span
