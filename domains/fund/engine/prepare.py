"""From the loaded NAV matrix to what the metrics use: total-return levels on one market calendar.

The engine calls :func:`prepare` before its checks and :func:`flag_unadjusted` before its metrics; both
only flag funds (Korean reasons) and never drop one. Rules: :mod:`evaluator.domains.fund.engine.calendar`,
:mod:`evaluator.domains.fund.engine.total_return` and :mod:`evaluator.domains.fund.engine.resets`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.calendar import FILL_LIMIT, market_calendar, sample
from evaluator.domains.fund.engine.checks import FundFlags
from evaluator.domains.fund.engine.resets import describe, detect_resets
from evaluator.domains.fund.engine.total_return import Levels, levels_for
from evaluator.domains.fund.types import Adjustments

UNADJUSTED = "unadjusted_distribution"


@dataclass
class Prepared:
    """Total-return levels on the market calendar, up to the as-of date (``nav`` is the same array: a
    fund without adjustment information keeps its 기준가격, which is what the checks and the reset
    detector read; the others' levels are positive exactly when their 기준가격 is)."""

    nav: np.ndarray
    levels: np.ndarray
    dates: pd.DatetimeIndex
    source: np.ndarray
    info: dict[str, Any]


BLOCK = 128
"""Fund columns copied per step by :func:`fund_matrix` from a column-major frame (stays in cache)."""
ROWS = 8
"""Dates copied per step from a row-major frame."""


def fund_matrix(frame: pd.DataFrame, codes: list[str]) -> np.ndarray:
    """A new dates × ``codes`` float matrix in row-major (C) order, NaN for a code ``frame`` lacks.

    Every later stage reads the matrix a row of dates at a time (returns, windows, drawdowns), and on a
    column-major copy — what pandas hands back for most frames — the metrics alone take about half as
    long again. Copying a block of columns at a time makes the transpose cheaper than pandas' own copy;
    a row-major frame is copied a few whole rows at a time (gathering columns from it would touch every
    cache line once per column block).
    """
    values = frame.to_numpy(dtype=float)
    where = frame.columns if frame.columns.inferred_type == "string" else frame.columns.map(str)
    if not where.is_unique:  # let pandas raise its own error, as before
        frame.set_axis(where, axis=1).reindex(columns=codes)
    pos = where.get_indexer(codes)
    if values.shape[1] == 0:
        return np.full((values.shape[0], len(codes)), np.nan)
    nav = np.empty((values.shape[0], len(codes)))
    if values.flags.f_contiguous and not values.flags.c_contiguous:  # column-major: a block of columns
        for lo in range(0, len(codes), BLOCK):
            idx = pos[lo : lo + BLOCK]
            nav[:, lo : lo + idx.size] = values[:, idx]
    else:  # row-major already: whole rows, a few at a time
        for lo in range(0, values.shape[0], ROWS):
            np.take(values[lo : lo + ROWS], pos, axis=1, out=nav[lo : lo + ROWS])
    nav[:, pos < 0] = np.nan
    return nav


def prepare(
    navs: pd.DataFrame,
    codes: list[str],
    as_of: pd.Timestamp | None,
    flags: FundFlags,
    *,
    benchmark: Any = None,
    adjustments: Adjustments | None = None,
    calendar: pd.DatetimeIndex | None = None,
    groups: np.ndarray | None = None,
    matrix: np.ndarray | None = None,
) -> Prepared:
    """Levels per fund from its best information, sampled onto the market calendar (rows ≤ ``as_of``, if given).

    ``matrix``: :func:`fund_matrix` of those rows already built by the caller (a grade history); it is
    copied, not rebuilt, when its shape fits.
    """
    frame = navs if as_of is None else navs.loc[:as_of]
    if matrix is not None and matrix.shape == (len(frame.index), len(codes)):
        nav = np.array(matrix, dtype=float, order="C")
    else:
        nav = fund_matrix(frame, codes)
    dates = pd.DatetimeIndex(frame.index)
    cal, rule = market_calendar(nav, dates, calendar)
    if len(cal) == 0:
        cal, rule = dates, "union"
    built = levels_for(nav, dates, codes, adjustments, groups, inplace=True)  # nav now holds the levels
    check_adjusted(built, dates, flags)
    nav_s = sample(built.levels, dates, cal)
    levels = nav_s.values
    for i in np.flatnonzero(nav_s.dropped):
        flags.warn(
            int(i),
            f"시장 기준일이 아닌 {int(nav_s.dropped[i])}개 날짜(주말·휴일)의 기준가격은 시장 기준일에 맞춰 제외했습니다",
        )
    for i in np.flatnonzero(nav_s.filled):
        flags.warn(
            int(i),
            f"시장 기준일 {int(nav_s.filled[i])}개에 기준가격이 없어 직전 기준가격을 이어 썼습니다 (연속 {FILL_LIMIT}일까지)",
        )
    for i in np.flatnonzero(built.realigned):
        flags.warn(
            int(i),
            "분배금이 결산일(분배락 전일)에 기재되어 있어 분배락일로 한 행 옮겨 총수익률을 계산했습니다",
        )
    info = {"calendar": rule, "calendar_dates": len(cal), "fill_limit": FILL_LIMIT}
    return Prepared(nav=levels, levels=levels, dates=cal, source=built.source, info=info)


def check_adjusted(built: Levels, dates: pd.DatetimeIndex, flags: FundFlags) -> None:
    """An adjusted column must cover every NAV date of its fund and stay above 0."""
    for i in np.flatnonzero(built.missing_adjusted):
        flags.error(
            int(i), f"수정기준가격이 기준가격이 있는 {int(built.missing_adjusted[i])}개 기준일에 없습니다"
        )
    for i in np.flatnonzero(built.source == "adjusted"):
        with np.errstate(invalid="ignore"):
            bad = built.levels[:, i] <= 0
        if bad.any():
            flags.error(int(i), f"0 이하의 수정기준가격 ({dates[int(np.argmax(bad))]:%Y-%m-%d})")


def flag_unadjusted(
    prepared: Prepared,
    groups: np.ndarray,
    bench_levels: np.ndarray | None,
    bench_of_fund: np.ndarray | None,
    flags: FundFlags,
    *,
    allow: bool = False,
    ignore: Mapping[int, set[int]] | None = None,
) -> int:
    """Funds on raw 기준가격 that show 결산 resets: ``not_rated`` (or a warning with ``allow``). Returns the count.

    ``ignore``: per fund, rows of NAV-outlier episodes (a typo that came back is not a reset).
    """
    errored = np.zeros(len(groups), dtype=bool)
    errored[list(flags.errors)] = True
    candidates = (prepared.source == "raw") & ~errored
    bench_returns = None
    if bench_levels is not None and bench_of_fund is not None:
        with np.errstate(all="ignore"):
            b = np.full_like(bench_levels, np.nan)
            b[1:] = bench_levels[1:] / bench_levels[:-1] - 1.0
        bench_returns = (b, bench_of_fund)
    found = detect_resets(prepared.levels, candidates, groups, bench_returns)
    ignore = ignore or {}
    kept = {i: [r for r in rows if r not in ignore.get(i, ())] for i, rows in found.rows.items()}
    kept = {i: rows for i, rows in kept.items() if rows}
    for i, rows in kept.items():
        detail = describe(rows, prepared.dates, prepared.levels[:, i])
        if allow:
            flags.warn(
                i,
                f"결산 분배로 보이는 기준가격 재설정({detail})이 조정되지 않은 채 평가되었습니다 (--allow-unadjusted); "
                "수익률·변동성·최대낙폭이 실제보다 나쁘게 계산되었을 수 있습니다",
            )
        else:
            flags.skip(
                i,
                f"결산 분배로 보이는 기준가격 재설정({detail})이 있으나 분배를 반영할 정보가 없습니다; "
                "수정기준가격 또는 분배금(분배율) 열을 주면 평가할 수 있습니다",
                code=UNADJUSTED,
            )
    return len(kept)
