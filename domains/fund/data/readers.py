"""Reading analysts' tables: CSV in utf-8 / utf-8-sig / cp949, Excel (.xlsx, .xls, and the HTML tables
that many Korean sites save as .xls), or Parquet; English or Korean column names, with units in headers.

Everything is read as text first so a blank cell, an unreadable number and a real value stay distinct;
:func:`parse_dates` and :func:`parse_numbers` then say exactly which cells could not be read. Every
format goes through the same text path: Excel cells are turned into text (dates as YYYY-MM-DD), and the
header row is looked for below any title rows ("펀드 기준가격 일별 조회", "조회기간: …").
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data import spreadsheets as ss
from evaluator.domains.fund.types import DataError

ALIASES: dict[str, tuple[str, ...]] = {
    "date": ("기준일자", "기준일", "일자", "날짜", "date", "base_date", "nav_date"),
    "fund_code": ("펀드코드", "펀드표준코드", "표준코드", "fund_code", "code"),
    "nav": ("기준가격", "기준가", "nav", "price"),
    "fund_name": ("펀드명", "fund_name", "name"),
    "company": ("운용회사", "운용사", "운용회사명", "company", "management_company"),
    "type": ("유형", "펀드유형", "type", "fund_type"),
    "set_amount": ("설정원본", "설정액", "set_amount", "aum"),
    "net_assets": ("순자산총액", "순자산", "net_assets"),
    "total_fee": ("총보수", "총보수율", "total_fee", "fee"),
    "adjusted_nav": ("수정기준가격", "수정기준가", "adjusted_nav", "adj_nav"),
    "distribution": ("분배금", "분배금액", "distribution"),
    "distribution_rate": ("분배율", "distribution_rate"),
    "family_code": ("대표펀드코드", "종류형대표코드", "family_code"),
}
# Never aliases: 과표기준가격 (the tax-base price) is not a NAV, and 모펀드코드 (the master fund of a
# 모자형 structure) is not a share-class family.
"""Canonical column → accepted spellings (compared without case, spaces, underscores, brackets or %)."""

BLANKS = {"", "nan", "none", "null", "na", "n/a", "#n/a", "-", "—", "–", "－", "--"}
"""Cells that mean "no value" (vendors write ``-``, ``—``, ``N/A`` or Excel's ``#N/A`` when nothing was
published that day): every numeric column reads them as missing, never as unreadable."""


def parse_as_of(text: str, what: str = "--as-of") -> dt.date:
    """An evaluation date given as text (``what`` names the flag or option): read once, at the edge.

    Accepts what pandas reads as a moment (2025-06-30, 20250630, 2025/06/30, 2025-06-30T15:00 …) and keeps
    its calendar day, as the engine always did; anything else is a :class:`DataError` naming ``what``."""
    try:
        stamp = pd.Timestamp(text)
    except (ValueError, OverflowError):
        stamp = pd.NaT
    if pd.isna(stamp):
        raise DataError(f"{what} {text!r} is not a date; write it as YYYY-MM-DD")
    return stamp.date()


MONEY_UNITS = {"원": 1.0, "천원": 1e3, "만원": 1e4, "백만원": 1e6, "억원": 1e8, "억": 1e8, "백만": 1e6}
"""Units KOFIA-style headers write in brackets, e.g. ``설정원본(억원)``, as multiples of 원."""
_UNIT = re.compile(r"^(.*?)\s*[(\[]\s*([^()\[\]]+?)\s*[)\]]\s*$")


def _key(name: object) -> str:
    return re.sub(r"[\s_()\[\]%\-]", "", str(name).lower())


_LOOKUP = {_key(alias): canon for canon, names in ALIASES.items() for alias in names}


def split_unit(name: object) -> tuple[str, str | None]:
    """``설정원본(억원)`` → (``설정원본``, ``억원``); a name without a bracketed suffix has no unit."""
    m = _UNIT.match(str(name).strip())
    return (m.group(1), m.group(2)) if m else (str(name), None)


def canonical(name: object) -> str | None:
    """The canonical name of a column (a bracketed unit suffix ignored), or None when it is not one we know."""
    found = _LOOKUP.get(_key(name))
    if found is None:
        base, unit = split_unit(name)
        found = _LOOKUP.get(_key(base)) if unit is not None else None
    return found


def column_units(frame: pd.DataFrame) -> dict[str, tuple[str, str, float]]:
    """Money columns whose header names a unit: canonical name → (header, unit, factor to 원).

    A unit that is not a known money unit on a money column is an error (it cannot be converted safely).
    """
    out: dict[str, tuple[str, str, float]] = {}
    for col in frame.columns:
        canon = canonical(col)
        if canon not in ("set_amount", "net_assets") or canon in out:
            continue
        _, unit = split_unit(col)
        if unit is None:
            continue
        factor = MONEY_UNITS.get(unit.replace(" ", ""))
        if factor is None:
            raise DataError(
                f"column {col!r}: unit {unit!r} is not one of {', '.join(MONEY_UNITS)}; write the amount in 원"
            )
        out[canon] = (str(col), unit, factor)
    return out


def decode(raw: bytes, what: str) -> tuple[str, str]:
    """Text and the encoding it was in: utf-8-sig (BOM), utf-8, or cp949 (Korean Windows exports)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="strict"), "utf-8-sig"
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp949"), "cp949"
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{what} is neither UTF-8 nor CP949 text (byte {exc.start} cannot be decoded)"
        ) from exc


EXCEL_SUFFIXES = (".xlsx", ".xlsm", ".xls")
HEADER_SEARCH_ROWS = 30


def is_header(cells: list[str]) -> bool:
    """A header row names a date or fund-code column and has at least one other non-blank cell."""
    names = [str(c).strip() for c in cells if str(c).strip()]
    known = {canonical(c) for c in names}
    return len(names) >= 2 and bool(known & {"date", "fund_code"})


def frame_from_grid(grid: list[list[str]], what: str) -> pd.DataFrame | None:
    """Text cells → a frame under the first header row (title rows above it skipped); None if none found."""
    h = next((k for k, row in enumerate(grid[:HEADER_SEARCH_ROWS]) if is_header(row)), None)
    if h is None:
        return None
    header = [str(c).strip() for c in grid[h]]
    width = max((j + 1 for j, c in enumerate(header) if c), default=0)
    header = [c or f"column{j + 1}" for j, c in enumerate(header[:width])]
    body = [
        (list(r[:width]) + [""] * (width - len(r)))[:width]
        for r in grid[h + 1 :]
        if any(str(c).strip() for c in r)
    ]
    frame = (
        pd.DataFrame(body, columns=header, dtype=object)
        if body
        else pd.DataFrame(columns=header, dtype=object)
    )
    frame.attrs["header_row"] = h + 1
    return frame


def _no_header(p: Path, what: str) -> DataError:
    return DataError(
        f"{what} {p}: no header row found in its first {HEADER_SEARCH_ROWS} rows; the header must name a date "
        "column (기준일자 / date) or a fund code column (펀드코드 / fund_code) beside other columns"
    )


def _read_excel(p: Path, what: str, sheet: str | None) -> tuple[pd.DataFrame, str]:
    raw = p.read_bytes()
    kind = ss.kind_of(raw)
    try:
        if kind == "xlsx":
            sheets = ss.xlsx_sheets(p)
        elif kind == "xls":
            sheets = ss.xls_sheets(p)
        elif kind == "html":
            sheets = ss.html_sheets(decode(raw, f"{what} {p}")[0])
        else:
            raise DataError(
                f"{what} {p} has an Excel name but is neither an Excel workbook nor an HTML table"
            )
    except DataError:
        raise
    except Exception as exc:  # openpyxl / xlrd / lxml raise many unrelated types for a broken file
        raise DataError(f"{what} {p} is not a readable {kind} file ({type(exc).__name__}: {exc})") from exc
    if sheet is not None:
        chosen = [(n, g) for k, (n, g) in enumerate(sheets) if n == sheet or str(k + 1) == sheet]
        if not chosen:
            names = ", ".join(n for n, _ in sheets)
            raise DataError(f"{what} {p} has no sheet {sheet!r}; its sheets are: {names}")
        sheets = chosen
    for name, grid in sheets:
        frame = frame_from_grid(grid, what)
        if frame is not None:
            return frame, f"{kind}:{name}"
    raise _no_header(p, what)


def read_table(path: str | os.PathLike[str], what: str, sheet: str | None = None) -> tuple[pd.DataFrame, str]:
    """Read a CSV (any of the encodings above), Excel or Parquet file; cells come back as text.

    The second value says how it was read: the encoding, ``parquet``, or ``xlsx:<sheet>`` /
    ``xls:<sheet>`` / ``html:<table>``. ``sheet`` (name or 1-based number) picks an Excel sheet; by
    default the first sheet with a header row is used.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{what} file {p} does not exist")
    if p.suffix.lower() in (".parquet", ".pq"):
        if sheet is not None:
            raise DataError(f"--sheet {sheet!r} applies to Excel files (.xlsx, .xls); {what} {p} is not one")
        try:
            return pd.read_parquet(p), "parquet"
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise DataError(f"{what} {p} is not a readable Parquet file ({exc})") from exc
    if p.suffix.lower() in EXCEL_SUFFIXES:
        return _read_excel(p, what, sheet)
    if sheet is not None:
        raise DataError(f"--sheet {sheet!r} applies to Excel files (.xlsx, .xls); {what} {p} is not one")
    text, encoding = decode(p.read_bytes(), f"{what} {p}")
    try:
        frame = pd.read_csv(
            io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=True
        )
        if any(canonical(c) for c in frame.columns) or len(frame.columns) < 2:
            return frame, encoding  # the first line is a header (missing columns are reported later)
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        pass
    grid = [[c.strip() for c in row] for row in csv.reader(io.StringIO(text))]
    frame = frame_from_grid(grid, what)
    if frame is None:
        if not grid or len(grid[0]) < 2:
            raise DataError(f"{what} {p} is not a readable CSV file (no columns)")
        raise _no_header(p, what)
    return frame, encoding


def rename_known(frame: pd.DataFrame) -> pd.DataFrame:
    """Rename known columns to canonical names (first spelling wins); unknown columns keep their names."""
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for col in frame.columns:
        canon = canonical(col)
        if canon and canon not in taken:
            mapping[col] = canon
            taken.add(canon)
    return frame.rename(columns=mapping)


def _text(values: pd.Series) -> pd.Series:
    return values.astype(object).where(values.notna(), "").astype(str).str.strip()


def _on_uniques(values: pd.Series, fn: Callable[[pd.Series], pd.Series], fill: Any) -> np.ndarray:
    """Apply a text function to each distinct value once (dates repeat for every fund)."""
    codes, uniques = pd.factorize(values.astype(object), use_na_sentinel=True)
    done = fn(pd.Series(uniques, dtype=object)).to_numpy()
    missing = np.full(1, fill, dtype=done.dtype)
    return np.concatenate([done, missing])[np.where(codes < 0, len(done), codes)]


def clean_text(values: pd.Series) -> pd.Series:
    """Stripped text per cell ("" for missing), computed once per distinct value."""
    return pd.Series(_on_uniques(values, _text, ""), index=values.index, dtype=object)


def is_blank(values: pd.Series) -> np.ndarray:
    """Cells with no value: missing, empty, or one of :data:`BLANKS` (``-``, ``—``, ``N/A``, ``#N/A`` …)."""
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return values.isna().to_numpy()
    return _on_uniques(values, lambda u: _text(u).str.lower().isin(BLANKS), True).astype(bool)


EXCEL_EPOCH = pd.Timestamp("1899-12-30")
"""Excel serial dates count days from 1899-12-30 (so 45838 is 2025-06-30)."""


def _dates_from_text(text: pd.Series) -> pd.Series:
    text = _text(text).str.replace(r"([./-])\s+", r"\1", regex=True)
    text = text.str.split(r"[ T]", n=1, regex=True).str[0].str.rstrip(".")
    serial = text.str.fullmatch(r"[1-9]\d{4}(\.0+)?")
    text = text.str.replace(r"[./]", "-", regex=True)
    compact = text.str.fullmatch(r"\d{8}")
    text = text.where(~compact, text.str[:4] + "-" + text.str[4:6] + "-" + text.str[6:8])
    out = pd.Series(pd.to_datetime(text, format="%Y-%m-%d", errors="coerce"))
    if serial.any():
        days = pd.to_numeric(text[serial].str.split("-").str[0], errors="coerce")
        out[serial] = EXCEL_EPOCH + pd.to_timedelta(days, unit="D")
    return out


def parse_dates(values: pd.Series) -> pd.Series:
    """Dates from ``2024-01-02``, ``2024/01/02``, ``2024.01.02``, ``20240102`` or an Excel serial such as
    ``45838`` (NaT where unreadable)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return pd.Series(pd.to_datetime(values).dt.tz_localize(None).dt.normalize(), index=values.index)
    parsed = _on_uniques(values, _dates_from_text, np.datetime64("NaT", "ns"))
    return pd.Series(pd.DatetimeIndex(parsed), index=values.index)


def parse_numbers(values: pd.Series) -> pd.Series:
    """Floats from text like ``1,234.56`` (NaN where blank or unreadable; see :func:`is_blank`)."""
    if pd.api.types.is_numeric_dtype(values):
        return values.astype(float)
    fast = pd.to_numeric(values.astype(object), errors="coerce").astype(float)
    retry = fast.isna().to_numpy()
    if retry.any():
        slow = pd.to_numeric(_text(values[retry]).str.replace(",", "", regex=False), errors="coerce").astype(
            float
        )
        fast[retry] = slow.to_numpy()
    return fast
