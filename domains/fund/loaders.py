"""Turn analysts' files into what the engine takes: a NAV matrix, fund metadata, benchmark, risk-free rate.

Two kinds of problem, handled differently:

* A whole input unusable (missing required column, undecodable file, broken benchmark): one clear
  :class:`~evaluator.domains.fund.readers.DataError` before any work.
* One fund's rows broken (duplicate dates, dates out of order, unreadable date or NAV, blank NAV): the
  fund is recorded in ``issues`` with Korean reasons and gets an ``error`` report; the batch goes on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.readers import (
    DataError,
    clean_text,
    is_blank,
    parse_dates,
    parse_numbers,
    read_table,
    rename_known,
)

META_COLUMNS = ("fund_name", "company", "type", "set_amount", "net_assets", "total_fee")


@dataclass
class Universe:
    """Engine inputs plus what was learnt while loading them."""

    navs: pd.DataFrame
    meta: pd.DataFrame
    issues: dict[str, list[str]]
    benchmark: pd.Series | pd.DataFrame | None = None
    risk_free: float | pd.Series = 0.0
    warnings: list[str] = field(default_factory=list)
    sources: dict[str, Any] = field(default_factory=dict)


def _first_per_fund(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """The first flagged row of each fund, with how many rows of that fund were flagged."""
    hit = frame.loc[mask]
    if hit.empty:
        return hit.assign(count=pd.Series(dtype=int))
    counts = hit.groupby("fund_code", sort=False).size().rename("count")
    return hit.drop_duplicates("fund_code").set_index("fund_code").join(counts).reset_index()


def _add(issues: dict[str, list[str]], code: str, msg: str) -> None:
    issues.setdefault(code, []).append(msg)


def _day(ts: Any) -> str:
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


def long_from_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Dates × fund-code columns → long rows (blank cells are simply "no NAV that day")."""
    frame = frame.reset_index(drop=True)
    value_cols = [c for c in frame.columns if c != "date"]
    if not value_cols:
        raise DataError("DATA has a date column but no fund columns")
    long = frame.melt(
        id_vars=["date"], value_vars=value_cols, var_name="fund_code", value_name="nav", ignore_index=False
    )
    long["row"] = long.index.to_numpy() + 2
    long = long.loc[~is_blank(long["nav"])]
    return long.reset_index(drop=True)


def check_rows(
    long: pd.DataFrame, *, blank_nav_is_error: bool = True
) -> tuple[pd.DataFrame, dict[str, list[str]], list[str]]:
    """Validate long rows (``date``, ``fund_code``, ``nav``, ``row``); return clean rows, issues, warnings."""
    issues: dict[str, list[str]] = {}
    warnings: list[str] = []
    long = long.copy()
    long["fund_code"] = clean_text(long["fund_code"])
    no_code = (long["fund_code"] == "").to_numpy()
    if no_code.any():
        warnings.append(
            f"{int(no_code.sum())} row(s) have no fund code and were skipped (first at line {int(long['row'][no_code].iloc[0])})"
        )
        long = long.loc[~no_code]
    raw_dates, raw_nav = long["date"], long["nav"]
    long["date"] = parse_dates(raw_dates)
    blank = is_blank(raw_nav)
    long["nav"] = parse_numbers(raw_nav)
    bad_date = long["date"].isna().to_numpy()
    for _, r in _first_per_fund(long.assign(raw=raw_dates.to_numpy()), bad_date).iterrows():
        _add(
            issues,
            r["fund_code"],
            f"읽을 수 없는 기준일자 '{r['raw']}' ({int(r['row'])}행, 총 {int(r['count'])}건)",
        )
    unreadable = long["nav"].isna().to_numpy() & ~blank & ~bad_date
    for _, r in _first_per_fund(long.assign(raw=raw_nav.to_numpy()), unreadable).iterrows():
        _add(
            issues,
            r["fund_code"],
            f"숫자가 아닌 기준가격 '{r['raw']}' ({_day(r['date'])}, 총 {int(r['count'])}건)",
        )
    if blank_nav_is_error:
        for _, r in _first_per_fund(long, blank & ~bad_date).iterrows():
            _add(
                issues, r["fund_code"], f"기준가격이 비어 있습니다 ({_day(r['date'])} 등 {int(r['count'])}건)"
            )
    dated = long.loc[~bad_date]
    dup = dated.duplicated(["fund_code", "date"], keep=False).to_numpy()
    for _, r in _first_per_fund(dated, dup).iterrows():
        _add(
            issues,
            r["fund_code"],
            f"기준일자 {_day(r['date'])}이 중복되어 있습니다 (중복 행 {int(r['count'])}건)",
        )
    back = (dated.groupby("fund_code", sort=False)["date"].diff() < pd.Timedelta(0)).to_numpy()
    for _, r in _first_per_fund(dated, back).iterrows():
        _add(
            issues,
            r["fund_code"],
            f"기준일자가 오름차순이 아닙니다 ({int(r['row'])}행의 {_day(r['date'])}이 앞 행의 날짜보다 이릅니다)",
        )
    clean = dated.loc[dated["nav"].notna()].drop_duplicates(["fund_code", "date"], keep="first")
    return clean, issues, warnings


def nav_matrix(clean: pd.DataFrame) -> pd.DataFrame:
    """Long clean rows → dates × funds (NaN where a fund has no NAV that day)."""
    navs = clean.pivot(index="date", columns="fund_code", values="nav").sort_index()
    navs.columns = navs.columns.astype(str)
    navs.columns.name = None
    return navs


def meta_from_rows(long: pd.DataFrame) -> pd.DataFrame:
    """Descriptive columns carried on NAV rows (KOFIA exports): each fund's last non-blank value."""
    cols = [c for c in META_COLUMNS if c in long.columns]
    if not cols:
        return pd.DataFrame(index=pd.Index([], name="fund_code"))
    part = long[["fund_code", *cols]].copy()
    for c in cols:
        part[c] = part[c].where(~is_blank(part[c]), None)
    meta = part.groupby("fund_code", sort=False)[cols].last()
    meta.index = meta.index.astype(str)
    return meta


def navs_from_frame(
    frame: pd.DataFrame, source: str = "DATA"
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], str]:
    """A NAV table already in memory → (matrix, issues, metadata on the rows, warnings, layout)."""
    original = ", ".join(map(str, frame.columns))
    frame = rename_known(frame)
    cols = set(frame.columns)
    if "date" not in cols:
        raise DataError(f"{source} has no date column (기준일자 / date); its columns are: {original}")
    if "fund_code" in cols and "nav" not in cols:
        raise DataError(f"{source} has 펀드코드/fund_code but no NAV column (기준가격 / nav)")
    if "nav" in cols and "fund_code" not in cols:
        raise DataError(f"{source} has 기준가격/nav but no fund code column (펀드코드 / fund_code)")
    if "fund_code" in cols:
        long = frame.reset_index(drop=True)
        long["row"] = np.arange(len(long)) + 2
        clean, issues, warnings = check_rows(long)
        return nav_matrix(clean), issues, meta_from_rows(long), warnings, "long"
    clean, issues, warnings = check_rows(long_from_wide(frame), blank_nav_is_error=False)
    return nav_matrix(clean), issues, pd.DataFrame(index=pd.Index([], name="fund_code")), warnings, "wide"


def load_navs(
    path: str | os.PathLike[str],
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], dict[str, Any]]:
    """NAV file (long or wide CSV, or Parquet) → (matrix, issues, metadata on the rows, warnings, source info)."""
    frame, encoding = read_table(path, "DATA")
    navs, issues, meta, warnings, layout = navs_from_frame(frame, f"DATA {path}")
    info = {"path": str(path), "layout": layout, "encoding": encoding, "rows": len(frame)}
    return navs, issues, meta, warnings, info


def load_meta(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """Fund metadata (펀드코드 + descriptive columns + optional qualitative scores), indexed by fund code."""
    frame, encoding = read_table(path, "META")
    original = ", ".join(map(str, frame.columns))
    frame = rename_known(frame)
    if "fund_code" not in frame.columns:
        raise DataError(
            f"META {path} has no fund code column (펀드코드 / fund_code); its columns are: {original}"
        )
    frame["fund_code"] = clean_text(frame["fund_code"])
    warnings: list[str] = []
    dup = frame["fund_code"].duplicated(keep="last")
    if dup.any():
        warnings.append(
            f"META lists {int(dup.sum())} fund code(s) more than once; the last row of each is used"
        )
    meta = frame.loc[~dup].set_index("fund_code")
    for c in meta.columns:
        meta[c] = meta[c].where(~is_blank(meta[c]), None)
    return meta, warnings, {"path": str(path), "encoding": encoding}


def series_from_frame(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """A date column plus numeric value columns → a date-indexed float table (strict: any bad cell is an error)."""
    frame = rename_known(frame)
    if "date" not in frame.columns:
        raise DataError(f"{what} has no date column (기준일자 / date)")
    values = [c for c in frame.columns if c != "date"]
    if not values:
        raise DataError(f"{what} has a date column but no value column")
    dates = parse_dates(frame["date"]).reset_index(drop=True)
    if dates.isna().any():
        row = int(np.flatnonzero(dates.isna().to_numpy())[0])
        raise DataError(f"{what}: unreadable date {frame['date'].iloc[row]!r} at line {row + 2}")
    if dates.duplicated().any():
        raise DataError(f"{what}: date {_day(dates[dates.duplicated()].iloc[0])} appears more than once")
    if not dates.is_monotonic_increasing:
        raise DataError(f"{what}: dates are not in ascending order")
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


def benchmark_from_table(table: pd.DataFrame, what: str = "BENCHMARK") -> pd.Series | pd.DataFrame:
    """One value column → a Series for every fund; several → one column per 유형. Levels must be above 0."""
    if (table <= 0).any().any():
        col = next(c for c in table.columns if (table[c] <= 0).any())
        raise DataError(f"{what}: column {col!r} has a non-positive index level; levels must be above 0")
    return table.iloc[:, 0].dropna() if table.shape[1] == 1 else table


def load_benchmark(path: str | os.PathLike[str]) -> tuple[pd.Series | pd.DataFrame, dict[str, Any]]:
    """Benchmark index levels from a file: one value column (all funds) or one column per 유형."""
    table, encoding = _series_table(path, "BENCHMARK")
    info = {"path": str(path), "encoding": encoding, "columns": list(table.columns)}
    return benchmark_from_table(table, f"BENCHMARK {path}"), info


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


def merge_meta(file_meta: pd.DataFrame | None, row_meta: pd.DataFrame) -> pd.DataFrame:
    """META file values win; the NAV rows' own descriptive columns fill what it lacks."""
    if file_meta is None:
        return row_meta
    if row_meta.empty:
        return file_meta
    return file_meta.combine_first(row_meta)


def load_universe(
    data: str | os.PathLike[str],
    *,
    meta: str | os.PathLike[str] | None = None,
    benchmark: str | os.PathLike[str] | None = None,
    risk_free: str | float = 0.0,
) -> Universe:
    """Read and check every input; raise :class:`DataError` for anything that would stop the whole batch."""
    rf, rf_info = parse_risk_free(risk_free)
    file_meta, meta_warnings, meta_info = load_meta(meta) if meta is not None else (None, [], None)
    bench, bench_info = load_benchmark(benchmark) if benchmark is not None else (None, None)
    navs, issues, row_meta, warnings, data_info = load_navs(data)
    universe = Universe(
        navs=navs,
        meta=merge_meta(file_meta, row_meta),
        issues=issues,
        benchmark=bench,
        risk_free=rf,
        warnings=meta_warnings + warnings,
        sources={"data": data_info, "meta": meta_info, "benchmark": bench_info, "risk_free": rf_info},
    )
    check_universe(universe)
    return universe


def check_universe(universe: Universe) -> None:
    """Whole-batch requirements: NAVs exist, every fund can be given a 유형, benchmark columns mean something."""
    if universe.navs.empty and not universe.issues:
        raise DataError("DATA holds no NAV rows")
    if "type" not in universe.meta.columns:
        raise DataError("no 유형/type column in META or DATA; peer groups (유형) are needed to rate funds")
    bench = universe.benchmark
    if isinstance(bench, pd.DataFrame):
        types = {str(t) for t in universe.meta["type"].dropna()}
        if not types & set(map(str, bench.columns)):
            raise DataError(
                f"BENCHMARK has several columns ({', '.join(map(str, bench.columns))}) but none is named after a 유형 "
                f"in the data ({', '.join(sorted(types)) or 'none'}); use one value column, or one column per 유형"
            )
    meta_codes = set(universe.meta.index.astype(str))
    data_codes = set(universe.navs.columns.astype(str)) | set(universe.issues)
    missing = len(meta_codes - data_codes)
    if missing:
        universe.warnings.append(f"{missing} fund(s) in META have no NAV rows in DATA and are not evaluated")
