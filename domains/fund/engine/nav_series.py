"""Each rated fund's total-return NAV index beside its benchmark over its evaluation window, for a chart.

The engine already holds the total-return levels it measured (:mod:`.total_return`) and the benchmark
levels on the same market calendar; :class:`TotalReturnLevels` keeps them on the :class:`Evaluation`
so reports and pages can draw what was graded, without recomputing it.

A fund's window is the longest period its grade weighs (3y, 5y or 10y; a provisional grade's own window),
from the window's starting NAV (or the fund's first NAV, if later) to the as-of date. Points: the start,
the last market date of each week, the as-of date; thinned evenly to at most ``max_points`` (first and
last always kept). Both lines are rebased to 100 at the window's first date; a gap carries the last level.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.core.fast_json import dumps_compact
from evaluator.domains.fund.engine.metrics import row_on_or_before, window_start_row
from evaluator.methodology.rubric import PERIODS

MAX_POINTS = 260
SCALE = 100  # stored in hundredths of an index point (10000 = 100.00): finer than any chart shows
_MONDAY = 4  # 1970-01-05, a Monday, in days since the epoch: week keys count from it


@dataclass(frozen=True)
class TotalReturnLevels:
    """What the engine measured, on its market calendar.

    ``levels``: dates × funds total-return wealth index (NaN where a fund has no level or is in error),
    columns in ``codes`` order; ``bench_levels``: dates × benchmark columns named ``bench_names``;
    ``bench_of_fund``: per fund column, its benchmark column or −1.
    """

    dates: pd.DatetimeIndex
    codes: list[str]
    levels: np.ndarray
    bench_levels: np.ndarray | None
    bench_of_fund: np.ndarray | None
    bench_names: list[str]


def _epoch_days(dates: pd.DatetimeIndex) -> np.ndarray:
    """Whole days since 1970-01-01 (whatever resolution the index is stored in)."""
    return dates.values.astype("datetime64[D]").astype(np.int64)


def sample_rows(dates: pd.DatetimeIndex, start: int, end: int, max_points: int = MAX_POINTS) -> np.ndarray:
    """Rows to draw between ``start`` and ``end`` (inclusive): start, each week's last date, end; at most
    ``max_points`` of them, evenly thinned, always keeping the first and the last."""
    rows = np.arange(start, end + 1)
    week = (_epoch_days(dates[rows]) - _MONDAY) // 7
    last_of_week = rows[np.r_[week[1:] != week[:-1], True]]
    picked = np.unique(np.concatenate(([start], last_of_week, [end])))
    if picked.size > max_points:
        picked = picked[np.unique(np.linspace(0, picked.size - 1, max(max_points, 2)).round().astype(int))]
    return picked


def _carried(values: np.ndarray) -> np.ndarray:
    """Each column's NaNs replaced by the last finite value above them (leading NaNs stay)."""
    ok = np.isfinite(values)
    index = np.where(ok, np.arange(values.shape[0])[:, None], 0)
    np.maximum.accumulate(index, axis=0, out=index)
    return np.take_along_axis(values, index, axis=0)  # before the first finite value: row 0, itself NaN


def _rebased(values: np.ndarray) -> np.ndarray:
    """Columns rebased to 100 at their first row, in hundredths (10000 = 100.00) as floats; NaN throughout
    where that row has no level, and where a column has none yet."""
    values = _carried(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        base = np.where(np.isfinite(values[0]) & (values[0] > 0), values[0], np.nan)
        return np.rint(values / base * 100.0 * SCALE)


def _listed(column: np.ndarray) -> list[int | None] | None:
    """Whole hundredths as a JSON-ready list (ints dump three times faster than floats), gaps as None."""
    if not np.isfinite(column[0]):
        return None
    ok = np.isfinite(column)
    ints = np.where(ok, column, 0).astype(np.int64).tolist()
    return ints if ok.all() else [v if good else None for v, good in zip(ints, ok.tolist(), strict=True)]


def _window_years(period_weights: dict[str, float]) -> int | None:
    weighed = [PERIODS[p] for p, w in period_weights.items() if p in PERIODS and w and w > 0]
    return max(weighed) if weighed else None


@dataclass(frozen=True)
class Group:
    """Funds whose windows share their first and last rows: one row selection, one array operation."""

    head: dict[str, Any]  # window, start, days
    funds: list[tuple[str, list[int | None], int]]  # (code, levels, benchmark column or −1)
    benchmarks: dict[int, tuple[str, list[int | None] | None]]  # column → (name, levels)


def _group(
    tr: TotalReturnLevels, cols: np.ndarray, start: int, end: int, years: int, max_points: int
) -> Group:
    rows = sample_rows(tr.dates, start, end, max_points)
    epoch = _epoch_days(tr.dates[rows])
    head = {
        "window": f"{years}y",
        "start": tr.dates[rows[0]].strftime("%Y-%m-%d"),
        "scale": SCALE,
        "days": (epoch - epoch[0]).tolist(),
    }
    levels = _rebased(tr.levels[np.ix_(rows, cols)])
    bench_of = tr.bench_of_fund[cols] if tr.bench_of_fund is not None else np.full(cols.size, -1)
    benches = _rebased(tr.bench_levels[rows]) if tr.bench_levels is not None else None
    used = sorted({int(b) for b in bench_of.tolist() if b >= 0}) if benches is not None else []
    benchmarks = {b: (tr.bench_names[b], _listed(benches[:, b])) for b in used}  # type: ignore[index]
    funds = [
        (tr.codes[col], fund, int(bench_of[k]))
        for k, col in enumerate(cols.tolist())
        if (fund := _listed(levels[:, k])) is not None
    ]
    return Group(head, funds, benchmarks)


def window_groups(evaluation: Any, max_points: int = MAX_POINTS) -> Iterator[Group]:
    """Every rated fund's series of an :class:`Evaluation` that carries levels, grouped by window."""
    tr: TotalReturnLevels | None = getattr(evaluation, "levels", None)
    as_of = pd.Timestamp(evaluation.as_of)
    end = row_on_or_before(tr.dates, as_of) if tr is not None else None
    if tr is None or end is None:
        return
    column = {code: i for i, code in enumerate(tr.codes)}
    by_years: dict[int, list[int]] = {}
    for fund in evaluation.funds:
        years = _window_years(fund.period_weights) if fund.status == "ok" else None
        if years is not None and fund.fund_code in column:
            by_years.setdefault(years, []).append(column[fund.fund_code])
    for years, listed in sorted(by_years.items()):
        cols = np.asarray(listed, dtype=int)
        first = window_start_row(tr.dates, as_of, years) or 0
        inside = np.isfinite(tr.levels[first : end + 1])[:, cols]
        starts = first + inside.argmax(axis=0)  # a provisional grade's young fund starts at its first NAV
        starts[~inside.any(axis=0)] = -1
        for start in np.unique(starts[starts >= 0]).tolist():
            yield _group(tr, cols[starts == start], start, end, years, max_points)


def rated_series(evaluation: Any, max_points: int = MAX_POINTS) -> Iterator[tuple[str, dict[str, Any]]]:
    """(fund code, chart document) per rated fund: ``window``, ``start``, ``scale`` (values are the index
    × scale, so 10000 = 100.00), ``days`` since ``start``, ``fund``, ``benchmark`` (or null) and its name."""
    for group in window_groups(evaluation, max_points):
        for code, levels, b in group.funds:
            name, bench = group.benchmarks.get(b, (None, None))
            yield (
                code,
                {
                    **group.head,
                    "fund": levels,
                    "benchmark": bench,
                    "benchmark_name": name if bench is not None else None,
                },
            )


def series_lines(evaluation: Any, max_points: int = MAX_POINTS) -> Iterator[tuple[str, str]]:
    """(fund code, :func:`rated_series`'s document as one JSON line with ``fund_code`` first); each part
    funds share is serialised once per group, so 15,000 funds take about two seconds."""
    dumps = dumps_compact  # json.dumps(…, ensure_ascii=False, separators=(",", ":")), at C speed
    for group in window_groups(evaluation, max_points):
        head = dumps(group.head)[1:-1]
        tails = {
            b: f'"benchmark":{dumps(levels)},"benchmark_name":{dumps(name if levels else None)}'
            for b, (name, levels) in group.benchmarks.items()
        }
        empty = '"benchmark":null,"benchmark_name":null'
        for code, levels, b in group.funds:
            yield code, f'{{"fund_code":{dumps(code)},{head},"fund":{dumps(levels)},{tails.get(b, empty)}}}'
