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
spelling stays exactly as it is. The numbers are parsed by pandas' C parser rather than pyarrow's CSV reader
because both paths must turn each cell's text into the same double: the general path parses text with
pandas too, and equality is asserted bit for bit in the tests. pyarrow only hashes the long layout's code
and date texts (:func:`_codes`), where it is ~3× faster than pandas' factorize.
"""

from __future__ import annotations

import csv
import itertools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluator.core.libc import libc_function
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


def _header(first: bytes, encoding: str) -> list[str] | None:
    """The first line's column names as pandas names them (leading spaces skipped); None when odd."""
    first = first.rstrip(b"\r")
    try:
        cells = next(csv.reader([first.decode(encoding)], skipinitialspace=True))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None
    if len(set(cells)) != len(cells) or any(c == "" for c in cells):
        return None  # pandas would rename these (A.1, Unnamed: 3): the general path
    return cells


def _encoding(path: Path, what: str) -> tuple[str, bytes, bool]:
    """The general reader's encoding decision (:func:`decode`), the first line and whether the file holds a
    space or a tab anywhere, without holding the file.

    A newline byte is never inside a UTF-8 or CP949 character, and ASCII is valid in both, so when
    everything after the first line is ASCII the first line alone decides exactly as the whole file
    would (the same encoding, or the same error at the same byte). The body is checked in 8 MiB slices
    read one at a time: holding a 600 MB file's bytes would add that much to the job's peak memory. The
    space check rides along (one ``memchr`` per slice): a file without one reads the same without pandas'
    ``skipinitialspace``, which slows its whole parse by a fifth."""
    piece = bytearray(1 << 23)  # one buffer, refilled: a fresh 8 MiB object per slice faulted its pages anew
    with path.open("rb") as f:
        first = f.readline()
        ascii_body, spaced = True, b" " in first or b"\t" in first
        while ascii_body and (n := f.readinto(piece)):
            chunk = piece if n == len(piece) else piece[:n]
            ascii_body = chunk.isascii()
            spaced = spaced or b" " in chunk or b"\t" in chunk
    if first.endswith(b"\n") and ascii_body:
        return decode(first[:-1], what)[1], first[:-1], spaced
    raw = path.read_bytes()  # a non-ASCII body (or one line only): decided on the whole file, as before
    end = raw.find(b"\n")
    return decode(raw, what)[1], raw if end < 0 else raw[:end], b" " in raw or b"\t" in raw


@dataclass(frozen=True)
class CsvHead:
    """A CSV file's encoding and header, decided once for both fast paths."""

    path: Path
    encoding: str
    header: list[str]
    known: list[str | None]
    spaced: bool = True
    """Whether a space or a tab stands anywhere in the file (else pandas need not look for them)."""


def csv_head(path: str | Path, what: str = "DATA") -> CsvHead | None:
    """The encoding (decided on the whole file exactly as the general reader decides it) and the column names
    of a CSV file; None for Excel or Parquet, or a header pandas would rename (the general path)."""
    p = Path(path)
    if p.suffix.lower() in EXCEL_SUFFIXES or p.suffix.lower() in (".parquet", ".pq"):
        return None
    encoding, first, spaced = _encoding(p, f"{what} {p}")
    header = _header(first, encoding)
    return None if header is None else CsvHead(p, encoding, header, [canonical(c) for c in header], spaced)


def read_wide_csv(
    path: str | Path, source: str, head: CsvHead | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]], int, list[str], str] | None:
    """(NAV matrix, issues, data rows, columns, encoding) of a clean wide CSV, or None to use the general path.

    ``head`` is the file's :func:`csv_head` when the caller has it already."""
    head = head or csv_head(path)
    if head is None:
        return None
    header, known = head.header, head.known
    if known.count("date") != 1 or any(k is not None and k != "date" for k in known):
        return None  # a long layout, a title row above the header, or descriptive columns: the general path
    date_col = header[known.index("date")]
    funds = [c for c in header if c != date_col]
    names = [str(c).strip() for c in funds]
    if not funds or "" in names or len(set(names)) != len(names):
        return None
    frame = _read_csv(head, (date_col,), {}, NA_VALUES)
    if frame is None:
        return None
    kinds = frame.dtypes.drop(date_col).map(lambda d: d.kind)
    if not kinds.isin(("f", "i")).all():
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
    navs = _nav_frame(values.T[np.ix_(kept, keep_rows)], dates[keep_rows].to_numpy(), [names[i] for i in kept])
    return navs, issues, len(frame), [str(c) for c in header], head.encoding


def read_long_csv(
    path: str | Path, source: str, head: CsvHead | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], int, list[str], str] | None:
    """(NAV matrix, row metadata, unit notes, data rows, columns, encoding) of a clean long CSV, or None.

    Clean: every column a known one (기준일자, 펀드코드, 기준가격 and descriptive ones such as 펀드명 or
    유형, each once, no adjustment columns), every price a number, every code non-empty, every date
    readable, and each fund's dates strictly rise in file order. Anything else is the general path's.
    """
    head = head or csv_head(path)
    if head is None:
        return None
    header, known = head.header, head.known
    if None in known or len(set(known)) != len(known) or not {"date", "fund_code", "nav"} <= set(known):
        return None
    if set(known) & set(ADJUSTMENT_COLUMNS):
        return None
    date_col, code_col, nav_col = (header[known.index(k)] for k in ("date", "fund_code", "nav"))
    frame = _read_long_frame(head, date_col, code_col, nav_col)
    if frame is None:
        return None
    nav = frame[nav_col].to_numpy(dtype=np.float64)
    with ThreadPoolExecutor(2) as pool:  # pyarrow hashes without the GIL: both columns at once
        coded = tuple(pool.map(_codes, (frame[code_col], frame[date_col])))
    if np.isnan(nav).any() or coded[0] is None or coded[1] is None:
        return None
    rows = len(frame)
    meta_cols = [c for c in frame.columns if c not in (date_col, code_col, nav_col)]
    row_meta = None
    if meta_cols:
        row_meta = pd.DataFrame({"fund_code": frame[code_col].astype(str)})
        for c in meta_cols:
            row_meta[c] = frame[c]
        row_meta = rename_known(row_meta)
    del frame  # 20 million dates and codes as text: let them go before the matrix is built
    (code_of_row, code_text), (date_of_row, date_text) = coded
    names = pd.Index(code_text, dtype=object)
    if (names.str.strip() != names).any() or (names == "").any():
        return None
    day_of_cat = parse_dates(pd.Series(date_text, dtype=object))
    if day_of_cat.isna().any() or not day_of_cat.is_unique:
        return None  # an unreadable date, or one day spelled two ways: the general path
    code_id = _sorted_ids(names.to_numpy(dtype=object), code_of_row)
    day_id = _sorted_ids(day_of_cat.to_numpy(), date_of_row)
    del code_of_row, date_of_row
    if not _each_fund_rising(code_id, day_id, len(names)):
        return None  # a repeated or earlier date within a fund: the general path names it
    by_fund = np.full((len(names), len(day_of_cat)), np.nan)
    by_fund[code_id, day_id] = nav  # every day and every fund occurs in some row: no empty row or column
    navs = _nav_frame(by_fund, np.sort(day_of_cat.to_numpy()), list(np.sort(names.to_numpy(dtype=object))))
    notes: list[str] = []
    meta = apply_units(meta_from_rows(row_meta) if row_meta is not None else
                       pd.DataFrame(index=pd.Index([], name="fund_code")), units_of(header), source, notes)
    return navs, meta, notes, rows, list(header), head.encoding


def _nav_frame(by_fund: np.ndarray, dates: np.ndarray, names: list[str]) -> pd.DataFrame:
    """The NAV matrix (dates × funds) from its (funds × dates) C-ordered block.

    pandas keeps a float frame as one such block: ``DataFrame(matrix)`` copies a (dates × funds) matrix into
    that shape. Handing over the block's transpose without a copy gives the very same layout (so every later
    reduction sums in the same order) and saves a 160 MB copy."""
    return pd.DataFrame(
        by_fund.T, copy=False, index=pd.DatetimeIndex(dates, name="date"),
        columns=pd.Index(names, dtype=object).astype(str),  # the general path's label type
    )


def give_back_freed_memory() -> None:
    """Return memory freed after a big read to the operating system (glibc and pyarrow's pool only).

    pandas parses a big file in several threads, and glibc keeps what each thread freed in that thread's own
    arena: after reading a 600 MB long file about 1 GB stays with the process, which no later step (all in
    the main thread) can reuse, so the job's peak was the read's leftovers plus everything after. Dask's
    workers trim memory the same way (``malloc_trim``); there is no library call for it. Elsewhere than
    glibc this does nothing."""
    pa.default_memory_pool().release_unused()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


_MALLOC_TRIM = libc_function("malloc_trim")


def _sorted_ids(keys: np.ndarray, first_seen: np.ndarray) -> np.ndarray:
    """Each row's key as its position among the sorted keys (stable), as int32 (half the size of int64).

    ``first_seen`` numbers the keys in the order the file first shows them; a file sorted by fund and date
    already shows them sorted, and its 20 million ids are used as they are."""
    rank = np.argsort(np.argsort(keys, kind="stable")).astype(np.int32)
    if np.array_equal(rank, np.arange(len(rank), dtype=np.int32)):
        return first_seen.astype(np.int32, copy=False)
    return rank[first_seen]


def _read_long_frame(head: CsvHead, date_col: str, code_col: str, nav_col: str) -> pd.DataFrame | None:
    """The long file as pandas' C reader parses it: prices as floats, every other column as text."""
    described = {c: str for c in head.header if c not in (date_col, code_col, nav_col)}
    return _read_csv(head, (date_col, code_col), {**described, nav_col: np.float64}, {nav_col: []})


def _read_csv(head: CsvHead, texts: tuple[str, ...], dtypes: dict[str, Any], na_values: Any) -> pd.DataFrame | None:
    """The file as pandas' C reader parses it (the bytes, not decoded text: twice as fast), with ``texts``
    as text; None when pandas cannot read it (a price that is not a number, a ragged row …).

    The ``texts`` columns (dates, codes) are left for pandas to infer: on the usual file that is text, read
    2–4× faster than with an explicit ``str`` dtype (pandas converts such columns a second time, and the
    whole read slows). A column inferred as anything else (dates or codes written as bare digits) would have
    lost its text, so the file is then read again with ``str``."""
    for forced in ({}, dict.fromkeys(texts, str)):
        try:
            frame = pd.read_csv(
                head.path, encoding=head.encoding, dtype={**dtypes, **forced}, keep_default_na=False,
                na_values=na_values, skipinitialspace=head.spaced, engine="c",
            )
        except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
            return None
        if list(frame.columns) != head.header:
            return None
        if all(pd.api.types.is_string_dtype(frame[c].dtype) for c in texts):
            return frame
    return None


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]] | None:
    """Each row's index into the column's distinct texts (in first-seen order), and those texts; None when a
    cell is missing. Hashed by pyarrow: pandas' own factorize takes ~5× longer on 20 million strings."""
    values = pa.array(column.array)  # pandas' arrow-backed text hands over its buffers; other text is converted
    if values.null_count:
        return None
    distinct = pc.unique(values)
    return pc.index_in(values, value_set=distinct).to_numpy(), [str(x) for x in distinct.to_pylist()]


def _each_fund_rising(code_id: np.ndarray, day_id: np.ndarray, funds: int) -> bool:
    """Whether each fund's dates strictly rise in file order. A file that keeps each fund's rows together
    (the usual long export) is checked in place; any other order through a stable sort by fund."""
    change = code_id[1:] != code_id[:-1]
    if int(np.count_nonzero(change)) == funds - 1:  # one block per fund: file order is each fund's order
        return not (~change & (day_id[1:] <= day_id[:-1])).any()
    order = np.argsort(code_id, kind="stable")  # each fund's rows, in file order
    codes, days = code_id[order], day_id[order]
    return not ((codes[1:] == codes[:-1]) & (days[1:] <= days[:-1])).any()


def units_of(header: list[str]) -> dict[str, tuple[str, str, float]]:
    """The money columns' header units, read as the general path reads them (from the header alone)."""
    return column_units(pd.DataFrame(columns=pd.Index(list(header), dtype=object)))
