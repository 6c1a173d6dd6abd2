"""The Hangul web font in slices: every character of the font in exactly one slice, each slice a real WOFF2
holding just its glyphs (outlines and widths as in the source), made once and kept in an atomically written
cache that a killed process never leaves half-written; served with long-cache headers by our own server."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from evaluator.app.web.fonts import (
    HANGUL,
    WEIGHTS,
    SlicedFont,
    ks_x_1001_syllables,
    shared_font,
    unicode_range,
)


def _ranges(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        a, _, b = part.removeprefix("U+").partition("-")
        out.append((int(a, 16), int(b or a, 16)))
    return out


def _source(weight: int) -> TTFont:
    return TTFont(str(shared_font()._source_dir / WEIGHTS[weight]), lazy=True)


def test_ks_x_1001_has_its_2350_syllables() -> None:
    ks = ks_x_1001_syllables()
    assert len(ks) == len(set(ks)) == 2350
    assert all(HANGUL[0] <= cp <= HANGUL[1] for cp in ks)
    assert {ord(c) for c in "가각펀드운용사평가등급"} <= set(ks) and not {ord("똠"), ord("뷁")} & set(ks)


def test_unicode_range_merges_runs() -> None:
    assert unicode_range((0x41, 0x42, 0x43, 0x45, 0xAC00)) == "U+41-43,U+45,U+AC00"
    assert unicode_range((0x20,)) == "U+20"


def test_every_character_of_the_font_is_in_one_slice_and_the_stylesheet_says_so() -> None:
    font = shared_font()
    css = font.css(lambda name: f"/assets/{name}?v=x").decode()
    rules = re.findall(r"@font-face\{([^}]*)\}", css)
    assert len(rules) == len(font.slices)
    for weight in WEIGHTS:
        cmap = {cp for cp in _source(weight).getBestCmap() if cp >= 0x20}
        pieces = [p for w, p in font.slices.values() if w == weight]
        listed = [cp for p in pieces for cp in p.cps]
        assert len(listed) == len(set(listed)), "a character in two slices"
        assert set(listed) == cmap - {0x5C}  # the backslash (drawn as ₩ by this font) falls back
        declared = [_ranges(re.search(r"unicode-range:([^;}]+)", r).group(1))  # type: ignore[union-attr]
                    for r in rules if f"font-weight:{weight};" in r]
        spans = sorted(span for ranges in declared for span in ranges)
        assert all(a[1] < b[0] for a, b in pairwise(spans)), "two faces claim one character"
        assert not any(a <= 0x5C <= b for a, b in spans)
        covered = {cp for a, b in spans for cp in range(a, b + 1)}
        assert cmap - {0x5C} <= covered
        ks_pieces = [p for p in pieces if set(p.cps) <= set(ks_x_1001_syllables())]
        assert sum(len(p.cps) for p in ks_pieces) == 2350 and all(len(p.cps) <= 100 for p in ks_pieces[2:])
        ui, reports = (set(p.cps) for p in ks_pieces[:2])
        assert {ord(c) for c in "로그인펀드운용사등급개요업로드"} <= ui  # the pages' own words: one slice
        assert {ord(c) for c in "동류그룹상위변동성샤프지수최대낙폭"} <= ui | reports  # the reports' words: the next
    assert all(re.search(r'src:url\("/assets/font/nanum-\d+-\d+\.woff2\?v=x"\) format\("woff2"\)', r) for r in rules)


def test_a_slice_is_a_woff2_with_its_glyphs_as_drawn_in_the_source(tmp_path: Path) -> None:
    font = SlicedFont(cache=tmp_path)
    name, (weight, piece) = next((n, wp) for n, wp in font.slices.items()
                                 if wp[0] == 700 and ord("운") in wp[1].cps)
    made = TTFont(io.BytesIO(font.body(name)))
    assert made.flavor == "woff2"
    assert set(made.getBestCmap()) == set(piece.cps)
    assert not {"fpgm", "prep", "cvt ", "TSI0", "TSI1", "TSI3"} & set(made.keys())
    source = _source(weight)
    for ch in "운용":
        new, old = made.getBestCmap()[ord(ch)], source.getBestCmap()[ord(ch)]
        assert made["hmtx"][new] == source["hmtx"][old]
        a, b = made["glyf"][new], source["glyf"][old]
        a.expand(made["glyf"]), b.expand(source["glyf"])
        assert a.numberOfContours == b.numberOfContours > 0
        assert list(a.getCoordinates(made["glyf"])[0]) == list(b.getCoordinates(source["glyf"])[0])


def test_a_slice_is_made_once_then_read_from_the_cache(tmp_path: Path) -> None:
    name = "font/nanum-400-1.woff2"
    first = SlicedFont(cache=tmp_path)
    body = first.body(name)
    path = tmp_path / f"{first.version(name)}.woff2"
    assert path.read_bytes() == body and body.startswith(b"wOF2")
    path.write_bytes(b"wOF2 from the cache")  # a new process reads the file, it does not make it again
    assert SlicedFont(cache=tmp_path).body(name) == b"wOF2 from the cache"
    path.write_bytes(b"\0" * 10)  # not a font (a disk error): made again and replaced
    assert SlicedFont(cache=tmp_path).body(name) == body == path.read_bytes()  # the same bytes every time
    blocked = tmp_path / "a-file"
    blocked.write_text("x")  # the cache cannot be written: the slice is still served
    assert SlicedFont(cache=blocked / "webfonts").body(name) == body


def test_a_killed_maker_leaves_only_whole_slices(tmp_path: Path) -> None:
    code = ("from pathlib import Path; from evaluator.app.web.fonts import SlicedFont\n"
            f"f = SlicedFont(cache=Path({str(tmp_path)!r}))\n"
            "for n in f.slices: f.body(n)\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("*.woff2"))) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.kill()
    proc.wait(timeout=30)
    done = list(tmp_path.glob("*.woff2"))
    assert len(done) >= 4
    by_version = {p.version: p for _w, p in SlicedFont(cache=tmp_path).slices.values()}
    for path in done:
        made = TTFont(io.BytesIO(path.read_bytes()))  # whole, or it would not parse
        assert set(made.getBestCmap()) == set(by_version[path.stem].cps)


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from evaluator.app.api.settings import Settings
    from evaluator.app.storage.database import open_database
    from evaluator.app.web.app import create_web_app

    engine = open_database(f"sqlite:///{tmp_path / 'e.db'}", migrate=True)
    return TestClient(create_web_app(engine=engine, settings=Settings(rate_per_minute=0)))


def test_the_server_serves_the_stylesheet_and_slices_long_cached(client) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/login")
    css_url = re.search(r'href="(/assets/web/fonts\.css\?v=[0-9a-f]+)"', page.text).group(1)  # type: ignore[union-attr]
    css = client.get(css_url, headers={"accept-encoding": "br"})
    assert css.headers["content-type"].startswith("text/css") and css.headers["content-encoding"] == "br"
    urls = re.findall(r'url\("([^"]+)"\)', css.text)
    assert len(urls) == len(shared_font().slices) and all(u.startswith("/assets/font/") for u in urls)
    font = client.get(urls[1], headers={"accept-encoding": "gzip, br"})
    assert font.status_code == 200 and font.headers["content-type"] == "font/woff2"
    assert "content-encoding" not in font.headers and font.content.startswith(b"wOF2")
    assert "immutable" in font.headers["cache-control"]
    assert font.headers["etag"].strip('"').startswith(urls[1].split("v=")[1])
    assert client.get(urls[1], headers={"if-none-match": font.headers["etag"]}).status_code == 304
    assert client.get("/assets/font/nanum-400-9999.woff2").status_code == 404
    plotly_br = client.get("/assets/plotly.min.js", headers={"accept-encoding": "br"})
    plotly_raw = client.get("/assets/plotly.min.js", headers={"accept-encoding": "identity"})
    assert plotly_br.headers["content-encoding"] == "br" and plotly_br.content == plotly_raw.content
    assert int(plotly_br.headers["content-length"]) < len(plotly_raw.content) / 3


def test_pages_without_charts_never_name_plotly(client) -> None:  # type: ignore[no-untyped-def]
    assert "plotly" not in client.get("/login").text.lower()
