"""The methodology PDF's building blocks: the embedded Hangul font, paragraph styles, tables whose cells
never split a word (ingest must tell a wrap from the text), numbers as the document writes them, and the
check that the font can draw every character of a rubric."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, Table, TableStyle

from evaluator.methodology import pdf_layout as L

_STYLES: dict[str, ParagraphStyle] = {}


def font_path() -> Path:
    """NanumGothic.ttf inside the installed ``koreanize-matplotlib`` (found without importing it, which would
    reconfigure matplotlib)."""
    spec = importlib.util.find_spec("koreanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the koreanize-matplotlib package (which ships the NanumGothic font) is not installed"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / L.FONT_FILE
    if not path.is_file():
        raise RuntimeError(f"{path} is missing; reinstall koreanize-matplotlib")
    return path


def style(name: str) -> ParagraphStyle:
    """A paragraph style in the embedded Hangul font (registered on first use)."""
    if not _STYLES:
        if L.FONT not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(L.FONT, str(font_path())))
        _STYLES["title"] = ParagraphStyle("title", fontName=L.FONT, fontSize=16, leading=22, spaceAfter=8)
        _STYLES["h"] = ParagraphStyle(
            "h", fontName=L.FONT, fontSize=12, leading=17, spaceBefore=10, spaceAfter=4
        )
        _STYLES["p"] = ParagraphStyle("p", fontName=L.FONT, fontSize=9.5, leading=14, spaceAfter=4)
        _STYLES["cell"] = ParagraphStyle("cell", fontName=L.FONT, fontSize=8.5, leading=11)
    return _STYLES[name]


def paragraph(text: str, kind: str = "p") -> Paragraph:
    """Text (never read as markup) in one of the styles: title, h, p."""
    return Paragraph(escape(text), style(kind))


_CELL_PADDING = 6.0  # reportlab's default left/right cell padding, in points
_MIN_FONT = 4.0


def cell(text: str, width_pt: float) -> Paragraph:
    """A table cell whose every word fits on one line: the cell's font shrinks rather than split a word,
    because ingest must tell a wrap (at a space) from the text itself."""
    base = style("cell")
    room = width_pt - 2 * _CELL_PADDING
    widest = max((pdfmetrics.stringWidth(w, L.FONT, base.fontSize) for w in text.split()), default=0.0)
    if widest <= room:
        return Paragraph(escape(text), base)
    size = base.fontSize * room / widest * 0.98
    if size < _MIN_FONT:
        raise ValueError(f"the word {max(text.split(), key=len)!r} is too long for a methodology table cell")
    key = f"cell{size:.2f}"
    if key not in _STYLES:
        _STYLES[key] = ParagraphStyle(key, parent=base, fontSize=size, leading=size * 1.3)
    return Paragraph(escape(text), _STYLES[key])


def table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[float]) -> Table:
    """A gridded table with a shaded header row repeated on every page (``widths`` in mm)."""
    cells = [
        [cell(str(c), w * mm) for c, w in zip(row, widths, strict=True)] for row in [list(header), *rows]
    ]
    table = Table(cells, colWidths=[w * mm for w in widths], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8eef7")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def number(value: Any) -> str:
    """A number as the document writes it (what ingest reads back)."""
    return L.format_number(value)


def _strings(doc: Any) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, Mapping):
        return [s for k, v in doc.items() for s in _strings(k) + _strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


def missing_glyphs(rubric: Mapping[str, Any]) -> list[str]:
    """Characters the embedded font cannot draw (they would print as empty boxes)."""
    style("p")
    glyphs = pdfmetrics.getFont(L.FONT).face.charToGlyph
    return sorted(
        {ch for text in _strings(rubric) for ch in text if not ch.isspace() and ord(ch) not in glyphs}
    )
