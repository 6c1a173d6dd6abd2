"""Plotly's load-time stylesheet as a file of our own, so the Content-Security-Policy needs no inline style.

plotly.min.js adds one ``<style id="<hash>">`` (map styles) when it loads, unless an element with that id is
already on the page; later it inserts rules into the element ``plotly.js-style-global``, made as an inline
``<style>`` unless the page has one. The server serves that CSS as an asset and the page links it under the same id, so
Plotly finds it and adds nothing inline; an empty linked sheet takes the rules (CSSOM, which the CSP allows). Read from the packaged bundle, so it follows Plotly's version.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_STYLE = re.compile(
    r'if\(!document\.getElementById\("([0-9a-f]{16,128})"\)\)\{var e=document\.createElement\("style"\);'
    r"e\.id=\"\1\",e\.textContent='((?:[^'\\]|\\.)*)'"
)


@cache
def plotly_style() -> tuple[str, bytes]:
    """(the id Plotly looks for, its CSS); ("", b"") when this Plotly build injects no such style."""
    bundle = (resources.files("plotly") / "package_data" / "plotly.min.js").read_text("utf-8")
    match = _STYLE.search(bundle)
    if match is None:
        return "", b""
    return match.group(1), match.group(2).encode("utf-8").decode("unicode_escape").encode("latin-1")
