"""Phones and page weight in a real headless Chromium against a live server on 127.0.0.1.

At a 390 px wide phone viewport (mobile emulation, so the viewport meta tag counts) every page — overview,
fund list, a fund page, companies, upload, a job, login, the run viewer's pages — must not scroll sideways,
and no heading, table header or nav link may break a Hangul word across lines (운/용/사). The weight of a
first visit (empty cache) is summed from the browser's own resource timing (``transferSize``); the Hangul
web font must really be in use (a face "loaded", and text drawn wider or narrower than the fallback's).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from service_fixtures import (  # noqa: F401
    AS_OF_LATE,
    CLIENT_A_COMPANY,
    Loaded,
    db_url,
    loaded,
    report_folders,
    reports_in,
)
from test_run_pages import build_tree, runs_web_app
from test_web_browser import _charts_drawn, _sign_in, _wait
from web_fixtures import browser, live_server, web_app  # noqa: F401

SQLITE = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
PHONE = 390
FUND_PAGE_MAX = 2_500_000
LOGIN_PAGE_MAX = 500_000

WEIGHT_JS = """
const all = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
return all.map(e => [e.name, e.transferSize, e.encodedBodySize]);
"""
# The page's width, and (to say what to fix) the outermost elements that reach past the phone's edge.
WIDE_JS = """
const wide = [...document.body.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > innerWidth + 1
  && !(e.parentElement && e.parentElement.getBoundingClientRect().right > innerWidth + 1));
return [innerWidth, document.documentElement.scrollWidth,
        wide.slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))];
"""
# Hangul words (runs of two or more syllables), in headings, table cells, labels, nav links and text, whose glyphs sit on
# more than one line: a word broken in the middle.
BROKEN_WORDS_JS = r"""
const out = [];
for (const el of document.querySelectorAll('h1, h2, h3, th, td, dt, dd, nav a, label, button, .brand, p, li')) {
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (const m of node.data.matchAll(/[\uac00-\ud7a3]{2,}/g)) {
      const r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (tops.size > 1) out.push(m[0]);
    }
  }
}
return out;
"""
# The web font draws Hangul (without it this machine, with no CJK font, draws boxes of another width); the
# backslash is left to the next font in the list.
FONT_IN_USE_JS = """
return document.fonts.ready.then(() => {
  const width = (family, text) => { const s = document.createElement('span');
    s.textContent = text; s.style.fontFamily = family; s.style.fontSize = '20px';
    s.style.position = 'absolute'; document.body.appendChild(s); const w = s.getBoundingClientRect().width;
    s.remove(); return w; };
  const loaded = [...document.fonts].filter(f => f.family.includes('NanumGothic') && f.status === 'loaded');
  const hangul = '운용사 펀드 평가 등급', slash = '\\\\\\\\';
  return [loaded.length, width('NanumGothic, monospace', hangul), width('monospace', hangul),
          width('NanumGothic, monospace', slash), width('monospace', slash)];
});
"""
# Chart text drawn on other chart text: an axis title on its tick labels, or two tick labels of one axis on
# each other (crowded 유형 names on a phone).
OVERLAP_JS = """
const out = [];
// Each text's box in its own (perhaps rotated) frame, as four corners on the screen.
const quad = e => { const b = e.getBBox(), m = e.getScreenCTM();
  return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
    .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
// Two convex quads overlap (by more than a pixel) unless some edge's normal separates them.
const apart = (P, Q) => [P, Q].some(poly => poly.some(([x1, y1], i) => {
  const [x2, y2] = poly[(i + 1) % 4], nx = y2 - y1, ny = x1 - x2, len = Math.hypot(nx, ny) || 1;
  const a = P.map(([x, y]) => x * nx + y * ny), b = Q.map(([x, y]) => x * nx + y * ny);
  return Math.max(...a) <= Math.min(...b) + len || Math.max(...b) <= Math.min(...a) + len; }));
const texts = (root, sel) => [...root.querySelectorAll(sel)].filter(e => e.textContent.trim()
  && e.getBoundingClientRect().width > 0).map(e => [e.textContent, quad(e)]);
document.querySelectorAll('[data-chart]').forEach((chart, n) => {
  const titles = texts(chart, '.xtitle, .ytitle, .y2title');
  for (const axis of ['xtick', 'ytick', 'y2tick']) {
    const ticks = texts(chart, 'g.' + axis + ' text');
    for (const [t, tq] of titles) for (const [k, kq] of ticks) if (!apart(tq, kq)) out.push(`chart ${n}: title ${t} on ${k}`);
    for (let i = 0; i < ticks.length; i++) for (let j = i + 1; j < ticks.length; j++)
      if (!apart(ticks[i][1], ticks[j][1])) out.push(`chart ${n}: ${ticks[i][0]} on ${ticks[j][0]}`);
  }
});
return out;
"""


def _charts_readable(driver: Any, where: str) -> None:
    overlaps = driver.execute_script(OVERLAP_JS)
    assert not overlaps, f"{where}: chart text drawn over other text: {overlaps[:5]}"


def _phone(driver: Any) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})


def _desktop(driver: Any) -> None:
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _fits(driver: Any, where: str) -> None:
    """The page is as wide as the phone, and no Hangul word in a heading is split over lines; a screenshot
    goes to ``$EVALUATOR_SCREENSHOTS`` when it is set."""
    _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")
    _wait(driver, lambda d: d.execute_script(  # charts drawn: Plotly sizes them to the page
        "return [...document.querySelectorAll('[data-chart]')].every(e => e.dataset.drawn === '1')"))
    driver.execute_script("return document.fonts.ready")
    if os.environ.get("EVALUATOR_SCREENSHOTS"):
        folder = Path(os.environ["EVALUATOR_SCREENSHOTS"])
        folder.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(folder / ("phone-" + re.sub(r"[^a-z0-9]+", "-", where.lower()).strip("-") + ".png")))
    inner, scroll, wide = driver.execute_script(WIDE_JS)
    assert scroll <= PHONE and inner == PHONE, f"{where}: the page is {scroll} px wide at {PHONE} px: {wide}"
    inline = driver.execute_script("return document.querySelectorAll('style').length")
    assert inline == 0, f"{where}: a <style> element, which the Content-Security-Policy blocks"
    broken = driver.execute_script(BROKEN_WORDS_JS)
    assert not broken, f"{where}: words broken over lines: {broken}"
    _charts_readable(driver, where)


def _first_visit_bytes(driver: Any, url: str, ready: Any) -> tuple[int, list[list[Any]]]:
    """Bytes a first visit to ``url`` transfers (empty cache, cookies kept), once ``ready(driver)`` holds."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)
    ready(driver)
    driver.execute_script("return document.fonts.ready")
    entries = driver.execute_script(WEIGHT_JS)
    # An entry the page fetched twice may say 0 the second time (memory cache): count its body then.
    return sum(max(int(e[1]), int(e[2])) for e in entries), entries


def _font_in_use(driver: Any) -> None:
    faces, web, fallback, slash, slash_fallback = driver.execute_script(FONT_IN_USE_JS)
    assert faces >= 1 and abs(web - fallback) > 5, (faces, web, fallback)
    assert slash == slash_fallback, (slash, slash_fallback)  # "\\" from another font: NanumGothic draws ₩


@SQLITE
def test_a_first_visit_is_light_and_the_font_draws_hangul(loaded: Loaded, report_folders: dict[str, Path],
                                                          browser: Any) -> None:
    own = next(d for d in reports_in(report_folders[AS_OF_LATE])
               if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    _desktop(browser)
    with live_server(web_app(loaded)) as base:
        browser.delete_all_cookies()
        login, entries = _first_visit_bytes(browser, f"{base}/login", lambda d: None)
        names = [e[0] for e in entries]
        assert not any("plotly" in n for n in names) and any(".woff2" in n for n in names), names
        _font_in_use(browser)
        assert login <= LOGIN_PAGE_MAX, (login, entries)

        _sign_in(browser, base, loaded.keys["a"])
        fund, entries = _first_visit_bytes(browser, f"{base}/funds/{own['fund_code']}",
                                           lambda d: _charts_drawn(d, 1))
        names = [e[0] for e in entries]
        assert any("plotly.min.js" in n for n in names) and all(n.startswith(base) for n in names)
        fonts = [e for e in entries if ".woff2" in e[0]]
        assert fonts and sum(e[1] for e in fonts) < 250_000, fonts  # a few slices, not the 2.2 MB of both whole fonts
        _font_in_use(browser)
        assert fund <= FUND_PAGE_MAX, (fund, entries)
        for path in ("/", "/funds", f"/funds/{own['fund_code']}"):  # and at desktop width nothing overflows either
            browser.get(base + path)
            _wait(browser, lambda d: d.execute_script(
                "return [...document.querySelectorAll('[data-chart]')].every(e => e.dataset.drawn === '1')"))
            assert browser.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"), path
            _charts_readable(browser, path)
        print(f"first visit: login page {login:,} B, fund page {fund:,} B")


@SQLITE
def test_every_fund_page_fits_a_phone(loaded: Loaded, report_folders: dict[str, Path], browser: Any,
                                      tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    late = reports_in(report_folders[AS_OF_LATE])
    own = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    bad = tmp_path / "broken.csv"
    bad.write_text("숫자,값\n1,2\n", encoding="utf-8")
    _phone(browser)
    try:
        with live_server(web_app(loaded)) as base:
            browser.delete_all_cookies()
            browser.get(f"{base}/login")
            _fits(browser, "login")
            _sign_in(browser, base, loaded.keys["a"])
            _charts_drawn(browser, 1)
            _fits(browser, "overview (client)")
            for path in ("/funds", f"/funds/{own['fund_code']}", "/funds?page=2", "/companies", "/no-such-page"):
                browser.get(base + path)
                _fits(browser, path)
            links = browser.find_elements(By.CSS_SELECTOR, "main a[href^='/companies/']")
            if links:  # a company page, where the server offers them
                browser.get(links[0].get_attribute("href"))
                _fits(browser, "company page")

            _sign_in(browser, base, loaded.keys["admin"])
            _charts_drawn(browser, 1)
            _fits(browser, "overview (admin)")
            nav = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "header nav a")]
            assert f"{base}/uploads" in nav
            for url in nav:  # every page the nav offers, whatever page sets the server has
                browser.get(url)
                _fits(browser, "nav " + url.removeprefix(base))
            browser.get(f"{base}/uploads")
            browser.find_element(By.NAME, "data").send_keys(str(bad))
            browser.execute_script("document.querySelector('input[name=as_of]').value = '2025-06-30'")
            browser.find_element(By.CSS_SELECTOR, "form.upload button").click()
            _wait(browser, lambda d: "/jobs/" in d.current_url)
            _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".job-state[data-state=failed]"), 120)
            _fits(browser, "job")
    finally:
        _desktop(browser)


def test_every_run_page_fits_a_phone(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    app, keys = runs_web_app(build_tree(tmp_path / "lab"), tmp_path / "e.db")
    _phone(browser)
    try:
        with live_server(app) as base:
            _sign_in(browser, base, keys["admin"])
            browser.get(f"{base}/runs")
            _fits(browser, "runs")
            for path in ("/runs/view/lab/grpo/r1", "/runs/samples/lab/grpo/r1", "/runs/view/lab/eval-after",
                         "/runs/samples/lab/eval-after", "/runs/view/lab/compare.json", "/runs/view/lab/exp1",
                         "/runs/view/lab/broken"):
                browser.get(base + path)
                if browser.find_elements(By.CSS_SELECTOR, "[data-chart]"):
                    _charts_drawn(browser, 1)
                _fits(browser, path)
                if path == "/runs/samples/lab/grpo/r1":  # the run viewer's own stylesheet applies
                    assert browser.execute_script(
                        "return getComputedStyle(document.querySelector('pre.completion')).whiteSpace") == "pre-wrap"
    finally:
        _desktop(browser)
