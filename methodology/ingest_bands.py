"""Grade bands in every common form: shares, cumulative ranges, a cumulative column, or sentences.

``10 / 22.5 / 35 / 22.5 / 10``; ``상위 10% 초과 30% 이내``; ``상위 90% 초과``; a ``누적 상위(%)`` column;
``상위 10%는 1등급, 다음 22.5%는 2등급 …``; ``top 10%``, ``next 22.5%``, ``bottom 10%``. Each band is read
as a share or as a cumulative bound, then turned into shares; a mix that does not reach 100 is reported.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_lexicon import HEADER_WORDS, is_total
from evaluator.methodology.ingest_tables import Sentence, Table
from evaluator.methodology.ingest_text import compact
from evaluator.methodology.rubric_scale import DEFAULT_SCALE, GradeScale

_GRADE = re.compile(
    r"(?<![\d.])(10|[1-9])\s*(?:등급|grade)|(?:grade|등급)\s*(10|[1-9])(?![\d.])|(★{1,10})(?!★)", re.IGNORECASE
)
"""``3등급``, ``grade 3`` or ``★★★`` (a star scale: the count of stars, more is better)."""
_PCT = r"(\d+(?:\.\d+)?)\s*%?"
_RANGE = re.compile(rf"(?:상위|top)\s*{_PCT}\s*(?:초과|over|above|超)\s*(?:~|-|–)?\s*(?:상위)?\s*{_PCT}\s*(?:이내|이하|까지|up\s*to)?", re.I)
_ABOVE = re.compile(rf"(?:상위|top)\s*{_PCT}\s*(?:초과|over|above)", re.I)
_TOP = re.compile(rf"(?:상위|top)\s*{_PCT}", re.I)
_SHARE = re.compile(r"(?:다음|그다음|나머지|하위|next|remaining|bottom)?\s*(\d+(?:\.\d+)?)\s*%", re.I)


_BARE_RANGE = re.compile(rf"{_PCT}\s*(?:초과|over|above)\s*(?:~|-|–)?\s*{_PCT}\s*(?:이내|이하|까지)", re.I)
_TILDE = re.compile(r"(\d+(?:\.\d+)?)\s*%?\s*[~\-–]\s*(\d+(?:\.\d+)?)\s*%")


def _bound(clause: str) -> tuple[str, float, float | None] | None:
    """('range', low, high) | ('cum', high, None) | ('above', low, None) | ('share', x, None)."""
    c = clause.replace(" ", "")
    m = _RANGE.search(c) or _BARE_RANGE.search(c) or _TILDE.search(c)
    if m:
        return ("range", float(m.group(1)), float(m.group(2)))
    m = _ABOVE.search(c)
    if m:
        return ("above", float(m.group(1)), None)
    m = _TOP.search(c)
    if m:
        return ("cum", float(m.group(1)), None)
    m = _SHARE.search(c)
    if m:
        return ("share", float(m.group(1)), None)
    if re.search(r"그외|나머지|기타|이외|remaining|others|therest", c, re.I):
        return ("rest", 0.0, None)  # "5등급: 그 외"
    return None


def _grade_value(m: re.Match[str]) -> int:
    text = next(x for x in m.groups() if x)
    return len(text) if text.startswith("★") else int(text)


def _to_shares(marks: dict[int, tuple[str, float, float | None]], order: list[int]) -> list[float] | str:
    """Shares in ``order`` (best grade first), from shares, cumulative bounds, ranges or 'the rest'."""
    shares: list[float] = []
    cum = 0.0
    for g in order:
        kind, a, b = marks[g]
        if kind == "share":
            share = a
        elif kind == "cum":
            share = a - cum
        elif kind == "range":
            if abs(a - cum) > 1e-9:
                return f"{g}등급 starts at 상위 {a:g}% but the band above ends at {cum:g}%"
            share = b - a  # type: ignore[operator]
        elif kind == "rest":
            if g != order[-1]:
                return f"{g}등급 is described only as 'the rest', which can only be the last band"
            share = 100.0 - cum
        else:  # above: the rest
            if abs(a - cum) > 1e-9:
                return f"{g}등급 starts at 상위 {a:g}% but the band above ends at {cum:g}%"
            share = 100.0 - cum
        if share <= 0:
            return f"{g}등급 would have a share of {share:g}%"
        shares.append(share)
        cum += share
    return shares


def _grade_col(t: Table) -> int | None:
    for i, h in enumerate(t.header):
        if compact(h) in HEADER_WORDS["grade"] or re.fullmatch(r"(평가)?등급|grade|rating", compact(h)):
            return i
    return None


def _grade_of(cell: str) -> int | None:
    g = _GRADE.search(cell) or re.fullmatch(r"\s*(10|[1-9])\s*", cell)
    return _grade_value(g) if g else None


def _bands_across(t: Table) -> tuple[dict[int, Any], dict[int, str]] | None:
    """A band table laid out sideways: ``등급 | 1등급 | 2등급 …`` over ``비율 | 10% | 22.5% …``."""
    cols = {i: _grade_of(h) for i, h in enumerate(t.header) if _GRADE.search(h)}
    if len(cols) < 3:
        return None
    for row in t.rows:
        label = compact(row.cells[0]) if row.cells else ""
        cumulative = any(w in label for w in HEADER_WORDS["band_cumulative"])
        marks: dict[int, Any] = {}
        where: dict[int, str] = {}
        for i, grade in cols.items():
            cell = row.cells[i] if i < len(row.cells) else ""
            if re.fullmatch(r"\d+(?:\.\d+)?\s*%?", cell):
                marks[grade] = ("cum" if cumulative else "share", float(cell.rstrip("% ")), None)
            else:
                mark = _bound(cell)
                if mark:
                    marks[grade] = mark
            if grade in marks:
                where[grade] = f"{t.cell_where(row, i)} = {cell!r}"
        if len(marks) >= 3:
            return marks, where
    return None


def bands_from_table(t: Table) -> tuple[dict[int, tuple[str, float, float | None]], dict[int, str]] | None:
    col = _grade_col(t)
    if col is None:
        return _bands_across(t)
    heads = [compact(h) for h in t.header]
    cum_cols = [i for i, h in enumerate(heads) if any(w in h for w in HEADER_WORDS["band_cumulative"])]
    share_cols = [i for i, h in enumerate(heads) if i != col and i not in cum_cols and (
        any(w in h for w in HEADER_WORDS["band_share"]) or h in ("%", "(%)"))]
    marks: dict[int, tuple[str, float, float | None]] = {}
    where: dict[int, str] = {}
    for row in t.rows:
        if not row.cells or is_total(row.cells[0]):
            continue
        grade = _grade_of(row.cells[col])
        if grade is None:
            continue
        others = [i for i in range(len(row.cells)) if i != col]
        mark = None
        for i in share_cols + others:
            cell = row.cells[i]
            if not cell:
                continue
            if i in share_cols and re.fullmatch(r"\d+(?:\.\d+)?\s*%?", cell):
                mark = ("share", float(cell.rstrip("% ")), None)
            elif i in cum_cols and re.fullmatch(r"\d+(?:\.\d+)?\s*%?", cell):
                mark = ("cum", float(cell.rstrip("% ")), None)
            else:
                mark = _bound(cell)
            if mark:
                where[grade] = f"{t.cell_where(row, i)} = {cell!r} ({row.cells[col]})"
                break
        if mark:
            marks[grade] = mark
    if len(marks) < 3:
        return _bands_across(t) or (marks, where)
    shares = [m[1] for g, m in sorted(marks.items()) if m[0] == "share"]
    top = any(re.search(r"상위|top", h, re.I) for h in t.header)
    if top and len(shares) == len(marks) and shares == sorted(shares) and abs(shares[-1] - 100) < 1e-9:
        marks = {g: ("cum", m[1], None) for g, m in marks.items()}  # "상위 비율" 10, 30, 70, 90, 100 is cumulative
    return marks, where


def bands_from_sentences(sentences: list[Sentence]) -> tuple[dict[int, Any], dict[int, str]]:
    marks: dict[int, Any] = {}
    where: dict[int, str] = {}
    for s in sentences:
        if s.source != "text" or not re.search(r"등급|grade|★", s.text, re.I):
            continue
        for clause in re.split(r"[,，;]|\s(?:및|and)\s", s.text):
            grades = {_grade_value(m) for m in _GRADE.finditer(clause)}
            if len(grades) != 1 or "%" not in clause:
                continue
            mark = _bound(_GRADE.sub(" ", clause))
            grade = grades.pop()
            if mark and grade not in marks:
                marks[grade] = mark
                where[grade] = f"sentence on p.{s.page}: {s.text[:80]}"
    return marks, where


def read_bands(tables: list[Table], sentences: list[Sentence], f: Findings) -> list[dict[str, Any]] | None:
    candidates: list[tuple[str, dict[int, Any], dict[int, str]]] = []
    for t in tables:
        got = bands_from_table(t)
        if got and len(got[0]) >= 3:
            t.role = t.role or "grade bands"
            candidates.append((t.name, *got))
    if not candidates:
        marks, where = bands_from_sentences(sentences)
        if marks:
            candidates.append(("sentences", marks, where))
    looked = [t.name for t in tables] + ["every sentence mentioning 등급 with a %"]
    if not candidates:
        f.problem("missing", "grade_bands", "no grade bands (N등급 or ★ with shares or 상위 % ranges) found", looked)
        return None
    name, marks, where = candidates[0]
    stars = all("★" in where[g] for g in marks)
    n = max(marks)
    more = sorted({int(m.group(1)) for s in sentences for m in re.finditer(r"(?<![\d.])(10|[1-9])\s*등급", s.text)})
    beyond = [g for g in more if g > n] if not stars else []
    if beyond or not 3 <= n <= 10:
        said = f"the text names {', '.join(f'{g}등급' for g in beyond)}" if beyond else f"{n} grades"
        f.problem(
            "invalid", "grade_bands",
            f"{name} gives bands for {n} grades but {said}; a scale needs 3 to 10 grades, all with bands", [name],
        )
        return None
    order = list(range(n, 0, -1)) if stars else list(range(1, n + 1))
    scale = GradeScale(n, "high" if stars else "low", "stars" if stars else "number")
    missing = [g for g in order if g not in marks]
    if missing:
        f.problem(
            "missing", "grade_bands", f"{name} gives no band for {', '.join(scale.label(g) for g in missing)}", looked
        )
        return None
    shares = _to_shares(marks, order)
    if isinstance(shares, str):
        f.problem("invalid", "grade_bands", f"{name}: {shares}", [name])
        return None
    bands = []
    for g, share in zip(order, shares, strict=True):
        bands.append({"grade": g, "label": scale.label(g), "share": share})
        kind, a, b = marks[g]
        said = {"share": f"share {a:g}%", "cum": f"top {a:g}% (cumulative)", "above": f"beyond top {a:g}%",
                "rest": "the rest"}.get(kind) or f"top {a:g}–{b:g}%"
        f.found(f"grade_bands[{g}].share", share, _page(where[g]), where[g], said)
    if scale != DEFAULT_SCALE:
        f.found("grade_scale", {"grades": n, "best": scale.best, "style": scale.style}, _page(where[order[0]]),
                where[order[0]], f"{n} grades, {scale.label(order[0])} best")
    return bands


def _page(where: str) -> int | None:
    m = re.search(r"p\.(\d+)", where)
    return int(m.group(1)) if m else None
