"""The pages in a real headless Chromium (Debian's chromium + chromedriver through Selenium) against a
live server on 127.0.0.1: sign in as a client and as an admin, the overview, a fund page, a search,
another client's fund (absent), uploads that fail and succeed; charts drawn, the Hangul font loaded,
every resource from the server itself, screenshots saved ($EVALUATOR_SCREENSHOTS, else the test's folder).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from service_fixtures import (  # noqa: F401
    AS_OF_LATE,
    CLIENT_A_COMPANY,
    CLIENT_B_COMPANY,
    Loaded,
    db_url,
    loaded,
    report_folders,
    reports_in,
)
from web_fixtures import browser, live_server, web_app  # noqa: F401

from evaluator.app.storage.tables import Run

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
WAIT = 60


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("EVALUATOR_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _wait(driver: Any, condition: Any, timeout: float = WAIT) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # the job page reloads itself: an element found just before a reload is stale, so look again
    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException]).until(condition)


def _sign_in(driver: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}/login")
    field = driver.find_element(By.NAME, "password")
    assert field.get_attribute("type") == "password"
    field.send_keys(key)
    field.submit()
    _wait(driver, lambda d: d.current_url.rstrip("/") == base)


def _charts_drawn(driver: Any, at_least: int) -> int:
    from selenium.webdriver.common.by import By

    _wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-drawn='1'] .main-svg")) >= at_least)
    return len(driver.find_elements(By.CSS_SELECTOR, "[data-chart]"))


def _all_from(driver: Any, base: str) -> list[str]:
    """Every resource the page loaded (scripts, styles, fonts) and that it came from ``base``."""
    names = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(n.startswith(base + "/") for n in names), [n for n in names if not n.startswith(base)]
    return names


def _font_ready(driver: Any) -> bool:
    return bool(driver.execute_script(
        "return document.fonts.ready.then(() => document.fonts.check('16px NanumGothic') && "
        "[...document.fonts].some(f => f.family.includes('NanumGothic') && f.status === 'loaded'))"))


def test_a_client_in_the_browser(loaded: Loaded, report_folders: dict[str, Path], browser: Any,
                                 tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    late = reports_in(report_folders[AS_OF_LATE])
    own = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    other = next(d for d in late if d["company"] == CLIENT_B_COMPANY and d["status"] == "ok")
    shots = _shots(tmp_path)
    with live_server(web_app(loaded)) as base:
        _sign_in(browser, base, loaded.keys["a"])
        assert browser.find_element(By.TAG_NAME, "h1").text == "개요"
        _charts_drawn(browser, 1)
        assert _font_ready(browser)
        resources = _all_from(browser, base)
        assert any("plotly.min.js" in r for r in resources) and any("/assets/font/nanum-" in r and ".woff2" in r for r in resources)
        assert other["fund_code"] not in browser.page_source
        browser.save_screenshot(str(shots / "client-overview.png"))

        browser.get(f"{base}/funds/{own['fund_code']}")
        assert browser.find_element(By.CSS_SELECTOR, "h1.fund-name").text == own["fund_name"]
        assert browser.find_element(By.CSS_SELECTOR, ".fund-grade").text == f"{own['grade']}등급"
        assert _charts_drawn(browser, 4) == 4
        names = browser.execute_script(
            "return document.getElementById('chart-nav').data.map(t => t.name + ':' + t.y.length)")
        assert [n.split(":")[0] for n in names] == ["펀드 (수정기준가, 총수익 기준)", "벤치마크"]
        assert all(int(n.split(":")[1]) > 50 for n in names)
        legend = browser.find_elements(By.CSS_SELECTOR, "#chart-nav .legendtext")
        assert [e.text for e in legend] == ["펀드 (수정기준가, 총수익 기준)", "벤치마크"]
        assert browser.find_element(By.CSS_SELECTOR, "#chart-nav .ytitle").text == "지수 (시작일 = 100)"
        ticks = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#chart-nav .xtick text")]
        assert ticks and all(re.fullmatch(r"\d{4}-\d{2}", t) for t in ticks), ticks  # no English month names
        history_ticks = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#chart-history .xtick text")]
        assert history_ticks and len(set(history_ticks)) == len(history_ticks), history_ticks
        assert all(re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", t) for t in history_ticks), history_ticks
        _all_from(browser, base)
        browser.execute_script("document.getElementById('chart-nav').scrollIntoView()")
        browser.save_screenshot(str(shots / "client-fund-nav.png"))
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(shots / "client-fund.png"))

        word = own["fund_name"].split()[1]
        browser.get(f"{base}/funds")
        box = browser.find_element(By.NAME, "q")
        box.send_keys(word)
        box.submit()
        _wait(browser, lambda d: "q=" in d.current_url)
        rows = browser.find_elements(By.CSS_SELECTOR, "table.funds tbody tr")
        expected = [d for d in late if d["company"] == CLIENT_A_COMPANY  # rated or not
                    and word.lower() in d["fund_name"].lower()]
        assert len(rows) == len(expected) >= 1
        browser.save_screenshot(str(shots / "client-search.png"))

        browser.get(f"{base}/funds/{other['fund_code']}")
        assert browser.find_element(By.TAG_NAME, "h1").text == "찾을 수 없습니다"
        assert other["fund_name"] not in browser.page_source
        browser.save_screenshot(str(shots / "client-other-fund-404.png"))

        browser.get(f"{base}/")
        browser.find_element(By.CSS_SELECTOR, "form[action='/logout'] button").click()
        _wait(browser, lambda d: "/login" in d.current_url)
        browser.get(f"{base}/")
        assert "/login" in browser.current_url
    for name in ("client-overview", "client-fund", "client-fund-nav", "client-search", "client-other-fund-404"):
        assert (shots / f"{name}.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("upload")
    result = run_cli("fund", "generate-sample", "--out", str(folder / "nav.csv"), "--funds", "20", "--years", "4")
    assert result.exit_code == 0, result.output
    bad = folder / "broken.csv"
    bad.write_text("숫자,값\n1,2\n", encoding="utf-8")  # no date or fund-code column
    return {"nav": folder / "nav.csv", "benchmark": folder / "nav.benchmark.csv", "bad": bad}


def _runs(loaded: Loaded) -> int:
    from sqlalchemy import func, select
    from sqlalchemy.orm import Session

    with Session(loaded.engine) as s:
        return int(s.scalar(select(func.count()).select_from(Run)))


def _upload(driver: Any, base: str, files: dict[str, Path], as_of: str) -> str:
    """Fill the upload form; return the final job state after the page stops refreshing."""
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/uploads")
    for name, path in files.items():
        driver.find_element(By.NAME, name).send_keys(str(path))
    driver.execute_script("document.querySelector('input[name=as_of]').value = arguments[0]", as_of)
    driver.find_element(By.CSS_SELECTOR, "form.upload button").click()
    _wait(driver, lambda d: "/jobs/" in d.current_url)
    state = _wait(driver, lambda d: next((e.get_attribute("data-state") for e in d.find_elements(
        By.CSS_SELECTOR, ".job-state") if e.get_attribute("data-state") in ("done", "failed")), None), 120)
    return str(state)


def test_an_admin_uploads_in_the_browser(loaded: Loaded, browser: Any, sample_files: dict[str, Path],
                                         tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    shots = _shots(tmp_path)
    before = _runs(loaded)
    with live_server(web_app(loaded)) as base:
        _sign_in(browser, base, loaded.keys["admin"])
        assert "(관리자)" in browser.find_element(By.CSS_SELECTOR, ".who").text
        assert "새 데이터 경고" in browser.page_source
        _charts_drawn(browser, 1)
        browser.save_screenshot(str(shots / "admin-overview.png"))

        assert _upload(browser, base, {"data": sample_files["bad"]}, "2025-06-30") == "failed"
        message = browser.find_element(By.CSS_SELECTOR, ".job-message").text
        assert "broken.csv" in message and "evaluator-upload" not in message
        assert "머리글" in message and "다시 올리세요" in message and "--" not in message  # Korean, names the fix
        assert browser.find_element(By.CSS_SELECTOR, ".job-state").text == "실패"
        browser.save_screenshot(str(shots / "admin-upload-failed.png"))
        assert _runs(loaded) == before  # a failed upload stores nothing

        files = {"data": sample_files["nav"], "benchmark": sample_files["benchmark"]}
        assert _upload(browser, base, files, "2025-09-30") == "done"
        browser.save_screenshot(str(shots / "admin-upload-done.png"))
        assert _runs(loaded) == before + 1
        browser.get(f"{base}/")
        assert "2025-09-30" in browser.find_element(By.TAG_NAME, "main").text
        _all_from(browser, base)
