"""Excel workbooks as grids of text cells: .xlsx (openpyxl), .xls (xlrd), and HTML tables saved as .xls.

Many Korean sites' "엑셀 다운로드" is an HTML table with an .xls name. It is detected by its first bytes and
read with lxml cell by cell, as text: ``pandas.read_html`` would turn cells into numbers, losing the
leading zeros of fund codes and the difference between a blank and an unreadable cell. Cells become text
the way the CSV path sees them: dates as ``YYYY-MM-DD``, whole numbers without ``.0``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np

Grid = list[list[str]]

OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP = b"PK\x03\x04"


def kind_of(raw: bytes) -> str:
    """``xlsx``, ``xls`` (BIFF), ``html`` or ``unknown``, from the file's first bytes (not its name)."""
    head = raw[:2048].lstrip(b"\xef\xbb\xbf \t\r\n")
    if raw.startswith(ZIP):
        return "xlsx"
    if raw.startswith(OLE2):
        return "xls"
    lowered = head.lower()
    if lowered.startswith(b"<") or b"<table" in lowered or b"<html" in lowered:
        return "html"
    return "unknown"


def cell_text(value: object) -> str:
    """One cell as the CSV path would read it."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if not np.isfinite(value):
            return ""
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value).strip()


def xlsx_sheets(path: Path) -> list[tuple[str, Grid]]:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        return [
            (ws.title, [[cell_text(v) for v in row] for row in ws.iter_rows(values_only=True)])
            for ws in book.worksheets
        ]
    finally:
        book.close()


def xls_sheets(path: Path) -> list[tuple[str, Grid]]:
    import xlrd

    book = xlrd.open_workbook(str(path))
    out: list[tuple[str, Grid]] = []
    for sheet in book.sheets():
        grid: Grid = []
        for r in range(sheet.nrows):
            row = []
            for c in range(sheet.ncols):
                cell = sheet.cell(r, c)
                if cell.ctype == xlrd.XL_CELL_DATE:
                    row.append(cell_text(xlrd.xldate.xldate_as_datetime(cell.value, book.datemode)))
                elif cell.ctype == xlrd.XL_CELL_ERROR:  # #N/A is stored as the code 42, not a price of 42
                    row.append(xlrd.error_text_from_code.get(cell.value, "#N/A"))
                else:
                    row.append(cell_text(cell.value))
            grid.append(row)
        out.append((sheet.name, grid))
    return out


def html_sheets(text: str) -> list[tuple[str, Grid]]:
    """Every ``<table>`` as a grid (``<th>`` and ``<td>`` alike; ``colspan`` repeated as blanks)."""
    import lxml.html

    doc = lxml.html.fromstring(text)
    out: list[tuple[str, Grid]] = []
    for k, table in enumerate(doc.iter("table")):
        grid: Grid = []
        for tr in table.iter("tr"):
            row: list[str] = []
            for cell in tr:
                if cell.tag not in ("td", "th"):
                    continue
                row.append(" ".join(cell.text_content().split()))
                span = cell.get("colspan", "1")
                row.extend([""] * (int(span) - 1 if span.isdigit() and 1 < int(span) < 100 else 0))
            grid.append(row)
        out.append((f"table{k + 1}", grid))
    return out
