"""Shared plumbing for every plot (generic layers and packs alike): headless matplotlib, Korean labels, atomic PNG writes, tolerant numbers.

Plots are drawn on plain ``Figure`` objects with the Agg backend (no display, no pyplot global state), so
they work on servers and inside the demo. Every PNG is written to a temporary file in its folder and
moved into place, so a crash never leaves half an image behind.
"""

from __future__ import annotations

import logging
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluator.core.outputs import OutputExistsError

log = logging.getLogger("evaluator.plots")

Warn = Callable[[str], None]
DPI = 100

# Fonts that carry Hangul, most common first (Linux, Windows, macOS).
CJK_FONTS = (
    "NanumGothic",
    "NanumBarunGothic",
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Malgun Gothic",
    "AppleGothic",
    "Apple SD Gothic Neo",
    "UnDotum",
    "Baekmuk Gulim",
)

class NothingToPlotError(ValueError):
    """The folder (or file) holds nothing a plot can be drawn from."""


@dataclass
class Warner:
    """Passes each distinct warning once to ``sink`` (a console printer, or the log by default)."""

    sink: Warn | None = None
    seen: list[str] = field(default_factory=list)

    def __call__(self, message: str) -> None:
        if message in self.seen:
            return
        self.seen.append(message)
        (self.sink or log.warning)(message)


def as_warner(warn: Warn | None) -> Warner:
    return warn if isinstance(warn, Warner) else Warner(warn)


@dataclass
class Plan:
    """What one source will write (checked for overwrites before anything is drawn) and how to draw it."""

    source: Path
    targets: list[Path]
    draw: Callable[[], list[Path]]


@contextmanager
def style() -> Iterator[None]:
    """Headless Agg drawing with a Hangul-capable font first in line when one is installed."""
    import matplotlib

    matplotlib.use("Agg")
    family = cjk_font()
    params: dict[str, Any] = {"axes.grid": True, "grid.alpha": 0.3}
    if family:
        params["font.family"] = [family, "DejaVu Sans"]
    with matplotlib.rc_context(params):
        yield


def new_figure(width_in: float, height_in: float) -> Any:
    """A Figure on the Agg canvas; no window, no pyplot registry to leak into (call inside :func:`style`)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")


def grid(fig: Any, n: int, ncols: int = 2) -> list[Any]:
    """``n`` axes in a grid of ``ncols`` columns; spare cells are hidden."""
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return axes[:n]


def note(ax: Any, text: str) -> None:
    """Write a visible note in a panel that has no data to show, instead of leaving it blank."""
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        wrap=True,
        fontsize=10,
        color="#8a4b00",
        transform=ax.transAxes,
        bbox={"boxstyle": "round", "facecolor": "#fff4e0", "edgecolor": "#e0a040"},
    )
    ax.set_xticks([])
    ax.set_yticks([])


def check_targets(targets: Iterable[Path], force: bool) -> None:
    """Refuse to overwrite any existing PNG unless ``force``; checked before a single one is drawn."""
    existing = [str(t) for t in targets if Path(t).exists()]
    if existing and not force:
        shown = ", ".join(existing[:3]) + (f" and {len(existing) - 3} more" if len(existing) > 3 else "")
        verb = "exists" if len(existing) == 1 else "exist"
        raise OutputExistsError(f"{shown} already {verb}; pass --force to overwrite")


def save_png(fig: Any, target: Path) -> Path:
    """Render ``fig`` to a temporary file beside ``target`` and move it into place."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=DPI, facecolor="white")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a picture is as readable as any other file
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


@lru_cache(maxsize=1)
def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def num(value: Any) -> float:
    """A finite float, or NaN for None, NaN, infinities, booleans and anything non-numeric."""
    if isinstance(value, bool) or value is None:
        return math.nan
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out if math.isfinite(out) else math.nan


def smooth(values: Sequence[float]) -> list[float]:
    """Debiased exponential moving average over the finite values (NaN gaps are carried over)."""
    finite = [v for v in values if not math.isnan(v)]
    span = max(2.0, len(finite) / 8)
    alpha = 2.0 / (span + 1.0)
    out: list[float] = []
    acc, weight = 0.0, 0.0
    for v in values:
        if math.isnan(v):
            out.append(math.nan)
            continue
        acc = (1 - alpha) * acc + alpha * v
        weight = (1 - alpha) * weight + alpha
        out.append(acc / weight)
    return out


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The name of a font with Hangul that matplotlib can use, or None: NanumGothic bundled with the
    ``koreanize-matplotlib`` dependency first (registered from its files, without importing it, which would
    restyle matplotlib globally), else an installed one."""
    import importlib.util

    from matplotlib import font_manager

    spec = importlib.util.find_spec("koreanize_matplotlib")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for ttf in sorted((Path(folder) / "fonts").glob("*.ttf")):
            font_manager.fontManager.addfont(str(ttf))
    names = {f.name for f in font_manager.fontManager.ttflist}
    for wanted in CJK_FONTS:
        if wanted in names:
            return wanted
    for name in sorted(names):
        if re.search(r"nanum|cjk|malgun|gothic.*(kr|korean)", name, re.IGNORECASE):
            return name
    log.debug("no Hangul font found; peer-group names are shown romanised")
    return None


def label(text: Any, names: Mapping[str, str] | None = None) -> str:
    """A Hangul name as the plot can show it: as is with a Hangul font; without one, its agreed English name
    from ``names`` (a pack's glossary) or else romanised."""
    value = str(text).strip() or "?"
    if cjk_font() or not _HANGUL.search(value):
        return value
    return (names or {}).get(value) or romanise(value)


_HANGUL = re.compile("[가-힣]")
# fmt: off
_INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_VOWELS = ["a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we", "wi",
           "yu", "eu", "ui", "i"]
_FINALS = ["", "k", "k", "k", "n", "n", "n", "t", "l", "l", "l", "l", "l", "l", "l", "l", "m", "p", "p", "t", "t",
           "ng", "t", "t", "k", "t", "p", "t"]
# fmt: on


def romanise(text: str) -> str:
    """Revised Romanization of Hangul syllables, letter by letter (other characters pass through)."""
    out: list[str] = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            out.append(_INITIALS[code // 588] + _VOWELS[(code % 588) // 28] + _FINALS[code % 28])
        else:
            out.append(ch)
    result = "".join(out)
    return result[:1].upper() + result[1:]
