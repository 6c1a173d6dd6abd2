"""Tables and prose of a methodology PDF, as pdfplumber finds them, made whole again.

pdfplumber gives merged (spanned) cells as ``None``, a table split over pages as two tables (the second
often repeating the header), and table text inside ``extract_text``. Here a split table becomes one table,
every cell keeps its page and row for provenance, and prose is read with the tables cut out so a table
row is never read twice as a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evaluator.methodology.ingest_lexicon import HEADER_WORDS, header_role
from evaluator.methodology.ingest_text import clean, compact, split_sentences


@dataclass
class Row:
    cells: list[str]
    raw: list[str | None]
    page: int
    index: int  # row number within the merged table, header = 0


@dataclass
class Table:
    header: list[str]
    rows: list[Row]
    pages: list[int]
    top: float
    bottom: float
    page_height: float
    number: int = 0
    role: str | None = None
    roles: list[str | None] = field(default_factory=list)

    @property
    def name(self) -> str:
        pages = "–".join(str(p) for p in sorted({self.pages[0], self.pages[-1]}))
        return f"table {self.number} on p.{pages} ({' | '.join(h or '·' for h in self.header)})"

    def cell_where(self, row: Row, col: int) -> str:
        head = self.header[col] if col < len(self.header) else f"column {col + 1}"
        return f"{self.name}, row {row.index}, column '{head}'"


@dataclass
class Sentence:
    text: str
    page: int
    source: str  # "text" or the table name


def _is_header(cells: list[str]) -> bool:
    roles = [header_role(c) for c in cells if c]
    known = sum(1 for r in roles if r)
    grade = any(compact(c) in HEADER_WORDS["grade"] for c in cells)
    years = sum(1 for c in cells if re.fullmatch(r"\d+년(?:수익률|성과)?|\d+y(?:ears?)?", compact(c)))
    return known >= 2 or grade or years >= 2 or (known >= 1 and len(cells) == 2)


_HEADING = re.compile(r"제\s*\d+\s*[장조절관]|\d+(?:\.\d+)*\.\s|[가-하]\.\s|[IVX]+\.\s|[①-⑩]|[□■○●▶◆]")


def _has_number(cells: list[str]) -> bool:
    return any(re.search(r"\d", c) for c in cells)


def _raw_tables(pdf: Any) -> list[Table]:
    out: list[Table] = []
    for pno, page in enumerate(pdf.pages, 1):
        for found in page.find_tables():
            raw = found.extract()
            if not raw or not raw[0]:
                continue
            keep = [i for i in range(len(raw[0])) if any(r[i] for r in raw if i < len(r))]
            raw = [[r[i] if i < len(r) else None for i in keep] for r in raw]  # columns of a neighbouring grid
            if len(keep) < 2:
                continue
            rows = [[clean(c) for c in r] for r in raw]
            if len(rows) > 1 and sum(1 for c in rows[0] if c) == 1 and len(rows[0]) > 2:
                raw, rows = raw[1:], rows[1:]  # a title row spanning the table
            # two tables drawn touching come back as one grid: a header row inside starts a new table
            starts = [0] + [i for i in range(1, len(rows)) if _is_header(rows[i]) and not _has_number(rows[i])]
            for a, b in zip(starts, [*starts[1:], len(rows)], strict=True):
                part, part_raw = rows[a:b], raw[a:b]
                table_rows = [Row(c, list(r), pno, i) for i, (c, r) in enumerate(zip(part, part_raw, strict=True))]
                out.append(
                    Table(
                        header=part[0],
                        rows=table_rows[1:],
                        pages=[pno],
                        top=float(found.bbox[1]) if a == 0 else float(found.bbox[3]) - 1,
                        bottom=float(found.bbox[3]),
                        page_height=float(page.height),
                    )
                )
                if not _is_header(part[0]):  # no header: may continue the table before
                    out[-1].header = []
                    out[-1].rows = table_rows
    return out


def _width(t: Table) -> int:
    return len(t.header) if t.header else (len(t.rows[0].cells) if t.rows else 0)


def _merge_split(tables: list[Table]) -> list[Table]:
    """A table continued on the next page (header repeated, or no header) is one table."""
    merged: list[Table] = []
    for t in tables:
        prev = merged[-1] if merged else None
        follows = (
            prev is not None
            and t.pages[0] == prev.pages[-1] + 1
            and prev.bottom > prev.page_height * 0.6
            and t.top < t.page_height * 0.4
        )
        width_same = prev is not None and _width(prev) == _width(t) > 0
        if prev is not None and follows and width_same and (
            not t.header or [compact(c) for c in t.header] == [compact(c) for c in prev.header]
        ):
            start = len(prev.rows) + 1
            for k, row in enumerate(t.rows):
                row.index = start + k
            prev.rows.extend(t.rows)
            prev.pages.append(t.pages[0])
            prev.bottom = t.bottom
            continue
        if not t.header and t.rows:  # an orphan header-less table: its first row is the header
            first = t.rows.pop(0)
            t.header = first.cells
            for k, row in enumerate(t.rows, 1):
                row.index = k
        merged.append(t)
    for n, t in enumerate(merged, 1):
        t.number = n
    return merged


def fill_down(table: Table, columns: list[int]) -> None:
    """Merged cells (``None``) and blank cells in ``columns`` take the value above them, within one group."""
    last: dict[int, str] = {}
    for row in table.rows:
        for c in columns:
            if c >= len(row.cells):
                continue
            if row.cells[c]:
                last[c] = row.cells[c]
            elif c in last:
                row.cells[c] = last[c]


def read_document(pdf: Any) -> tuple[list[Table], list[Sentence], list[str]]:
    """(tables with split parts merged, sentences outside tables, page texts) of an open pdfplumber PDF."""
    tables = _merge_split(_raw_tables(pdf))
    sentences: list[Sentence] = []
    texts: list[str] = []
    for pno, page in enumerate(pdf.pages, 1):
        texts.append(page.extract_text() or "")
        prose = page
        for found in page.find_tables():
            try:
                prose = prose.outside_bbox(found.bbox)
            except ValueError:
                continue
        chunks: list[list[str]] = [[]]
        for line in (prose.extract_text() or "").splitlines():
            heading = bool(_HEADING.match(clean(line)))
            if heading and chunks[-1]:
                chunks.append([])  # a heading ends the sentence before it
            chunks[-1].append(line)
            if heading and len(clean(line)) <= 30:
                chunks.append([])  # and a short heading line is not part of the sentence after it
        for chunk in chunks:
            sentences += [Sentence(s, pno, "text") for s in split_sentences(clean(" ".join(chunk)))]
    for t in tables:
        for row in t.rows:
            joined = " ".join(c for c in row.cells if c)
            if joined:
                sentences.append(Sentence(joined, row.page, f"{t.name}, row {row.index}"))
    return tables, sentences, texts
