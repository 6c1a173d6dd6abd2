"""The fast path for the monthly job's usual inputs: a clean wide CSV (기준일자 × one column per fund) or a
clean long CSV (기준일자, 펀드코드, 기준가격 rows, with descriptive columns).

The general reader takes every cell as text, melts a wide table into one row per fund and date, checks the
rows and pivots them back: right for every odd input, but ~50× slower than parsing the numbers directly.
Here the file is parsed once by pandas' C reader straight into floats, and the row checks become column
checks. It only answers when the result is provably the general path's (wide: every fund column parses as
numbers or a blank spelling — ``-``, ``N/A``, ``#N/A`` … in any case —, the dates all read, strictly rise and
never repeat, every fund column has a distinct, non-empty name that is not another known column; long: see
:func:`read_long_csv`).
Anything else returns None and the general path reads the file, so every message, reason code and accepted
spelling stays exactly as it is. pandas' C parser is used rather than pyarrow's CSV reader because both
paths must turn each cell's text into the same double: the general path parses text with pandas too, and
equality is asserted bit for bit in the tests.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.readers import (
    BLANKS,
    EXCEL_SUFFIXES,
    canonical,
    column_units,
    decode,
    parse_dates,
    rename_known,
)
from evaluator.domains.fund.data.rows import ADJUSTMENT_COLUMNS, add_issue, apply_units, meta_from_rows

ALL_BLANK = "기준가격이 모두 비어 있습니다 (값이 있는 기준일이 없습니다)"
"""The general path's reason for a fund column without a single price (kept word for word)."""


def _spellings(token: str) -> set[str]:
    """Every upper/lower-case spelling of a blank token (``is_blank`` compares lower-cased text)."""
    options = [(c.lower(), c.upper()) if c.isalpha() else (c,) for c in token]
    return {"".join(p) for p in itertools.product(*options)}


NA_VALUES = sorted(set().union(*(_spellings(t) for t in BLANKS)))


def _header(raw: bytes, encoding: str) -> list[str] | None:
    """The first line's column names as pandas names them (leading spaces skipped); None when odd."""
    end = raw.find(b"\n")
    first = (raw if end < 0 else raw[:end]).rstrip(b"\r")
    try:
        cells = next(csv.reader([first.decode(encoding)], skipinitialspace=True))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None
    if len(set(cells)) != len(cells) or any(c == "" for c in cells):
        return None  # pandas would rename these (A.1, Unnamed: 3): the general path
    return cells


def _encoding(raw: bytes, what: str) -> str:
    """The general reader's encoding decision (:func:`decode`) without decoding a plain-ASCII body.

    A newline byte is never inside a UTF-8 or CP949 character, and ASCII is valid in both, so when
    everything after the first line is ASCII the first line alone decides exactly as the whole file
    would (the same encoding, or the same error at the same byte)."""
    end = raw.find(b"\n")
    step = 1 << 23  # in 8 MiB slices: one copy of the whole body would cost more than checking it
    if end >= 0 and all(raw[i : i + step].isascii() for i in range(end, len(raw), step)):
        return decode(raw[:end], what)[1]
    return decode(raw, what)[1]


def _csv_head(path: str | Path) -> tuple[Path, str, list[str], list[str | None]] | None:
    """(path, encoding, column names, their canonical names) of a CSV file; None for Excel or Parquet.

    The encoding is decided on the whole file exactly as the general reader decides it; the bytes are then
    let go, and pandas reads the file itself in blocks (holding a 600 MB file's bytes while parsing it
    would add that much to the peak)."""
    p = Path(path)
    if p.suffix.lower() in EXCEL_SUFFIXES or p.suffix.lower() in (".parquet", ".pq"):
        return None
    raw = p.read_bytes()
    encoding = _encoding(raw, f"DATA {p}")
    header = _header(raw, encoding)
    return None if header is None else (p, encoding, header, [canonical(c) for c in header])


def read_wide_csv(path: str | Path, source: str) -> tuple[pd.DataFrame, dict[str, list[str]], int, list[str], str] | None:
    """(NAV matrix, issues, data rows, columns, encoding) of a clean wide CSV, or None to use the general path."""
    head = _csv_head(path)
    if head is None:
        return None
    source_path, encoding, header, known = head
    if known.count("date") != 1 or any(k is not None and k != "date" for k in known):
        return None  # a long layout, a title row above the header, or descriptive columns: the general path
    date_col = header[known.index("date")]
    funds = [c for c in header if c != date_col]
    names = [str(c).strip() for c in funds]
    if not funds or "" in names or len(set(names)) != len(names):
        return None
    try:  # the file itself (bytes, not decoded text: pandas' C reader is twice as fast on them)
        frame = pd.read_csv(
            source_path, encoding=encoding, dtype={date_col: str}, keep_default_na=False,
            na_values=NA_VALUES, skipinitialspace=True, engine="c",
        )
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
        return None
    kinds = frame.dtypes.drop(date_col).map(lambda d: d.kind)
    if list(frame.columns) != header or not kinds.isin(("f", "i")).all():
        return None  # a cell that is neither a number nor a blank spelling: the general path names it
    date_text = frame[date_col].astype(str).str.strip()
    if date_text.duplicated().any():
        return None  # repeated dates (or exact duplicate rows) are reported by the general path
    dates = parse_dates(frame[date_col])
    if dates.isna().any() or not (dates.is_monotonic_increasing and dates.is_unique):
        return None
    values = frame[funds].to_numpy(dtype=np.float64)
    priced = ~np.isnan(values)
    has_price = priced.any(axis=0)
    issues: dict[str, list[str]] = {}
    for name, ok in zip(names, has_price, strict=True):
        if not ok:
            add_issue(issues, name, ALL_BLANK)
    keep_rows = priced.any(axis=1)
    order = np.argsort(np.asarray(names, dtype=object)[has_price], kind="stable")
    kept = np.flatnonzero(has_price)[order]
    navs = pd.DataFrame(
        values[np.ix_(keep_rows, kept)], index=pd.DatetimeIndex(dates[keep_rows].to_numpy(), name="date"),
        columns=pd.Index([names[i] for i in kept], dtype=object).astype(str),  # the general path's label type
    )
    return navs, issues, len(frame), [str(c) for c in header], encoding


def read_long_csv(
    path: str | Path, source: str
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], int, list[str], str] | None:
    """(NAV matrix, row metadata, unit notes, data rows, columns, encoding) of a clean long CSV, or None.

    Clean: every column a known one (기준일자, 펀드코드, 기준가격 and descriptive ones such as 펀드명 or
    유형, each once, no adjustment columns), every price a number, every code non-empty, every date
    readable, and each fund's dates strictly rising in file order. Anything else is the general path's.
    """
    head = _csv_head(path)
    if head is None:
        return None
    source_path, encoding, header, known = head
    if None in known or len(set(known)) != len(known) or not {"date", "fund_code", "nav"} <= set(known):
        return None
    if set(known) & set(ADJUSTMENT_COLUMNS):
        return None
    date_col, code_col, nav_col = (header[known.index(k)] for k in ("date", "fund_code", "nav"))
    # dates and codes repeat on every row: as categories they are parsed and checked once per distinct value
    dtypes = {c: str for c in header} | {date_col: "category", code_col: "category", nav_col: np.float64}
    try:
        frame = pd.read_csv(
            source_path, encoding=encoding, dtype=dtypes, keep_default_na=False, na_values={nav_col: []},
            skipinitialspace=True, engine="c",
        )
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
        return None  # a price that is not a plain number (a blank, a typo, 1,234): the general path
    if list(frame.columns) != header:
        return None
    nav = frame[nav_col].to_numpy(dtype=np.float64)
    code_cat, date_cat = frame[code_col].cat, frame[date_col].cat
    names = pd.Index(code_cat.categories.astype(str))
    if np.isnan(nav).any() or (code_cat.codes < 0).any() or (date_cat.codes < 0).any():
        return None
    if (names.str.strip() != names).any() or (names == "").any():
        return None
    day_of_cat = parse_dates(pd.Series(date_cat.categories.astype(str), dtype=object))
    if day_of_cat.isna().any() or not day_of_cat.is_unique:
        return None  # an unreadable date, or one day spelled two ways: the general path
    code_rank = np.argsort(np.argsort(names.to_numpy(dtype=object), kind="stable"))  # category → sorted position
    day_rank = np.argsort(np.argsort(day_of_cat.to_numpy(), kind="stable"))
    code_id = code_rank[code_cat.codes.to_numpy()]
    day_id = day_rank[date_cat.codes.to_numpy()]
    if not _each_fund_rising(code_id, day_id, len(names)):
        return None  # a repeated or earlier date within a fund: the general path names it
    used_days = np.flatnonzero(np.bincount(day_id, minlength=len(day_of_cat)))
    values = np.full((len(day_of_cat), len(names)), np.nan)
    values[day_id, code_id] = nav
    days = np.sort(day_of_cat.to_numpy())
    present = np.flatnonzero(np.bincount(code_id, minlength=len(names)))
    navs = pd.DataFrame(
        values[np.ix_(used_days, present)], index=pd.DatetimeIndex(days[used_days], name="date"),
        columns=pd.Index(list(np.sort(names.to_numpy(dtype=object))[present]), dtype=object).astype(str),
    )
    notes: list[str] = []
    meta_cols = [c for c in frame.columns if c not in (date_col, code_col, nav_col)]
    row_meta = pd.DataFrame({"fund_code": frame[code_col].astype(str)}) if meta_cols else None
    if row_meta is not None:
        for c in meta_cols:
            row_meta[c] = frame[c]
        row_meta = rename_known(row_meta)
    meta = apply_units(meta_from_rows(row_meta) if row_meta is not None else
                       pd.DataFrame(index=pd.Index([], name="fund_code")), units_of(header, frame), source, notes)
    return navs, meta, notes, len(frame), list(header), encoding


def _each_fund_rising(code_id: np.ndarray, day_id: np.ndarray, funds: int) -> bool:
    """Whether each fund's dates strictly rise in file order. A file that keeps each fund's rows together
    (the usual long export) is checked in place; any other order through a stable sort by fund."""
    change = code_id[1:] != code_id[:-1]
    if int(np.count_nonzero(change)) == funds - 1:  # one block per fund: file order is each fund's order
        return not (~change & (day_id[1:] <= day_id[:-1])).any()
    order = np.argsort(code_id, kind="stable")  # each fund's rows, in file order
    codes, days = code_id[order], day_id[order]
    return not ((codes[1:] == codes[:-1]) & (days[1:] <= days[:-1])).any()


def units_of(header: list[str], frame: pd.DataFrame) -> dict[str, tuple[str, str, float]]:
    """The money columns' header units, read as the general path reads them (from the header alone)."""
    return column_units(frame.iloc[:0][list(header)])
