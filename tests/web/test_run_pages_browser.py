"""The run viewer in a real headless Chromium (Debian's chromium + chromedriver through Selenium).

An admin signs in, opens /runs, a training run (its charts drawn by the self-hosted Plotly.js), its
completions (one visible with its per-reward scores and judge explanation), an evaluation report and a
comparison; a client key sees no run link and gets 404 pages. Screenshots go to ``EVALUATOR_SCREENSHOTS``
(default: the test's temporary folder).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_run_pages import build_tree, runs_web_app
from web_fixtures import browser, live_server  # noqa: F401


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    base = tmp_path_factory.mktemp("runbrowser")
    app, keys = runs_web_app(build_tree(base / "lab"), base / "e.db")
    with live_server(app) as url:
        yield url, keys


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("EVALUATOR_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _sign_in(driver, base: str, key: str) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}/login")
    driver.find_element(By.NAME, "password").send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit], form input[type=submit]").click()
    _wait(lambda: "/login" not in driver.current_url)


def _wait(cond, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for the page")


def _shot(driver, path: Path) -> None:  # type: ignore[no-untyped-def]
    """A screenshot once the self-hosted Hangul font is in use (a text check passes even with boxes)."""
    _wait(lambda: driver.execute_script(
        "return document.fonts.status === 'loaded' && document.fonts.check('16px NanumGothic', '가')"))
    driver.save_screenshot(str(path))


def _all_local(driver, base: str) -> None:  # type: ignore[no-untyped-def]
    names = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(n.startswith(base) for n in names), [n for n in names if not n.startswith(base)]


def _unlabelled(driver) -> list[str]:  # type: ignore[no-untyped-def]
    return list(driver.execute_script("""
        return [...document.querySelectorAll('input, select, textarea')].filter(e => e.type !== 'hidden')
          .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.outerHTML);"""))


def test_admin_reads_runs_in_the_browser(server, browser, shots: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from selenium.webdriver.common.by import By

    base, keys = server
    _sign_in(browser, base, keys["admin"])
    browser.get(f"{base}/runs")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")
    assert len(rows) == 8 and "lab/grpo/r1" in browser.find_element(By.CSS_SELECTOR, "table.runs").text
    assert _unlabelled(browser) == []
    _shot(browser, shots / "runs-list.png")

    browser.find_element(By.LINK_TEXT, "lab/grpo/r1").click()
    _wait(lambda: len(browser.find_elements(By.CSS_SELECTOR, "[data-drawn='1']")) == 5)
    assert browser.find_elements(By.CSS_SELECTOR, ".chart .main-svg")  # Plotly drew SVG
    legend = browser.find_element(By.ID, "chart-0").text
    assert "correctness" in legend and "strict_format" in legend
    assert browser.find_element(By.CSS_SELECTOR, "#chart-0 .xtitle").text == "학습 단계 (step)"  # plotly.js 4 reads {text: …}
    assert "step 12" in browser.find_element(By.ID, "best-adapter").text
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".gtitle")]
    assert len(titles) == 5 and not any(w in " ".join(titles) for w in ("Reward", "Held-out", "Loss", "Other"))
    ticks = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".xtick text")]
    assert ticks and all(t.replace(",", "").isdigit() for t in ticks), ticks  # whole steps only
    _all_local(browser, base)
    _shot(browser, shots / "run-training.png")

    browser.find_element(By.ID, "samples-link").click()
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "section.sample"))
    assert _unlabelled(browser) == []
    first = browser.find_elements(By.CSS_SELECTOR, "section.sample")[0]
    assert first.find_element(By.CSS_SELECTOR, ".completion").is_displayed()
    scores = {e.get_attribute("data-reward"): e.text for e in first.find_elements(By.CSS_SELECTOR, ".reward-score")}
    assert set(scores) == {"correctness", "int", "strict_format", "soft_format", "xmlcount"} and scores["correctness"] == "0"
    assert first.find_element(By.CSS_SELECTOR, ".explanation").text.startswith("판정 0")
    _shot(browser, shots / "run-samples.png")

    browser.get(f"{base}/runs/view/lab/eval-after")
    table = browser.find_element(By.CSS_SELECTOR, "table.metrics").text
    assert "accuracy ★" in table and "50.0%" in table
    browser.find_element(By.ID, "samples-link").click()
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "section.sample .verdict"))
    assert _unlabelled(browser) == []
    _shot(browser, shots / "run-evaluation-samples.png")

    browser.get(f"{base}/runs/view/lab/compare.json")
    assert "+16.7 pp" in browser.find_element(By.CSS_SELECTOR, "table.paired").text
    assert browser.find_element(By.CSS_SELECTOR, "p.gained").text.split() == ["item-001", "item-004"]
    assert browser.find_element(By.CSS_SELECTOR, "p.lost").text.split() == ["item-003"]
    _shot(browser, shots / "run-comparison.png")

    browser.get(f"{base}/runs/view/lab/exp1")
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "[data-drawn='1']"))
    _shot(browser, shots / "run-experiment.png")


def test_a_client_key_gets_no_run_pages_in_the_browser(server, browser, shots: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from selenium.webdriver.common.by import By

    base, keys = server
    _sign_in(browser, base, keys["client"])
    assert not browser.find_elements(By.CSS_SELECTOR, "a[href^='/runs']")
    for path in ("/runs", "/runs/view/lab/grpo/r1", "/runs/samples/lab/grpo/r1"):
        browser.get(base + path)
        text = browser.find_element(By.TAG_NAME, "main").text
        assert "찾을 수 없습니다" in text and "grpo" not in text, path
    _shot(browser, shots / "run-client-404.png")
