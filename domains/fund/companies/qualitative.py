"""The analysts' 운용사 file (``--qualitative``): one row per company, one column per rubric pillar, 1–5.

CSV (utf-8, utf-8-sig or cp949; comma, tab, semicolon or ``|``) or Excel (.xlsx, .xls, or an HTML table
saved as .xls). Headers are Korean or English: the company column (``운용사``, ``운용회사``, ``company`` …),
each pillar by the rubric's name or id (``운용철학`` or ``philosophy``; spaces, case and a bracketed note
such as ``(1~5)`` do not matter), and optionally a date (``평가일``, ``date`` …), the analyst (``평가자``,
``analyst`` …) and a note column (``비고``, ``note``), which is ignored. Title rows above the header are
skipped. A score is mapped to 0–100 as the per-fund qualitative criteria are: ``(s − 1) · 25``.

Every problem is collected and reported at once, one line each, and nothing is rated from a bad file:
an unknown company, a column that is no pillar, a score that is not a number or lies outside 1–5 (so
outside 0–100 once mapped), a company listed twice, a row without any score, a date after the as-of date.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.domains.fund.agreement import parse_date
from evaluator.domains.fund.companies.rule import CompanyRule
from evaluator.domains.fund.data import decode, html_sheets, kind_of, xls_sheets, xlsx_sheets
from evaluator.domains.fund.types import DataError

HEADER_ROWS = 20
ROLES: dict[str, tuple[str, ...]] = {
    "company": ("운용사", "운용회사", "운용회사명", "운용사명", "자산운용사", "회사", "회사명", "company",
                "companyname", "manager", "assetmanager", "managementcompany"),
    "date": ("평가일", "평가일자", "평가기준일", "기준일", "기준일자", "date", "asof", "ratingdate"),
    "analyst": ("애널리스트", "평가자", "담당자", "담당애널리스트", "평가담당자", "analyst", "rater", "evaluator"),
    "note": ("비고", "메모", "의견", "코멘트", "note", "notes", "comment", "comments", "remark", "remarks"),
}  # fmt: skip
_BRACKET = re.compile(r"\s*[(\[（][^()\[\]（）]*[)\]）]\s*$")


class QualitativeError(DataError):
    """The qualitative file cannot be used; ``problems`` lists every reason, one line each."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            f"qualitative file {path} cannot be used ({len(problems)} problem(s); nothing was written):\n"
            + "\n".join(f"  - {p}" for p in problems)
        )


def key(name: object) -> str:
    """A header or company name compared without width, case, spaces, underscores or a trailing (note)."""
    text = unicodedata.normalize("NFKC", str(name if name is not None else "")).strip()
    text = _BRACKET.sub("", text) or text
    return re.sub(r"[\s_\-·.]", "", text.lower())


def company_key(name: object) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(name)).strip())


@dataclass(frozen=True)
class QualitativeRow:
    company: str
    row: int
    date: str | None
    analyst: str | None
    scores: dict[str, float]
    """Pillar id → 1–5 score (pillars left blank are absent)."""


@dataclass
class Qualitative:
    rows: dict[str, QualitativeRow]
    source: dict[str, Any]
    columns: dict[str, str] = field(default_factory=dict)
    """Pillar id → the header it was read from."""


def _grid(path: Path) -> tuple[list[list[str]], dict[str, Any]]:
    raw = path.read_bytes()
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm", ".xls"):
        kind = kind_of(raw)
        try:
            sheets = (
                xlsx_sheets(path) if kind == "xlsx"
                else xls_sheets(path) if kind == "xls"
                else html_sheets(decode(raw, f"qualitative file {path}")[0]) if kind == "html"
                else None
            )  # fmt: skip
        except Exception as exc:  # the Excel readers raise many unrelated types for a broken file
            raise DataError(f"qualitative file {path} is not a readable {kind} workbook ({exc})") from exc
        if sheets is None:
            raise DataError(f"qualitative file {path} has an Excel name but is not an Excel workbook")
        for name, grid in sheets:
            if _header(grid) is not None:
                return grid, {"path": str(path), "format": kind, "sheet": name}
        return (sheets[0][1] if sheets else []), {"path": str(path), "format": kind}
    if suffix not in (".csv", ".tsv", ".txt"):
        raise DataError(
            f"qualitative file {path} must be .csv, .tsv, .txt, .xlsx or .xls, not {suffix or '(none)'}"
        )
    text, encoding = decode(raw, f"qualitative file {path}")
    lines = text.splitlines()
    for delimiter in ",\t;|":  # the header row decides the separator
        grid = [
            [c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)
        ]
        if _header(grid) is not None and len(grid[_header(grid) or 0]) > 1:
            return grid, {"path": str(path), "format": "csv", "encoding": encoding}
    return [[c.strip() for c in r] for r in csv.reader(io.StringIO(text))], {
        "path": str(path),
        "format": "csv",
    }


_ROLE_OF = {key(alias): role for role, names in ROLES.items() for alias in names}


def _header(grid: list[list[str]]) -> int | None:
    return next(
        (
            i
            for i, row in enumerate(grid[:HEADER_ROWS])
            if any(_ROLE_OF.get(key(c)) == "company" for c in row)
        ),
        None,
    )


def _columns(
    header: list[str], rule: CompanyRule, problems: list[str]
) -> tuple[dict[str, int], dict[str, int]]:
    """(role → column, pillar id → column); every header that is neither is a problem."""
    pillar_of = {key(p.id): p.id for p in rule.pillars} | {key(p.name): p.id for p in rule.pillars}
    roles: dict[str, int] = {}
    pillars: dict[str, int] = {}
    names = ", ".join(p.name for p in rule.pillars) or "(none)"
    for j, cell in enumerate(header):
        if not str(cell).strip():
            continue
        k = key(cell)
        role, pid = _ROLE_OF.get(k), pillar_of.get(k)
        if pid is not None:
            if pid in pillars:
                problems.append(
                    f"column {cell!r} repeats pillar {pid!r} (already column {pillars[pid] + 1}); keep one"
                )
            pillars[pid] = j
        elif role is not None:
            if role in roles:
                problems.append(
                    f"column {cell!r} repeats the {role} column (already column {roles[role] + 1}); keep one"
                )
            roles[role] = j
        else:
            close = difflib.get_close_matches(str(cell).strip(), [p.name for p in rule.pillars], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"column {cell!r} is not a pillar of the rubric{hint}; its pillars are: {names}")
    return roles, pillars


def _score(text: str, where: str, problems: list[str]) -> float | None:
    cell = unicodedata.normalize("NFKC", text).strip()
    if cell.lower() in ("", "-", "nan", "none", "null", "n/a"):
        return None
    try:
        value = float(cell.replace(",", ""))
    except ValueError:
        problems.append(f"{where}: {cell!r} is not a score (write a number from 1 to 5)")
        return None
    if not 1.0 <= value <= 5.0:
        problems.append(
            f"{where}: score {cell} is outside the 1–5 scale (it would be {(value - 1) * 25:g} on 0–100, outside 0–100)"
        )
        return None
    return value


def read_qualitative(
    path: str | Path, rule: CompanyRule, companies: Iterable[str], *, as_of: dt.date | None = None
) -> Qualitative:
    """Read and check the file against the rule's pillars and the batch's companies (``as_of``: the
    reports' date; a row dated after it is refused, a later assessment cannot grade an earlier date)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"qualitative file {p} does not exist")
    if not rule.pillars:
        raise DataError(f"qualitative file {p} was given, but the rubric's company_rating has no pillars")
    grid, source = _grid(p)
    h = _header(grid)
    if h is None:
        raise QualitativeError(
            str(p),
            [f"no header row with a company column (운용사 / company) in its first {HEADER_ROWS} rows"],
        )
    problems: list[str] = []
    roles, pillars = _columns(grid[h], rule, problems)
    if not pillars:
        problems.append(
            f"no pillar column; the rubric's pillars are: {', '.join(x.name for x in rule.pillars)}"
        )
    known = {company_key(c): c for c in companies}
    names = {pl.id: pl.name for pl in rule.pillars}
    rows: dict[str, QualitativeRow] = {}
    for i, line in enumerate(grid[h + 1 :], start=h + 2):

        def cell(j: int, line: list[str] = line) -> str:
            return line[j] if j < len(line) else ""

        if not any(str(c).strip() for c in line):
            continue
        raw_company = cell(roles["company"]).strip()
        where = f"row {i}" + (f" ({raw_company})" if raw_company else "")
        scores = {pid: _score(cell(j), f"{where}, {names[pid]}", problems) for pid, j in pillars.items()}
        scores = {k: v for k, v in scores.items() if v is not None}
        if not raw_company:
            problems.append(f"row {i} has scores but no company name")
            continue
        name = known.get(company_key(raw_company))
        if name is None:
            close = difflib.get_close_matches(company_key(raw_company), list(known), n=1)
            hint = f" (did you mean {known[close[0]]!r}?)" if close else ""
            problems.append(f"{where}: company {raw_company!r} has no fund in the reports{hint}")
            continue
        if name in rows:
            problems.append(
                f"{where}: company {name!r} is listed twice (rows {rows[name].row} and {i}); keep one row"
            )
            continue
        date = None
        if "date" in roles and cell(roles["date"]).strip():
            try:
                date = parse_date(cell(roles["date"]))
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
            if date and as_of and dt.date.fromisoformat(date) > as_of:
                problems.append(f"{where}: assessed on {date}, after the reports' as-of date {as_of}")
        if not scores and not any(f"{where}," in q for q in problems):
            problems.append(f"{where}: no pillar score; give at least one or remove the row")
        analyst = cell(roles["analyst"]).strip() or None if "analyst" in roles else None
        rows[name] = QualitativeRow(name, i, date, analyst, scores)
    if problems:
        raise QualitativeError(str(p), problems)
    source["rows"] = len(rows)
    return Qualitative(rows=rows, source=source, columns={pid: grid[h][j] for pid, j in pillars.items()})
