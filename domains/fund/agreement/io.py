"""Reading the firm's analysts' grades (the experts file) for ``evaluator fund agreement``.

The file is CSV (utf-8, utf-8-sig or cp949, through :func:`evaluator.domains.fund.data.readers.decode`; comma,
tab, semicolon or ``|`` separated) or Excel ``.xlsx``/``.xlsm`` (one small function, :func:`excel_rows`).
Column names are Korean or English: ``펀드코드``/``fund_code`` and ``등급``/``grade`` are required,
``평가자``/``analyst`` and ``기준일자``/``as_of`` optional. Title lines above the header (common in
exported workbooks) are skipped: the header is the first of the top rows that names both required columns.

Grades are ``1``…``K`` (K from the rubric), also written ``1등급``, ``1.0`` or in full-width digits. A fund
listed twice by the same analyst with the same grade counts once (the repeat is reported); with
different grades the file is refused, because either choice would be a guess. A fund code with a
blank grade is not graded (listed, never compared).
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.domains.fund.data import ALIASES, BLANKS, decode
from evaluator.domains.fund.types import DataError

HEADER_SEARCH_ROWS = 20
UNNAMED_ANALYST = "(미기재)"
COLUMNS: dict[str, tuple[str, ...]] = {
    "fund_code": (*ALIASES["fund_code"], "펀드 코드"),
    "grade": (
        "등급", "grade", "평가등급", "전문가등급", "최종등급", "애널리스트등급", "expert_grade", "analyst_grade",
        "rating",
    ),
    "analyst": ("평가자", "analyst", "애널리스트", "평가담당자", "담당자", "담당애널리스트", "rater", "evaluator"),
    "as_of": ("기준일자", "기준일", "평가기준일", "평가기준일자", "평가일", "평가일자", "as_of", "asof", "date"),
}  # fmt: skip
CSV_SUFFIXES = (".csv", ".txt", ".tsv")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
_GRADE = re.compile(r"(\d+)(?:\.0+)?\s*(?:등급|급)?")
_DATE = re.compile(r"(\d{4})[-./]?\s*(\d{1,2})[-./]?\s*(\d{1,2})\.?")


def _key(name: object) -> str:
    text = unicodedata.normalize("NFKC", str(name if name is not None else "")).lower()
    return re.sub(r"[\s_()\[\]%\-*]", "", text)


_LOOKUP = {_key(alias): canon for canon, names in COLUMNS.items() for alias in names}


@dataclass(frozen=True)
class ExpertGrade:
    """One analyst's grade for one fund; ``row`` is the 1-based line/row in the file (for messages)."""

    fund_code: str
    grade: int
    analyst: str | None
    as_of: str | None
    row: int


@dataclass
class Experts:
    """The usable grades plus everything that was set aside, so nothing disappears unreported."""

    grades: list[ExpertGrade]
    source: dict[str, Any]
    has_analyst: bool
    blank_grades: list[dict[str, Any]] = field(default_factory=list)
    repeated: list[dict[str, Any]] = field(default_factory=list)
    other_dates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def analysts(self) -> list[str]:
        return sorted({g.analyst for g in self.grades if g.analyst is not None})


def excel_rows(path: Path) -> tuple[list[list[Any]], str]:
    """Rows of the first sheet that has a usable header (cached values for formulas), and its name.

    A cell merged down a column (an analyst's name over their block of funds) counts for every row it
    covers, as it reads on screen; merges across columns (titles) are left alone.
    """
    try:
        from openpyxl import load_workbook
    except ImportError as exc:  # pragma: no cover - openpyxl is a declared dependency
        raise DataError("reading Excel files needs openpyxl (pip install openpyxl)") from exc
    try:
        book = load_workbook(path, data_only=True)  # not read-only: merged ranges are only known this way
    except Exception as exc:  # openpyxl raises zip, XML and its own errors for a damaged file
        raise DataError(f"experts file {path} is not a readable Excel workbook ({exc})") from exc
    first: tuple[list[list[Any]], str] | None = None
    for ws in book.worksheets:
        rows = [list(r) for r in ws.iter_rows(values_only=True)]
        for merged in ws.merged_cells.ranges:
            if merged.min_col != merged.max_col or merged.min_row > len(rows):
                continue
            col = merged.min_col - 1
            top = rows[merged.min_row - 1][col]
            for r in range(merged.min_row, min(merged.max_row, len(rows))):
                rows[r][col] = top
        if _find_header(rows) is not None:
            return rows, ws.title
        first = first or (rows, ws.title)
    return first or ([], "")


def _csv_rows(path: Path) -> tuple[list[list[Any]], str]:
    text, encoding = decode(path.read_bytes(), f"experts file {path}")
    sample = "\n".join(text.splitlines()[:30])
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        sniffed = ","
    first = [list(r) for r in csv.reader(text.splitlines(), delimiter=sniffed)]
    for other in ",\t;|".replace(sniffed, ""):  # the sniffer guesses; the header row decides
        if _find_header(first) is not None:
            break
        rows = [list(r) for r in csv.reader(text.splitlines(), delimiter=other)]
        try:
            if _find_header(rows) is not None:
                return rows, encoding
        except DataError:
            continue
    return first, encoding


def _find_header(rows: list[list[Any]]) -> tuple[int, dict[str, int]] | None:
    for i, row in enumerate(rows[:HEADER_SEARCH_ROWS]):
        found = _header_columns(row)
        if "fund_code" in found and "grade" in found:
            return i, found
    return None


def _header_columns(row: list[Any]) -> dict[str, int]:
    found: dict[str, int] = {}
    for j, cell in enumerate(row):
        canon = _LOOKUP.get(_key(cell))
        if canon is None:
            continue
        if canon in found:
            raise DataError(
                f"experts file has two {canon} columns ({row[found[canon]]!r} and {cell!r}); keep one"
            )
        found[canon] = j
    return found


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # Excel stores 1 and KR codes typed as numbers as floats
    text = unicodedata.normalize("NFKC", str(value)).strip()
    return "" if text.lower() in BLANKS else text


def parse_grade(value: Any, top: int) -> int | None:
    """The grade in a cell (None when blank); ValueError with the reason when it is not 1…``top``."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a grade")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{value:g} is not a whole grade")
    text = _text(value)
    if not text:
        return None
    if set(text) == {"★"}:
        text = str(len(text))  # a star scale: ★★★★ is grade 4
    match = _GRADE.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not a grade (write 1…{top} or 1등급…{top}등급)")
    grade = int(match.group(1))
    if not 1 <= grade <= top:
        raise ValueError(f"grade {text!r} is outside the rubric's 1…{top} (1등급 best … {top}등급)")
    return grade


def parse_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` from a date cell or text like 2024-12-31, 2024.12.31, 2024/12/31, 20241231."""
    if isinstance(value, dt.datetime | dt.date):
        return value.strftime("%Y-%m-%d")
    text = _text(value)
    if not text:
        return None
    match = _DATE.fullmatch(text.split(" ")[0].split("T")[0])
    if not match:
        raise ValueError(f"{text!r} is not a date")
    try:
        return dt.date(*(int(g) for g in match.groups())).isoformat()
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a date") from exc


def _raise_problems(path: Path, what: str, problems: list[str]) -> None:
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise DataError(f"experts file {path}: {what}: {shown}")


def read_rows(path: str | Path) -> tuple[list[list[Any]], dict[str, Any]]:
    """All rows of the file as cells, and where they came from (format, encoding or sheet)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"experts file {p} does not exist")
    suffix = p.suffix.lower()
    if suffix in EXCEL_SUFFIXES:
        rows, sheet = excel_rows(p)
        return rows, {"path": str(p), "format": "xlsx", "sheet": sheet}
    if suffix == ".xls":
        raise DataError(f"experts file {p} is an old .xls workbook; save it as .xlsx or CSV")
    if suffix not in CSV_SUFFIXES:
        raise DataError(f"experts file {p} must be .csv, .tsv, .txt or .xlsx, not {suffix or '(no suffix)'}")
    rows, encoding = _csv_rows(p)
    return rows, {"path": str(p), "format": "csv", "encoding": encoding}


def read_experts(path: str | Path, top_grade: int, reports_as_of: str | None = None) -> Experts:
    """Read and check the experts file against the rubric's grades 1…``top_grade``.

    With a ``기준일자`` column holding several dates, only the rows dated ``reports_as_of`` are kept (the
    others are listed); if none is, the file is refused rather than compared with the wrong day.
    """
    p = Path(path)
    rows, source = read_rows(p)
    header = _find_header(rows)
    if header is None:
        top = [r for r in rows[:HEADER_SEARCH_ROWS] if any(_text(c) for c in r)]
        seen = next((r for r in top if _header_columns(r)), top[0] if top else [])
        found = _header_columns(seen)
        names = ", ".join(repr(_text(c)) for c in seen if _text(c)) or "none"
        missing = (
            "grade column (등급/grade)" if "fund_code" in found else "fund code column (펀드코드/fund_code)"
        )
        raise DataError(f"experts file {p} has no {missing}; columns found: {names}")
    start, cols = header
    source.update(header_row=start + 1)
    parsed: list[ExpertGrade] = []
    blank: list[dict[str, Any]] = []
    bad_grades: list[str] = []
    bad_other: list[str] = []
    for i, row in enumerate(rows[start + 1 :], start + 2):
        cell = lambda name, row=row: row[cols[name]] if name in cols and cols[name] < len(row) else None  # noqa: E731
        code = _text(cell("fund_code"))
        try:
            grade = parse_grade(cell("grade"), top_grade)
        except ValueError as exc:
            bad_grades.append(f"row {i}: {exc}")
            continue
        if not code:
            if grade is not None:
                bad_other.append(f"row {i} has grade {grade} but no fund code")
            continue
        try:
            as_of = parse_date(cell("as_of")) if "as_of" in cols else None
        except ValueError as exc:
            bad_other.append(f"row {i}: 기준일자 {exc}")
            continue
        analyst = (_text(cell("analyst")) or UNNAMED_ANALYST) if "analyst" in cols else None
        if grade is None:
            blank.append({"fund_code": code, "analyst": analyst, "row": i})
            continue
        parsed.append(ExpertGrade(code, grade, analyst, as_of, i))
    _raise_problems(p, f"grades must be 1…{top_grade} (1등급…{top_grade}등급)", bad_grades)
    _raise_problems(p, "unreadable rows", bad_other)
    experts = Experts(grades=parsed, source=source, has_analyst="analyst" in cols, blank_grades=blank)
    if "as_of" in cols:
        _pick_date(experts, p, reports_as_of)
    _merge_repeats(experts, p)
    source["rows_used"] = len(experts.grades)
    if not experts.grades:
        raise DataError(f"experts file {p} has no graded fund (every grade cell is blank)")
    return experts


def _pick_date(experts: Experts, path: Path, reports_as_of: str | None) -> None:
    dates = sorted({g.as_of for g in experts.grades if g.as_of})
    undated = [g for g in experts.grades if g.as_of is None]
    if len(dates) <= 1:
        if dates and reports_as_of and dates[0] != reports_as_of:
            experts.notes.append(f"전문가 기준일자 {dates[0]}와 엔진 기준일자 {reports_as_of}가 다릅니다")
        return
    if reports_as_of not in dates:
        raise DataError(
            f"experts file {path} holds grades for several dates ({', '.join(dates)}) and none is the reports' "
            f"as_of {reports_as_of}; keep one date's grades"
        )
    keep = [g for g in experts.grades if g.as_of == reports_as_of or g.as_of is None]
    experts.other_dates = [
        {"fund_code": g.fund_code, "analyst": g.analyst, "as_of": g.as_of, "row": g.row}
        for g in experts.grades
        if g.as_of not in (reports_as_of, None)
    ]
    experts.grades = keep
    if undated:
        experts.notes.append(
            f"기준일자가 비어 있는 {len(undated)}개 행은 {reports_as_of} 평가로 간주했습니다"
        )


def _merge_repeats(experts: Experts, path: Path) -> None:
    by_key: dict[tuple[str, str | None], list[ExpertGrade]] = defaultdict(list)
    for g in experts.grades:
        by_key[(g.fund_code, g.analyst)].append(g)
    conflicts = []
    for (code, analyst), items in by_key.items():
        if len({g.grade for g in items}) > 1:
            who = f" by {analyst}" if analyst else ""
            listed = ", ".join(f"{g.grade} (row {g.row})" for g in items)
            conflicts.append(f"{code}{who}: {listed}")
        elif len(items) > 1:
            experts.repeated.append(
                {
                    "fund_code": code,
                    "analyst": analyst,
                    "grade": items[0].grade,
                    "rows": [g.row for g in items],
                }
            )
    what = "the same fund has different grades"
    if conflicts and not experts.has_analyst:
        what += " (if several analysts graded it, add a 평가자/analyst column)"
    _raise_problems(path, what, conflicts)
    experts.grades = [items[0] for items in by_key.values()]
