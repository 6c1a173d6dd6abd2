"""Each rated fund's total-return NAV index beside its benchmark, one ``fund_series`` row per fund per batch.

A report folder carries them as ``nav_series.jsonl`` (written by ``fund evaluate``, the upload job and
``fund history``); :func:`read_series` checks every line before anything is stored, and the batch's one
transaction stores them with its reports. A folder written before the file existed stores none, and the
fund page says so. Reads go through the same scope as the reports: out of scope and unknown look alike.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import operator
from pathlib import Path
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.queries import visible
from evaluator.app.storage.tables import FundDocument, FundResult, FundSeries
from evaluator.core import forked
from evaluator.core.fast_json import loads
from evaluator.core.forked import Forked
from evaluator.domains.fund.reports import SERIES_FILE

MAX_POINTS = 400  # the writer keeps at most 260; a little room, and no more
MAX_LINE = 64 * 1024
NUMBERS = {int, float, type(None)}


class SeriesError(ValueError):
    """A ``nav_series.jsonl`` line that cannot be stored as it is."""


def _levels(values: Any, n: int, name: str, *, required: bool) -> None:
    if values is None and not required:
        return
    if not isinstance(values, list) or len(values) != n:
        raise SeriesError(f"{name} must be a list of {n} numbers")
    if values[0] is None:
        raise SeriesError(f"{name} must start with a number")
    kinds = set(map(type, values))  # type() by design: True is not a level; one C-level pass per list
    if not kinds <= NUMBERS or (float in kinds and not all(map(math.isfinite, filter(None, values)))):
        raise SeriesError(f"{name} must hold only finite numbers (null for a gap)")


def check_line(doc: Any) -> str:
    """The fund code of a valid series document; :class:`SeriesError` naming the first problem otherwise."""
    if not isinstance(doc, dict) or not isinstance(doc.get("fund_code"), str):
        raise SeriesError("not an object with a fund_code")
    days, scale = doc.get("days"), doc.get("scale")
    if not isinstance(days, list) or not 1 <= len(days) <= MAX_POINTS:
        raise SeriesError(f"days must be a list of 1 to {MAX_POINTS} day numbers")
    if set(map(type, days)) != {int} or days[0] != 0 or not all(map(operator.lt, days, days[1:])):
        raise SeriesError("days must be whole days counted from start (0 first), increasing")
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale <= 1e6:
        raise SeriesError("scale must be a positive number")
    try:
        dt.date.fromisoformat(str(doc.get("start")))
    except ValueError:
        raise SeriesError(f"start {str(doc.get('start'))[:20]!r} is not a date") from None
    _levels(doc.get("fund"), len(days), "fund", required=True)
    _levels(doc.get("benchmark"), len(days), "benchmark", required=False)
    name = doc.get("benchmark_name")
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise SeriesError("benchmark_name must be a short text")
    return str(doc["fund_code"])


class SeriesCheck:
    """``nav_series.jsonl`` being checked line by line in a worker (:mod:`~evaluator.core.forked`) while the
    caller checks the reports; :meth:`finish` adds what needs them (each line's fund is a rated one)."""

    def __init__(self, lines: list[str], checked: Forked[list[tuple[int, str | None, str | None]]] | None,
                 problem: str | None = None) -> None:
        self._lines, self._checked, self._problem = lines, checked, problem

    def cancel(self) -> None:
        """Stop the check (the caller failed before it needed it)."""
        if self._checked is not None:
            self._checked.cancel()

    def finish(self, rated: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
        """(fund code, line) for each fund, and every problem found, in line order."""
        if self._problem is not None:
            return [], [self._problem]
        if self._checked is None:
            return [], []
        out: list[tuple[str, str]] = []
        problems: list[str] = []
        seen: set[str] = set()
        for number, code, error in self._checked.result():
            if error is None and (code not in rated or code in seen):
                error = f"fund {str(code)[:50]!r} is not a rated fund of this batch, or repeated"
            if error is not None or code is None:
                problems.append(f"{SERIES_FILE} line {number}: {error}")
                continue
            seen.add(code)
            out.append((code, self._lines[number - 1]))
        return out, problems


def check_series(folder: Path, text: str | None = None) -> SeriesCheck:
    """Start checking the folder's ``nav_series.jsonl`` (none when the folder has no such file); ``text``:
    the file's text as just written, read instead of the file."""
    path = folder / SERIES_FILE
    if not path.is_file():
        return SeriesCheck([], None)
    try:
        lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return SeriesCheck([], None, f"{SERIES_FILE}: not readable ({type(exc).__name__})")
    return SeriesCheck(lines, forked.start(_check_lines, lines))


def _check_lines(lines: list[str]) -> list[tuple[int, str | None, str | None]]:
    """(line number, fund code, None) for each valid non-empty line, (line number, None, problem) otherwise:
    small, since it comes back from the worker (the lines themselves the caller has)."""
    checked: list[tuple[int, str | None, str | None]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            if len(line) > MAX_LINE:
                raise SeriesError(f"longer than {MAX_LINE} characters")
            checked.append((number, check_line(loads(line)), None))
        except (json.JSONDecodeError, SeriesError) as exc:
            checked.append((number, None, str(exc)))
    return checked


def read_series(
    folder: Path, rated: set[str], text: str | None = None
) -> tuple[list[tuple[str, str]], list[str]]:
    """(fund code, line) for each fund in ``nav_series.jsonl`` (none when the folder has no such file),
    and every problem found (a line of a fund that is not rated in the folder is one). ``text``: the
    file's text as just written, read instead of the file."""
    return check_series(folder, text).finish(rated)


def series_rows(run_id: int, series: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"run_id": run_id, "fund_code": code, "series": text} for code, text in series]


def chart_document(text: str | None) -> dict[str, Any] | None:
    """A stored line as the pages and the API show it: dates, and both lines rebased to 100."""
    if text is None:
        return None
    doc = json.loads(text)
    start, scale = dt.date.fromisoformat(doc["start"]), float(doc["scale"])

    def levels(values: list[float | None] | None) -> list[float | None] | None:
        return None if values is None else [None if v is None else round(v / scale, 4) for v in values]

    return {
        "window": doc.get("window"),
        "dates": [(start + dt.timedelta(days=d)).isoformat() for d in doc["days"]],
        "fund": levels(doc["fund"]),
        "benchmark": levels(doc.get("benchmark")),
        "benchmark_name": doc.get("benchmark_name"),
    }


def fund_report_and_series(session: Session, who: Principal, code: str) -> tuple[str, str | None, Any] | None:
    """The newest visible report of ``code``, its batch's series line (None for a batch stored without
    one) and its as-of date; None when the fund is unknown or out of scope (they look alike)."""
    stmt = (
        select(FundDocument.report, FundSeries.series, FundResult.as_of)
        .select_from(FundResult)
        .join(
            FundDocument,
            and_(FundDocument.run_id == FundResult.run_id, FundDocument.fund_code == FundResult.fund_code),
        )
        .outerjoin(
            FundSeries,
            and_(FundSeries.run_id == FundResult.run_id, FundSeries.fund_code == FundResult.fund_code),
        )
        .where(FundResult.fund_code == code, visible(who))
        .order_by(FundResult.as_of.desc(), FundResult.run_id.desc())
        .limit(1)
    )
    row = session.execute(stmt).first()
    return (row[0], row[1], row[2]) if row is not None else None
