"""Turn analysts' files into what the engine takes: a NAV matrix, fund metadata, benchmark, risk-free rate.

Two kinds of problem, handled differently:

* A whole input unusable (missing required column, undecodable file, broken benchmark): one clear
  :class:`~evaluator.domains.fund.data.readers.DataError` before any work.
* One fund's rows broken (duplicate dates, dates out of order, unreadable date or NAV, blank NAV): the
  fund is recorded in ``issues`` with Korean reasons and gets an ``error`` report; the batch goes on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.fast_csv import (
    csv_head,
    give_back_freed_memory,
    read_long_csv,
    read_wide_csv,
)
from evaluator.domains.fund.data.readers import (
    canonical,
    clean_text,
    column_units,
    is_blank,
    read_table,
    rename_known,
)
from evaluator.domains.fund.data.rows import (
    ADJUSTMENT_COLUMNS,
    add_issue,
    adjustments_from_rows,
    apply_units,
    check_rows,
    long_from_wide,
    meta_from_rows,
    nav_matrix,
)
from evaluator.domains.fund.data.series import (
    benchmark_from_table,
    load_benchmark,
    load_calendar,
    parse_risk_free,
    require_positive,
    select_benchmark_columns,
    series_from_frame,
)
from evaluator.domains.fund.types import Adjustments, DataError

__all__ = [
    "Universe",
    "benchmark_from_table",
    "check_universe",
    "load_benchmark",
    "load_meta",
    "load_navs",
    "load_universe",
    "navs_from_frame",
    "parse_risk_free",
    "read_navs_frame",
    "series_from_frame",
]



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
    adjustments: Adjustments | None = None
    calendar: pd.DatetimeIndex | None = None


def navs_from_frame(
    frame: pd.DataFrame, source: str = "DATA"
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], str]:
    """A NAV table already in memory → (matrix, issues, metadata on the rows, warnings, layout).

    Distribution columns on the rows are read by :func:`adjustments_from_frame`.
    """
    navs, issues, meta, warnings, layout, _ = read_navs_frame(frame, source)
    return navs, issues, meta, warnings, layout


def use_type_column(frame: pd.DataFrame, name: str | None) -> tuple[pd.DataFrame, bool]:
    """``--type-column NAME``: that column becomes the 유형 (peer group); any other 유형 column is set aside.

    Returns the frame and whether it had the column.
    """
    if name is None:
        return frame, False
    chosen = next((c for c in frame.columns if str(c).strip() == name.strip()), None)
    if chosen is None:
        return frame, False
    others = {c: f"unused:{c}" for c in frame.columns if c != chosen and canonical(c) == "type"}
    return frame.rename(columns={**others, chosen: "유형"}), True


def type_candidates(columns: list[str]) -> list[str]:
    """Columns that look like a peer-group column (대유형, 중유형, 소유형, 분류 …) for the error message."""
    keys = ("유형", "type", "분류", "class", "category", "group")
    return [c for c in columns if any(k in str(c).lower() for k in keys)]


def read_navs_frame(
    frame: pd.DataFrame, source: str = "DATA", type_column: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], str, Adjustments | None]:
    """:func:`navs_from_frame` plus the adjusted-NAV / distribution tables of a long layout."""
    frame, _ = use_type_column(frame, type_column)
    original = ", ".join(map(str, frame.columns))
    units = column_units(frame)
    header_row = int(frame.attrs.get("header_row", 1))
    frame = rename_known(frame)
    cols = set(frame.columns)
    if "date" not in cols:
        raise DataError(f"{source} has no date column (기준일자 / date); its columns are: {original}")
    if "fund_code" in cols and "nav" not in cols:
        raise DataError(f"{source} has 펀드코드/fund_code but no NAV column (기준가격 / nav)")
    if "nav" in cols and "fund_code" not in cols:
        raise DataError(f"{source} has 기준가격/nav but no fund code column (펀드코드 / fund_code)")
    frame = frame.reset_index(drop=True)
    frame["row"] = np.arange(len(frame)) + header_row + 1
    body = [c for c in frame.columns if c != "row"]
    dup = frame.duplicated(subset=body, keep="first").to_numpy()
    dropped: list[str] = []
    if dup.any():
        dropped.append(
            f"{source}: {int(dup.sum())} exact duplicate row(s) were dropped (identical in every column; "
            f"first at line {int(frame['row'].iloc[int(np.flatnonzero(dup)[0])])})"
        )
        frame = frame.loc[~dup]
    if "fund_code" in cols:
        long = frame
        clean, issues, warnings = check_rows(long, blank_nav_is_error=False)
        adjustments = adjustments_from_rows(clean, issues)
        meta = apply_units(meta_from_rows(long), units, source, dropped)
        return nav_matrix(clean), issues, meta, dropped + warnings, "long", adjustments
    wide = frame.drop(columns="row").reset_index(drop=True)
    clean, issues, warnings = check_rows(long_from_wide(wide), blank_nav_is_error=False)
    priced = set(clean["fund_code"])
    for col in wide.columns:
        if col != "date" and str(col).strip() and str(col).strip() not in priced and str(col).strip() not in issues:
            add_issue(issues, str(col).strip(), "기준가격이 모두 비어 있습니다 (값이 있는 기준일이 없습니다)")
    empty = pd.DataFrame(index=pd.Index([], name="fund_code"))
    return nav_matrix(clean), issues, empty, dropped + warnings, "wide", None


def load_navs(
    path: str | os.PathLike[str], sheet: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], dict[str, Any]]:
    """NAV file (long or wide; CSV, Excel or Parquet) → (matrix, issues, metadata on the rows, warnings, source info)."""
    navs, issues, meta, warnings, info, _ = load_navs_with_adjustments(path, sheet)
    return navs, issues, meta, warnings, info


def load_navs_with_adjustments(
    path: str | os.PathLike[str], sheet: str | None = None, type_column: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], dict[str, Any], Adjustments | None]:
    """:func:`load_navs` plus the file's adjusted-NAV / distribution tables (long layout only).

    A clean wide or long CSV takes the fast path (:mod:`fast_csv`), which gives exactly what the general
    path would; anything it cannot prove the same for is read the general way."""
    head = csv_head(path) if sheet is None and type_column is None else None
    fast = read_wide_csv(path, f"DATA {path}", head) if head is not None else None
    fast_long = read_long_csv(path, f"DATA {path}", head) if head is not None and fast is None else None
    if head is not None:
        give_back_freed_memory()
    if fast is not None:
        navs, issues, rows, columns, encoding = fast
        empty = pd.DataFrame(index=pd.Index([], name="fund_code"))
        info = {"path": str(path), "layout": "wide", "encoding": encoding, "rows": rows, "columns": columns}
        return navs, issues, empty, [], info, None
    if fast_long is not None:
        navs, row_meta, notes, rows, columns, encoding = fast_long
        info = {"path": str(path), "layout": "long", "encoding": encoding, "rows": rows, "columns": columns}
        return navs, {}, row_meta, notes, info, None
    frame, encoding = read_table(path, "DATA", sheet)
    columns = [str(c) for c in frame.columns]
    navs, issues, meta, warnings, layout, adjustments = read_navs_frame(frame, f"DATA {path}", type_column)
    info: dict[str, Any] = {
        "path": str(path),
        "layout": layout,
        "encoding": encoding,
        "rows": len(frame),
        "columns": columns,
    }
    if adjustments is not None:
        info["adjustment_columns"] = [
            ADJUSTMENT_COLUMNS[k]
            for k, t in (
                ("adjusted_nav", adjustments.adjusted),
                ("distribution", adjustments.distribution),
                ("distribution_rate", adjustments.rate),
            )
            if t is not None
        ]
    return navs, issues, meta, warnings, info, adjustments


def load_meta(
    path: str | os.PathLike[str], type_column: str | None = None
) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """Fund metadata (펀드코드 + descriptive columns + optional qualitative scores), indexed by fund code.

    Money columns are read as numbers in 원 (a unit in the header, e.g. ``설정원본(억원)``, is applied);
    ``type_column`` names the 유형 column (``소유형``, ``중유형`` …) when it is not ``유형`` itself.
    """
    frame, encoding = read_table(path, "META")
    columns = [str(c) for c in frame.columns]
    frame, _ = use_type_column(frame, type_column)
    original = ", ".join(map(str, frame.columns))
    units = column_units(frame)
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
    meta = apply_units(meta, units, f"META {path}", warnings)
    info = {
        "path": str(path),
        "encoding": encoding,
        "units": {k: v[1] for k, v in units.items()},
        "columns": columns,
    }
    return meta, warnings, info


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
    sheet: str | None = None,
    calendar: str | os.PathLike[str] | None = None,
    type_column: str | None = None,
) -> Universe:
    """Read and check every input; raise :class:`DataError` for anything that would stop the whole batch.

    ``sheet`` picks the DATA workbook's sheet; ``calendar`` is a file of market dates; ``type_column``
    names the 유형 (peer-group) column, e.g. ``소유형``.
    """
    rf, rf_info = parse_risk_free(risk_free)
    file_meta, meta_warnings, meta_info = load_meta(meta, type_column) if meta is not None else (None, [], None)
    bench, bench_info = load_benchmark(benchmark) if benchmark is not None else (None, None)
    cal, cal_info = load_calendar(calendar) if calendar is not None else (None, None)
    navs, issues, row_meta, warnings, data_info, adjustments = load_navs_with_adjustments(data, sheet, type_column)
    seen = [*(meta_info or {}).get("columns", []), *data_info.get("columns", [])]
    if type_column is not None and type_column.strip() not in {c.strip() for c in seen}:
        raise DataError(
            f"--type-column {type_column!r} is not a column of META or DATA; columns seen: {', '.join(dict.fromkeys(seen))}"
        )
    universe = Universe(
        navs=navs,
        meta=merge_meta(file_meta, row_meta),
        issues=issues,
        benchmark=bench,
        risk_free=rf,
        warnings=meta_warnings + warnings,
        sources={
            "data": data_info,
            "meta": meta_info,
            "benchmark": bench_info,
            "risk_free": rf_info,
            **({"calendar": cal_info} if cal_info else {}),
        },
        adjustments=adjustments,
        calendar=cal,
    )
    check_universe(universe)
    return universe


def _check_families(universe: Universe) -> None:
    """With a share-class column, a fund without a portfolio code counts as its own portfolio (warned)."""
    if "family_code" not in universe.meta.columns:
        return
    codes = [str(c) for c in universe.navs.columns]
    family = universe.meta["family_code"].reindex(codes)
    missing = [
        c
        for c, f in zip(codes, family.to_numpy(dtype=object), strict=True)
        if f is None or pd.isna(f) or not str(f).strip()
    ]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        universe.warnings.append(
            f"{len(missing)} fund(s) have no share-class portfolio code (대표펀드코드) in META ({shown}); "
            "each counts as a portfolio of its own"
        )


def check_universe(universe: Universe) -> None:
    """Whole-batch requirements: NAVs exist, every fund can be given a 유형, benchmark columns mean something."""
    if universe.navs.empty and not universe.issues:
        raise DataError("DATA holds no NAV rows")
    if "type" not in universe.meta.columns:
        seen = [
            c
            for key in ("meta", "data")
            for c in ((universe.sources.get(key) or {}).get("columns") or [])
        ]
        found = type_candidates(list(dict.fromkeys(seen)))
        hint = (
            f"; candidate columns seen: {', '.join(found)} — pick one with --type-column NAME"
            if found
            else "; name the peer-group column with --type-column NAME"
        )
        raise DataError(f"no 유형/type column in META or DATA; peer groups (유형) are needed to rate funds{hint}")
    bench = universe.benchmark
    if isinstance(bench, pd.DataFrame):
        types = {str(t) for t in universe.meta["type"].dropna()}
        selected, used = select_benchmark_columns(bench, types)
        require_positive(selected, "BENCHMARK")
        universe.benchmark = selected
        info = universe.sources.get("benchmark")
        if isinstance(info, dict):
            info["used_columns"] = used
    _check_families(universe)
    meta_codes = set(universe.meta.index.astype(str))
    data_codes = set(universe.navs.columns.astype(str)) | set(universe.issues)
    missing = len(meta_codes - data_codes)
    if missing:
        universe.warnings.append(f"{missing} fund(s) in META have no NAV rows in DATA and are not evaluated")
