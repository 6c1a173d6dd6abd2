"""A few lines of reportlab for building test methodology PDFs (no binary fixtures in the repository)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from evaluator.methodology.pdf_blocks import font_path

EOK = 100_000_000


def _font(name: str) -> str:
    if name not in pdfmetrics.getRegisteredFontNames():
        if name == "NanumGothic":
            pdfmetrics.registerFont(TTFont(name, str(font_path())))
        else:
            pdfmetrics.registerFont(UnicodeCIDFont(name))
    return name


class Doc:
    """A few lines of platypus: headings, paragraphs and grid tables with spans, in one font."""

    def __init__(self, font: str, size: float = 10) -> None:
        self.font = _font(font)
        self.story: list[Any] = []
        self.p_style = ParagraphStyle("p", fontName=self.font, fontSize=size, leading=size * 1.5, spaceAfter=4)
        self.h_style = ParagraphStyle("h", fontName=self.font, fontSize=size + 3, leading=(size + 3) * 1.5, spaceBefore=6)
        self.c_style = ParagraphStyle("c", fontName=self.font, fontSize=size - 1, leading=(size - 1) * 1.3)

    def h(self, text: str) -> Doc:
        self.story.append(Paragraph(text, self.h_style))
        return self

    def p(self, text: str) -> Doc:
        self.story.append(Paragraph(text, self.p_style))
        return self

    def space(self, height_mm: float) -> Doc:
        self.story.append(Spacer(1, height_mm * mm))
        return self

    def table(
        self,
        rows: Sequence[Sequence[str | None]],
        widths: Sequence[float],
        spans: Sequence[tuple[int, int, int, int]] = (),
        repeat_header: bool = True,
    ) -> Doc:
        data = [[Paragraph(c, self.c_style) if c else "" for c in row] for row in rows]
        style = [("GRID", (0, 0), (-1, -1), 0.5, colors.black), ("VALIGN", (0, 0), (-1, -1), "MIDDLE")]
        style += [("SPAN", (c0, r0), (c1, r1)) for c0, r0, c1, r1 in spans]
        self.story.append(
            Table(data, colWidths=[w * mm for w in widths], style=TableStyle(style), repeatRows=1 if repeat_header else 0)
        )
        return self

    def build(self) -> bytes:
        buf = io.BytesIO()
        SimpleDocTemplate(buf, pagesize=A4, topMargin=20 * mm, bottomMargin=20 * mm).build(self.story)
        return buf.getvalue()


def spaced(text: str) -> str:
    """HWP-style justified text: every character of every word spaced out."""
    return " ".join(ch for ch in text if ch != " ")
