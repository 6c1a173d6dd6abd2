"""Render a rubric as a Korean methodology PDF: explanatory text, then every value in a table.

The PDF is what analysts circulate and sign off; :mod:`evaluator.methodology.pdf_ingest` reads it back to
the identical rubric. Font: a subset of NanumGothic (from the ``koreanize-matplotlib`` package) is embedded,
so the Korean text shows on machines without Korean fonts (a reportlab CID font is not embedded).
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import SimpleDocTemplate

from evaluator.core.outputs import ensure_new_file
from evaluator.methodology import pdf_layout as L
from evaluator.methodology.pdf_blocks import missing_glyphs
from evaluator.methodology.pdf_sections import story
from evaluator.methodology.rubric import validate_rubric


def render_pdf_bytes(rubric: Mapping[str, Any], *, validate: bool = True) -> bytes:
    """The methodology PDF for ``rubric`` as bytes (``validate=False`` renders even a broken rubric)."""
    if validate:
        validate_rubric(rubric)
    missing = missing_glyphs(rubric)
    if missing:
        raise ValueError(
            f"the embedded font ({L.FONT}) has no glyph for {' '.join(missing)}; the PDF would show empty boxes "
            "there, so replace those characters in the rubric"
        )
    buf = io.BytesIO()
    doc = SimpleDocTemplate(
        buf,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=18 * mm,
        bottomMargin=18 * mm,
        title=str(rubric.get("name", "methodology")),
        author="evaluator",
    )
    doc.build(story(rubric))
    return buf.getvalue()


def render_pdf(
    rubric: Mapping[str, Any], path: str | os.PathLike[str], *, force: bool = False, validate: bool = True
) -> str:
    """Write the methodology PDF atomically; refuse to overwrite unless ``force``."""
    target = ensure_new_file(path, force=force)
    data = render_pdf_bytes(rubric, validate=validate)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return str(target)
