"""Date-indexed value tables: benchmark index levels (including exchange exports), risk-free rates, and
market calendars. Strict: one unreadable cell stops the run with a clear error, since these series apply
to every fund.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.readers import is_blank, parse_dates, parse_numbers, read_table, rename_known
from evaluator.domains.fund.data.rows import day_text
from evaluator.domains.fund.types import DataError

OHLCV = (
    "대비",
    "등락률",
    "시가",
    "고가",
    "저가",
    "거래량",
    "거래대금",
    "상장시가총액",
    "open",
    "high",
    "low",
    "volume",
)
CLOSE = ("종가", "close", "close_price", "closing_price")


def series_from_frame(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """A date column plus numeric value columns → a date-indexed float table (strict: any bad cell is an error)."""
    frame = rename_known(frame)
    if "date" not in frame.columns:
        raise DataError(f"{what} has no date column (기준일자 / date)")
    values = [c for c in frame.columns if c != "date"]
    if not values:
        raise DataError(f"{what} has a date column but no value column")
    frame = frame.reset_index(drop=True)
    dates = parse_dates(frame["date"]).reset_index(drop=True)
    if dates.isna().any():
        row = int(np.flatnonzero(dates.isna().to_numpy())[0])
        raise DataError(f"{what}: unreadable date {frame['date'].iloc[row]!r} at line {row + 2}")
    if dates.duplicated().any():
        raise DataError(f"{what}: date {day_text(dates[dates.duplicated()].iloc[0])} appears more than once")
    if not dates.is_monotonic_increasing:  # exchanges list the newest date first
        order = np.argsort(dates.to_numpy(), kind="stable")
        frame, dates = frame.iloc[order].reset_index(drop=True), dates.iloc[order].reset_index(drop=True)
    out = pd.DataFrame(index=pd.DatetimeIndex(dates, name="date"))
    for c in values:
        nums = parse_numbers(frame[c])
        bad = nums.isna().to_numpy() & ~is_blank(frame[c])
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"{what}: column {c!r} has the unreadable value {frame[c].iloc[row]!r} at line {row + 2}"
            )
        out[str(c)] = nums.to_numpy()
    return out


def _series_table(path: str | os.PathLike[str], what: str) -> tuple[pd.DataFrame, str]:
    frame, encoding = read_table(path, what)
    return series_from_frame(frame, f"{what} {path}"), encoding


def _key(name: object) -> str:
    return str(name).strip().lower().replace(" ", "")


def close_column(frame: pd.DataFrame) -> str | None:
    """The closing level of an exchange export (KRX: 종가 beside 대비, 등락률, 시가, 고가, 저가, 거래량 …)."""
    names = {_key(c): c for c in frame.columns}
    close = next((names[k] for k in CLOSE if k in names), None)
    if close is not None and any(_key(k) in names for k in OHLCV):
        return str(close)
    return None


def benchmark_table(frame: pd.DataFrame, what: str) -> tuple[pd.DataFrame, str | None]:
    """Benchmark levels from a table: only 종가/close when it is an OHLCV-style export; else every value column."""
    close = close_column(frame)
    if close is not None:
        date_col = next(
            (c for c in frame.columns if c != close and rename_known(frame[[c]]).columns[0] == "date"), None
        )
        if date_col is None:
            raise DataError(f"{what} has no date column (기준일자 / 일자 / date)")
        frame = frame[[date_col, close]]
    return series_from_frame(frame, what), close


def select_benchmark_columns(
    bench: pd.Series | pd.DataFrame, types: set[str], what: str = "BENCHMARK"
) -> tuple[pd.Series | pd.DataFrame, list[str]]:
    """Several value columns are per-유형 benchmarks only where their names are 유형 names; the rest are dropped."""
    if not isinstance(bench, pd.DataFrame):
        return bench, [str(bench.name)]
    matched = [c for c in bench.columns if str(c) in types]
    if not matched:
        raise DataError(
            f"{what} has several columns ({', '.join(map(str, bench.columns))}) but none is named after a 유형 "
            f"in the data ({', '.join(sorted(types)) or 'none'}); use one value column, or one column per 유형"
        )
    return bench[matched], [str(c) for c in matched]


def benchmark_from_table(table: pd.DataFrame, what: str = "BENCHMARK") -> pd.Series | pd.DataFrame:
    """One value column → a Series for every fund; several → one column per 유형 (checked once the 유형 are
    known, by :func:`check_universe`). Levels must be above 0."""
    if table.shape[1] > 1:
        return table
    require_positive(table, what)
    return table.iloc[:, 0].dropna()


def require_positive(table: pd.DataFrame, what: str) -> None:
    if (table <= 0).any().any():
        col = next(c for c in table.columns if (table[c] <= 0).any())
        raise DataError(f"{what}: column {col!r} has a non-positive index level; levels must be above 0")


def load_benchmark(path: str | os.PathLike[str]) -> tuple[pd.Series | pd.DataFrame, dict[str, Any]]:
    """Benchmark index levels from a file: one value column (all funds), one column per 유형, or the 종가 of an
    exchange (KRX) export; any row order (sorted by date here)."""
    frame, encoding = read_table(path, "BENCHMARK")
    table, close = benchmark_table(frame, f"BENCHMARK {path}")
    info = {"path": str(path), "encoding": encoding, "columns": list(table.columns), "close_column": close}
    return benchmark_from_table(table, f"BENCHMARK {path}"), info


def load_calendar(path: str | os.PathLike[str]) -> tuple[pd.DatetimeIndex, dict[str, Any]]:
    """Market dates from a file's date column (any other columns are ignored)."""
    frame, encoding = read_table(path, "CALENDAR")
    frame = rename_known(frame)
    if "date" not in frame.columns:
        raise DataError(f"CALENDAR {path} has no date column (기준일자 / date)")
    dates = parse_dates(frame["date"])
    bad = dates.isna().to_numpy() & ~is_blank(frame["date"])
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"CALENDAR {path}: unreadable date {frame['date'].iloc[row]!r} at line {row + 2}")
    cal = pd.DatetimeIndex(dates.dropna()).unique().sort_values()
    if len(cal) < 2:
        raise DataError(f"CALENDAR {path} holds fewer than two dates")
    return cal, {"path": str(path), "encoding": encoding, "dates": len(cal)}


def parse_risk_free(value: str | float | os.PathLike[str]) -> tuple[float | pd.Series, dict[str, Any]]:
    """``0.03`` or ``3%`` (a constant annual rate), or a CSV/Parquet path of annual rates by date.

    In a file, a column whose largest absolute value is above 1 is read as percent (3.5 → 0.035).
    """
    if isinstance(value, (int, float)):
        rate = float(value)
    else:
        text = str(value).strip()
        try:
            rate = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
        except ValueError:
            return _risk_free_file(text)
    if not -1.0 < rate <= 1.0:
        raise DataError(f"risk-free rate {rate:g} is out of range; write an annual rate such as 0.03 (or 3%)")
    return rate, {"kind": "constant", "annual_rate": rate}


def _risk_free_file(text: str) -> tuple[pd.Series, dict[str, Any]]:
    if not Path(text).exists():
        raise DataError(f"--risk-free {text!r} is neither a rate (0.03, 3%) nor an existing file")
    table, encoding = _series_table(text, "RISK-FREE")
    series = table.iloc[:, 0].dropna()
    if series.empty:
        raise DataError(f"RISK-FREE {text} holds no rates")
    percent = bool(series.abs().max() > 1)
    if percent:
        series = series / 100.0
    return series, {"kind": "series", "path": text, "encoding": encoding, "read_as_percent": percent}
