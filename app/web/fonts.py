"""The Hangul web font: the NanumGothic that koreanize-matplotlib ships, made acceptable to browsers.

Chromium's font sanitiser (OTS) rejects these files outright ("TSI3: zero-length table"): they carry
empty VTT hinting-source tables (TSI0–TSI5) that no renderer uses. fontTools (a matplotlib dependency)
drops them once per worker; every glyph and metric is kept.
"""

from __future__ import annotations

import io


def browser_safe_font(raw: bytes) -> bytes:
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(raw))
    for tag in [t for t in font.keys() if t.startswith("TSI")]:  # noqa: SIM118 (TTFont is not a dict)
        del font[tag]
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()
