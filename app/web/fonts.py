"""The Hangul web font: NanumGothic (shipped by koreanize-matplotlib) cut into small WOFF2 slices.

Why slices: the whole font is 17,666 glyphs (4.6 MB TTF per weight, 1.0 MB as WOFF2 even without hinting),
and a page uses a few dozen syllables. Measured WOFF2 sizes without hinting (Regular / Bold): Latin and
punctuation 12 / 12 KB; KS X 1001's 2,350 syllables 133 / 191 KB; 100 of those syllables 7 / 10 KB. A single
subset to KS X 1001 would leave the other 8,822 modern syllables (and every Hanja) to a fallback font, and
many machines have none (boxes). So, as Google Fonts does, each weight is declared as many ``@font-face``
rules with an exact ``unicode-range``: the browser downloads only the slices whose characters the page
shows. Google orders its slices by how often characters occur on the web; offline, the nearest measure of what
our pages show is the text the product itself writes. So the KS X 1001 syllables come in this order: those in
the web package's own files (templates, labels: 248 syllables, one slice on every page, 20 / 24 KB), those in
the fund reports' and rubric's wording (``domains.fund``, ``methodology``: 183 more, one slice, 16 / 21 KB),
then the rest in Unicode order, 100 per slice (7–12 KB each), pulled by the names a page shows. The rarer
syllables, Jamo, Hanja and other symbols follow in larger slices fetched only when a character of theirs
appears. Measured first visits (``benchmarks/web_weight.py``, funds and 운용사 named as real ones are): the
login page 4 slices, 71 KB; a fund page 6 slices, 109 KB; a fund list 6 slices, 96 KB. In Unicode order alone
a fund page needed 45 slices (454 KB). Editing the product's Korean text changes what the first slices hold
(and their URLs), never which characters the font covers. The backslash is left out of every range:
NanumGothic draws U+005C as ₩ (Korean code-page heritage), so ``\\`` falls back to a font that draws it.

Each slice is made once, on its first request, by fontTools (subset, hinting dropped, WOFF2 via brotli),
kept in memory and in ``$EVALUATOR_CACHE/webfonts`` (default ``~/.cache/evaluator``), written atomically,
so every later worker and restart reads it back. Its URL version is a hash of the source font, the slice's
code points and :data:`RECIPE`, known before anything is built, so the stylesheet costs nothing to make.
Chromium's font sanitiser (OTS) rejects the original files ("TSI3: zero-length table"): the empty VTT
hinting-source tables (TSI0–TSI5) are dropped with the rest of the hinting.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

log = logging.getLogger(__name__)

RECIPE = "woff2-nohint-1"
"""Change when the subsetting options change: every slice gets a new URL and cache file."""
FAMILY = "NanumGothic"
WEIGHTS = {400: "NanumGothic.ttf", 700: "NanumGothicBold.ttf"}
KS_PER_SLICE = 100
RARE_PER_SLICE = 500
BASIC = [(0x20, 0x5B), (0x5D, 0x7E), (0xA0, 0x24F), (0x2000, 0x206F), (0x20A9, 0x20A9), (0x20AC, 0x20AC)]
"""Latin, punctuation, ₩ and €; U+005C (backslash) is left out on purpose (see the module docstring)."""
HANGUL = (0xAC00, 0xD7A3)
JAMO = [(0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xD7B0, 0xD7FF)]
HANJA = [(0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF)]
FIRST_SLICES = (("evaluator.app.web",), ("evaluator.domains.fund", "evaluator.methodology"))
"""The pages' own words (every page), then the fund reports' (fund pages): each a slice ahead of the rest."""
TEXT_FILES = (".html", ".py", ".json")


def ks_x_1001_syllables() -> list[int]:
    """The 2,350 precomposed syllables of KS X 1001 (EUC-KR rows 0xB0–0xC8), in Unicode order."""
    found = []
    for hi in range(0xB0, 0xC9):
        for lo in range(0xA1, 0xFF):
            try:
                found.append(ord(bytes([hi, lo]).decode("euc_kr")))
            except UnicodeDecodeError:
                continue
    return sorted(found)


def _in(cp: int, ranges: list[tuple[int, int]]) -> bool:
    return any(a <= cp <= b for a, b in ranges)


def product_syllables(packages: tuple[str, ...]) -> set[int]:
    """The Hangul syllables written in these packages' own files (templates, code, JSON): what their pages say."""
    found: set[int] = set()
    for package in packages:
        root = Path(str(resources.files(package)))
        if not root.is_dir():  # not installed as files (a zip): the order is then plainer, the coverage the same
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix in TEXT_FILES and path.is_file():
                text = path.read_text("utf-8", errors="ignore")
                found |= {ord(c) for c in text if HANGUL[0] <= ord(c) <= HANGUL[1]}
    return found


def plan_slices(cmap: set[int], first: tuple[set[int], ...] = ()) -> list[tuple[int, ...]]:
    """Every code point of the font (but the backslash) in exactly one slice; see the module docstring.
    ``first``: sets of syllables that get slices of their own (their KS X 1001 part), ahead of the rest."""
    ks_all = [cp for cp in ks_x_1001_syllables() if cp in cmap]
    ks_set = set(ks_all)
    cores, placed = [], set()
    for group in first:
        cores.append(sorted((group & ks_set) - placed))
        placed |= group & ks_set
    ks = [cp for cp in ks_all if cp not in placed]
    basic = sorted(cp for cp in cmap if _in(cp, BASIC))
    rare = sorted(cp for cp in cmap if HANGUL[0] <= cp <= HANGUL[1] and cp not in ks_set)
    jamo = sorted(cp for cp in cmap if _in(cp, JAMO))
    hanja = [sorted(cp for cp in cmap if a <= cp <= b) for a, b in HANJA]  # a slice never spans two blocks
    taken = set(basic) | ks_set | set(rare) | set(jamo) | {cp for block in hanja for cp in block} | {0x5C}
    other = sorted(cp for cp in cmap if cp not in taken and cp >= 0x20)

    def chunks(cps: list[int], size: int) -> list[tuple[int, ...]]:
        return [tuple(cps[i:i + size]) for i in range(0, len(cps), size)]

    groups = [chunks(basic, 10**6), *(chunks(core, 10**6) for core in cores), chunks(ks, KS_PER_SLICE),
              chunks(rare, RARE_PER_SLICE), chunks(jamo, 10**6),
              *(chunks(block, 1000) for block in hanja), chunks(other, 1000)]
    return [s for g in groups for s in g if s]


def unicode_range(cps: tuple[int, ...]) -> str:
    """``U+AC00-AC01,U+AC04`` for the code points (sorted), runs merged."""
    parts: list[str] = []
    start = prev = cps[0]
    for cp in [*cps[1:], None]:
        if cp is not None and cp == prev + 1:
            prev = cp
            continue
        parts.append(f"U+{start:X}" if start == prev else f"U+{start:X}-{prev:X}")
        if cp is not None:
            start = prev = cp
    return ",".join(parts)


def cache_root() -> Path | None:
    """``$EVALUATOR_CACHE/webfonts``, else ``~/.cache/evaluator/webfonts``; None (memory only) for a user with no
    home folder: a shared temporary folder would let another user plant the files we serve."""
    try:
        return Path(os.environ.get("EVALUATOR_CACHE") or Path.home() / ".cache" / "evaluator") / "webfonts"
    except RuntimeError:
        return None


def subset_woff2(raw: bytes, cps: tuple[int, ...]) -> bytes:
    """``raw`` (a TrueType font) cut to ``cps`` as WOFF2, hinting dropped (with the TSI tables OTS rejects)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(raw), lazy=True, recalcTimestamp=False)  # same bytes in every worker
    for tag in [t for t in font.keys() if t.startswith("TSI")]:  # noqa: SIM118 (TTFont is not a dict)
        del font[tag]
    options = subset.Options()
    options.flavor, options.hinting, options.desubroutinize = "woff2", False, True
    sub = subset.Subsetter(options)
    sub.populate(unicodes=cps)
    sub.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()


@dataclass
class Slice:
    file: str
    cps: tuple[int, ...]
    version: str

    @property
    def range(self) -> str:
        """Hanja slices declare their whole span (the block holds nothing else; a Hanja the font lacks costs one
        download, then falls back): their exact lists would be most of the stylesheet."""
        if _in(self.cps[0], HANJA) and _in(self.cps[-1], HANJA):
            return f"U+{self.cps[0]:X}-{self.cps[-1]:X}"
        return unicode_range(self.cps)


class SlicedFont:
    """One family, each weight in slices; ``css()`` declares them, ``body(name)`` makes or reads one slice."""

    def __init__(self, source_dir: Path | None = None, cache: Path | None = None) -> None:
        self._source_dir = source_dir or Path(str(resources.files("koreanize_matplotlib") / "fonts"))
        self._cache = cache
        self._lock = threading.Lock()
        self._bodies: dict[str, bytes] = {}

    @cached_property
    def first(self) -> tuple[set[int], ...]:
        return tuple(product_syllables(packages) for packages in FIRST_SLICES)

    @cached_property
    def slices(self) -> dict[str, tuple[int, Slice]]:
        """Asset name (``font/nanum-400-3.woff2``) → (weight, slice); the source read once to plan them."""
        from fontTools.ttLib import TTFont

        out: dict[str, tuple[int, Slice]] = {}
        for weight, file in WEIGHTS.items():
            raw = (self._source_dir / file).read_bytes()
            digest = hashlib.sha256(raw).hexdigest()
            cmap = set(TTFont(io.BytesIO(raw), lazy=True).getBestCmap())
            for i, cps in enumerate(plan_slices(cmap, self.first)):
                key = hashlib.sha256(f"{RECIPE}|{digest}|{unicode_range(cps)}".encode()).hexdigest()[:16]
                out[f"font/nanum-{weight}-{i}.woff2"] = (weight, Slice(file, cps, key))
        return out

    def version(self, name: str) -> str:
        return self.slices[name][1].version

    def css(self, url: Callable[[str], str]) -> bytes:
        """The ``@font-face`` rules; ``url(name)`` gives each slice's versioned URL."""
        rules = []
        for name, (weight, piece) in self.slices.items():
            rules.append(f'@font-face{{font-family:"{FAMILY}";font-weight:{weight};font-display:swap;'
                         f'src:url("{url(name)}") format("woff2");unicode-range:{piece.range}}}')
        return ("/* NanumGothic in slices: see evaluator.app.web.fonts */\n" + "\n".join(rules) + "\n").encode()

    def body(self, name: str) -> bytes:
        """The slice's WOFF2 bytes: from memory, else the disk cache, else made now (then saved atomically)."""
        if name in self._bodies:
            return self._bodies[name]
        _weight, piece = self.slices[name]
        root = self._cache or cache_root()
        path = root / f"{piece.version}.woff2" if root is not None else None
        with self._lock:
            if name not in self._bodies:
                try:
                    data = path.read_bytes() if path is not None else b""
                except OSError:
                    data = b""
                if not data.startswith(b"wOF2"):  # absent (or not a font): make it
                    data = subset_woff2((self._source_dir / piece.file).read_bytes(), piece.cps)
                    if path is not None:
                        _save(path, data)
                self._bodies[name] = data
        return self._bodies[name]


def _save(path: Path, data: bytes) -> None:
    """Write atomically (temporary file, then rename); a read-only cache only costs a remake next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.warning("web font cache not written (%s): %s", path.parent, exc)


@cache
def shared_font() -> SlicedFont:
    """One per process: every app (and test server) shares the plan and the slices made."""
    return SlicedFont()
