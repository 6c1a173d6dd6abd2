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

from evaluator.domains.fund.data.readers import (
    DataError,
    canonical,
    clean_text,
    column_units,
    is_blank,
    parse_dates,
    parse_numbers,
    read_table,
    rename_known,
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
from evaluator.domains.fund.engine.total_return import Adjustments

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

META_COLUMNS = ("fund_name", "company", "type", "set_amount", "net_assets", "total_fee", "family_code")
ADJUSTMENT_COLUMNS = {"adjusted_nav": "수정기준가격", "distribution": "분배금", "distribution_rate": "분배율"}


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
    else:
        _blank_prices(long, blank & ~bad_date, issues, warnings)
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


def _blank_prices(
    long: pd.DataFrame, blank: np.ndarray, issues: dict[str, list[str]], warnings: list[str]
) -> None:
    """A price written as blank, ``-``, ``—``, ``N/A`` … is a date without a NAV (the calendar's fill rule
    applies); a fund with no price at all is an error, so it never disappears from the batch."""
    if not blank.any():
        return
    hit = long.loc[blank]
    first = hit.iloc[0]
    warnings.append(
        f"{int(blank.sum())} row(s) have no 기준가격 (blank, '-', 'N/A' …) and are read as dates without a NAV "
        f"(first: {first['fund_code']} {_day(first['date'])}); each fund's report says which dates were filled"
    )
    priced = set(long.loc[~blank & long["nav"].notna().to_numpy(), "fund_code"])
    for code, rows in hit.groupby("fund_code", sort=False):
        if code not in priced:
            _add(issues, str(code), f"기준가격이 모두 비어 있습니다 ({_day(rows['date'].iloc[0])} 등 {len(rows)}건)")


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
            _add(issues, str(col).strip(), "기준가격이 모두 비어 있습니다 (값이 있는 기준일이 없습니다)")
    empty = pd.DataFrame(index=pd.Index([], name="fund_code"))
    return nav_matrix(clean), issues, empty, dropped + warnings, "wide", None


def apply_units(
    meta: pd.DataFrame, units: dict[str, tuple[str, str, float]], source: str, notes: list[str]
) -> pd.DataFrame:
    """Money columns as numbers in 원: a header unit (설정원본(억원)) multiplies; text like 1,234 is read."""
    for col in ("set_amount", "net_assets"):
        if col not in meta.columns:
            continue
        values = parse_numbers(meta[col].astype(object))
        header, unit, factor = units.get(col, (col, "원", 1.0))
        if col in units:
            notes.append(f"{source}: column {header!r} read in {unit} and converted to 원 (× {factor:,.0f})")
        meta[col] = values * factor
    return meta


def adjustments_from_rows(clean: pd.DataFrame, issues: dict[str, list[str]]) -> Adjustments | None:
    """Adjusted-NAV and distribution tables (dates × funds) from clean long rows; bad cells are fund issues.

    A value that is not a number, or a negative distribution, makes that fund an ``error``.
    """
    present = [c for c in ADJUSTMENT_COLUMNS if c in clean.columns]
    if not present:
        return None
    tables: dict[str, pd.DataFrame] = {}
    for col in present:
        raw = clean[col]
        values = parse_numbers(raw)
        blank = is_blank(raw)
        name = ADJUSTMENT_COLUMNS[col]
        unreadable = values.isna().to_numpy() & ~blank
        for _, r in _first_per_fund(clean.assign(raw=raw.to_numpy()), unreadable).iterrows():
            _add(
                issues,
                r["fund_code"],
                f"숫자가 아닌 {name} '{r['raw']}' ({_day(r['date'])}, 총 {int(r['count'])}건)",
            )
        if col != "adjusted_nav":
            negative = (values < 0).to_numpy()
            for _, r in _first_per_fund(clean.assign(v=values.to_numpy()), negative).iterrows():
                _add(
                    issues,
                    r["fund_code"],
                    f"음수 {name} {r['v']:g} ({_day(r['date'])}); 분배금은 0 이상이어야 합니다",
                )
        part = pd.DataFrame({"date": clean["date"], "fund_code": clean["fund_code"], "v": values})
        part = part.loc[part["v"].notna()]
        if not part.empty:
            table = part.pivot(index="date", columns="fund_code", values="v").sort_index()
            table.columns = table.columns.astype(str)
            tables[col] = table
    if not tables:
        return None
    return Adjustments(
        adjusted=tables.get("adjusted_nav"),
        distribution=tables.get("distribution"),
        rate=tables.get("distribution_rate"),
    )


def load_navs(
    path: str | os.PathLike[str], sheet: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], dict[str, Any]]:
    """NAV file (long or wide; CSV, Excel or Parquet) → (matrix, issues, metadata on the rows, warnings, source info)."""
    navs, issues, meta, warnings, info, _ = load_navs_with_adjustments(path, sheet)
    return navs, issues, meta, warnings, info


def load_navs_with_adjustments(
    path: str | os.PathLike[str], sheet: str | None = None, type_column: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]], pd.DataFrame, list[str], dict[str, Any], Adjustments | None]:
    """:func:`load_navs` plus the file's adjusted-NAV / distribution tables (long layout only)."""
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
