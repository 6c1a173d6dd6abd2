"""A fund page as a PDF: key facts, the summary, criterion scores, metrics, reasons, and its charts (NAV against
the benchmark, score and grade history, criterion scores) drawn on the server.

Built with reportlab (already a dependency for the methodology PDFs): it lays out Korean text and tables and
embeds the NanumGothic TrueType font (a subset, with a ToUnicode map, so the text can be searched and copied).
The charts are matplotlib figures (the project's plotting style, :mod:`evaluator.core.plotting`) placed as
images. matplotlib's own PdfPages could embed the font too (fonttype 42) but has no flowing text or tables.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from evaluator.core.plotting import new_figure, style
from evaluator.methodology.rubric_scale import GradeScale

FONT = "NanumGothic"
FONT_BOLD = "NanumGothicBold"
_DRAW = threading.Lock()  # matplotlib's rc settings are process-wide: one figure at a time


@lru_cache(maxsize=1)
def _fonts() -> str:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    folder = resources.files("koreanize_matplotlib") / "fonts"
    for name in (FONT, FONT_BOLD):
        with resources.as_file(folder / f"{name}.ttf") as path:
            pdfmetrics.registerFont(TTFont(name, str(path)))
    return FONT


def _png(fig: Any) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=150)
    return out.getvalue()


def _dates(values: Sequence[str]) -> list[Any]:
    import datetime as dt

    return [dt.date.fromisoformat(v[:10]) for v in values]


def nav_png(series: dict[str, Any]) -> bytes:
    with _DRAW, style():
        fig = new_figure(7.2, 3.0)
        ax = fig.subplots()
        x = _dates(series["dates"])
        ax.plot(x, [float("nan") if v is None else v for v in series["fund"]], color="#2166ac", lw=1.6,
                label="펀드 (수정기준가, 총수익 기준)")
        if series.get("benchmark") is not None:
            ax.plot(x, [float("nan") if v is None else v for v in series["benchmark"]], color="#888", lw=1.2,
                    ls=":", label="벤치마크")
        ax.set_ylabel("지수 (시작일 = 100)")
        ax.legend(loc="upper left", fontsize=8)
        return _png(fig)


def history_png(history: list[dict[str, Any]], scale: GradeScale) -> bytes:
    """Score (left axis) and grade on the batch's scale (right axis, best at the top), one point per result."""
    rated = [h for h in history if h["status"] in ("ok", "provisional") and h.get("score") is not None]
    graded = [h for h in rated if h.get("grade") is not None and h.get("grade_scale") in (None, scale.spec())]
    with _DRAW, style():
        fig = new_figure(7.2, 2.8)
        ax = fig.subplots()
        days = _dates([h["as_of"] for h in rated])
        ax.plot(days, [h["score"] for h in rated], "o-", color="#2166ac", label="종합 점수")
        if len(set(days)) <= 12:  # a few results: a tick on each as-of date, never one date twice
            ax.set_xticks(sorted(set(days)), [d.isoformat() for d in sorted(set(days))], fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_ylabel("점수")
        order = list(scale.best_first())
        right = ax.twinx()
        right.plot(_dates([h["as_of"] for h in graded]), [scale.rank(h["grade"]) for h in graded], "s--",
                   color="#b2182b", label="등급")
        right.set_ylim(len(order) + 0.5, 0.5)  # rank 1 (the best grade) at the top
        right.set_yticks(range(1, len(order) + 1), [scale.label(g) for g in order], fontsize=7)
        right.grid(False)
        lines = ax.get_legend_handles_labels()
        more = right.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], loc="lower left", fontsize=8)
        return _png(fig)


def bars_png(values: dict[str, float]) -> bytes:
    with _DRAW, style():
        fig = new_figure(7.2, 2.4)
        ax = fig.subplots()
        ax.bar(list(values), list(values.values()), color="#2166ac")
        ax.set_ylabel("점수")
        return _png(fig)


def fund_pdf(page: dict[str, Any]) -> bytes:
    """The PDF of one fund page. ``page`` holds ``report`` (the report document), ``grade_text``, ``facts``
    (label, value pairs), ``criteria``, ``metrics`` (a table: windows and rows), and chart PNGs in ``charts``."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.lib.utils import ImageReader
    from reportlab.platypus import (
        Image,
        KeepTogether,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    font = _fonts()
    body = ParagraphStyle("body", fontName=font, fontSize=9.5, leading=14, wordWrap="CJK")
    head = ParagraphStyle("head", parent=body, fontName=FONT_BOLD, fontSize=12, leading=18, spaceBefore=8)
    title = ParagraphStyle("title", parent=body, fontName=FONT_BOLD, fontSize=16, leading=22)
    report = page["report"]
    width = A4[0] - 30 * mm

    def table(rows: list[list[Any]], widths: list[float] | None = None) -> Table:
        cells = [[Paragraph(_escape(c), body) for c in row] for row in rows]
        t = Table(cells, colWidths=widths, repeatRows=1)
        t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.3, colors.HexColor("#c8ccd2")),
                               ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef1f5")),
                               ("VALIGN", (0, 0), (-1, -1), "TOP")]))
        return t

    def image(png: bytes) -> Image:
        w, h = ImageReader(io.BytesIO(png)).getSize()
        return Image(io.BytesIO(png), width=width, height=width * h / w)

    story: list[Any] = [Paragraph(_escape(report.get("fund_name") or report["fund_code"]), title),
                        Paragraph(_escape(f"{report['fund_code']} · {page['grade_text']}"), body), Spacer(1, 4 * mm),
                        table([["항목", "값"], *page["facts"]], [45 * mm, width - 45 * mm])]
    if report.get("summary_ko"):
        story += [Paragraph("요약", head), Paragraph(_escape(report["summary_ko"]), body)]
    reasons = list(report.get("errors") or []) + list(report.get("warnings") or [])
    if reasons:
        story += [Paragraph("사유와 경고", head), *[Paragraph(_escape("· " + r), body) for r in reasons]]
    charts = page.get("charts") or {}
    for key, name in (("nav", "기준가 추이 (총수익 기준, 벤치마크 대비)"), ("history", "등급 추이"),
                      ("criteria", "평가 기준별 점수")):
        if charts.get(key):
            story.append(KeepTogether([Paragraph(name, head), image(charts[key])]))  # a title stays with its chart
    metrics = page.get("metrics") or {}
    if metrics.get("rows"):
        rows = [["지표", *[re.sub(r"^(\d+)y$", r"\1년", w) for w in metrics["windows"]]]]
        rows += [[r["label"], *[_fmt(v, r["percent"]) for v in r["values"]]] for r in metrics["rows"]]
        story += [Paragraph("기간별 지표", head), table(rows)]
    out = io.BytesIO()
    doc = SimpleDocTemplate(out, pagesize=A4, leftMargin=15 * mm, rightMargin=15 * mm, topMargin=15 * mm,
                            bottomMargin=15 * mm, title=report.get("fund_name") or report["fund_code"],
                            author="evaluator")
    doc.build(story)
    return out.getvalue()


def _fmt(value: Any, percent: bool) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.2f}%" if percent else f"{value:,.2f}"


def _escape(value: Any) -> str:
    """reportlab paragraphs read a little markup: data-derived text is written as plain characters."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
