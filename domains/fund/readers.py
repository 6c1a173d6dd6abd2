"""Reading analysts' tables: CSV in utf-8 / utf-8-sig / cp949, or Parquet; English or Korean column names.

Everything is read as text first so a blank cell, an unreadable number and a real value stay distinct;
:func:`parse_dates` and :func:`parse_numbers` then say exactly which cells could not be read.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

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
}
"""Canonical column → accepted spellings (compared without case, spaces, underscores, brackets or %)."""

BLANKS = {"", "nan", "none", "null", "na", "n/a", "-"}


class DataError(ValueError):
    """An input file cannot be used at all (unreadable, or a required column is missing)."""


def _key(name: object) -> str:
    return re.sub(r"[\s_()\[\]%\-]", "", str(name).lower())


_LOOKUP = {_key(alias): canon for canon, names in ALIASES.items() for alias in names}


def canonical(name: object) -> str | None:
    """The canonical name of a column, or None when it is not one we know."""
    return _LOOKUP.get(_key(name))


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


def read_table(path: str | os.PathLike[str], what: str) -> tuple[pd.DataFrame, str]:
    """Read a CSV (any of the encodings above) or Parquet file; CSV cells come back as text."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{what} file {p} does not exist")
    if p.suffix.lower() in (".parquet", ".pq"):
        try:
            return pd.read_parquet(p), "parquet"
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise DataError(f"{what} {p} is not a readable Parquet file ({exc})") from exc
    text, encoding = decode(p.read_bytes(), f"{what} {p}")
    try:
        frame = pd.read_csv(
            io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=True
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{what} {p} is not a readable CSV file ({exc})") from exc
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
    """Cells with no value: missing, empty, or written as nan/none/null/na/n/a/-."""
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return values.isna().to_numpy()
    return _on_uniques(values, lambda u: _text(u).str.lower().isin(BLANKS), True).astype(bool)


def _dates_from_text(text: pd.Series) -> pd.Series:
    text = _text(text).str.split(r"[ T]", n=1, regex=True).str[0].str.rstrip(".")
    text = text.str.replace(r"[./]", "-", regex=True)
    compact = text.str.fullmatch(r"\d{8}")
    text = text.where(~compact, text.str[:4] + "-" + text.str[4:6] + "-" + text.str[6:8])
    return pd.Series(pd.to_datetime(text, format="%Y-%m-%d", errors="coerce"))


def parse_dates(values: pd.Series) -> pd.Series:
    """Dates from ``2024-01-02``, ``2024/01/02``, ``2024.01.02``, ``20240102`` (NaT where unreadable)."""
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
