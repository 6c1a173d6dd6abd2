"""The client portal in a real headless Chromium against a live server on 127.0.0.1: a client and an admin reach
the 운용사 list and a company page from the nav and from a fund page (a name with ``/`` included), a client never
sees another client's company, and the list's .xlsx link holds exactly the funds the list shows for its filters.
Screenshots go to $EVALUATOR_SCREENSHOTS, else the test's folder.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import httpx
import pytest
from portal_fixtures import SLASH_COMPANY, Rated, rated  # noqa: F401
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
from test_web_browser import _all_from, _charts_drawn, _shots, _sign_in, _wait
from web_fixtures import browser, live_server, web_app  # noqa: F401

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def _h1(driver: Any) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "h1").text


def _click(driver: Any, css: str, text: str | None = None) -> None:
    """Click the first element matching ``css`` (with ``text``, when given) and wait for the next page."""
    from selenium.webdriver.common.by import By

    links = [e for e in driver.find_elements(By.CSS_SELECTOR, css) if text is None or e.text == text]
    assert links, (css, text, driver.current_url)
    old = driver.find_element(By.TAG_NAME, "html")
    links[0].click()
    _wait(driver, lambda d: not _attached(old))


def _attached(element: Any) -> bool:
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.tag_name  # noqa: B018 (a stale element raises)
        return True
    except StaleElementReferenceException:
        return False
    except WebDriverException as exc:  # chromedriver, asked mid-navigation, may word staleness this way
        if "does not belong to the document" in str(exc):
            return False
        raise


def _companies_listed(driver: Any) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "table.companies a.company-link")]


def test_a_client_reaches_its_company_from_the_nav_and_a_fund_page(
        loaded: Loaded, rated: Rated, report_folders: dict[str, Path], browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    late = reports_in(report_folders[AS_OF_LATE])
    own = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    shots = _shots(tmp_path)
    with live_server(web_app(loaded)) as base:
        _sign_in(browser, base, rated.keys["a"])
        _click(browser, "header.top nav a", "운용사")
        assert browser.current_url == f"{base}/companies" and _h1(browser) == "운용사 평가"
        assert _companies_listed(browser) == [CLIENT_A_COMPANY]
        assert CLIENT_B_COMPANY not in browser.page_source
        browser.save_screenshot(str(shots / "client-companies.png"))

        _click(browser, "a.company-link", CLIENT_A_COMPANY)
        assert _h1(browser) == CLIENT_A_COMPANY
        _charts_drawn(browser, 1)  # the grade history over the two stored batches
        codes = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "table.company-funds tbody tr td:nth-child(2)")]
        assert set(codes) == {d["fund_code"] for d in late if d["company"] == CLIENT_A_COMPANY}
        assert browser.find_elements(By.CSS_SELECTOR, "section.strengths .verdict")
        _all_from(browser, base)
        browser.save_screenshot(str(shots / "client-company.png"))

        browser.get(f"{base}/funds/{own['fund_code']}")
        _click(browser, "a.company-link", CLIENT_A_COMPANY)
        assert _h1(browser) == CLIENT_A_COMPANY and "/companies/" in browser.current_url

        browser.get(f"{base}/companies/{CLIENT_B_COMPANY}")
        assert _h1(browser) == "찾을 수 없습니다" and CLIENT_B_COMPANY not in browser.page_source

        # the list, filtered to its unrated funds, and its .xlsx link: the same funds
        browser.get(f"{base}/funds")
        from selenium.webdriver.support.ui import Select

        Select(browser.find_element(By.NAME, "status")).select_by_value("not_rated")
        _click(browser, "form.filters button")
        assert "status=not_rated" in browser.current_url
        shown = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "table.funds tbody tr td:nth-child(2)")]
        assert set(shown) == {d["fund_code"] for d in late if d["company"] == CLIENT_A_COMPANY
                              and d["status"] == "not_rated"}
        href = browser.find_element(By.CSS_SELECTOR, "a.export.xlsx").get_attribute("href")
        cookies = {c["name"]: c["value"] for c in browser.get_cookies()}
        body = httpx.get(href, cookies=cookies, timeout=60)
        assert body.status_code == 200
        from openpyxl import load_workbook

        rows = list(load_workbook(io.BytesIO(body.content), read_only=True)["펀드"].iter_rows(values_only=True))
        assert [r[0] for r in rows[1:]] == shown
        browser.save_screenshot(str(shots / "client-funds-not-rated.png"))
    for name in ("client-companies", "client-company", "client-funds-not-rated"):
        assert (shots / f"{name}.png").stat().st_size > 10_000


def test_an_admin_reaches_every_company_and_a_name_with_a_slash(
        loaded: Loaded, rated: Rated, report_folders: dict[str, Path], browser: Any, tmp_path: Path) -> None:
    late = reports_in(report_folders[AS_OF_LATE])
    fund = next(d for d in late if d["company"] == CLIENT_B_COMPANY and d["status"] == "ok")
    shots = _shots(tmp_path)
    with live_server(web_app(loaded)) as base:
        _sign_in(browser, base, rated.keys["admin"])
        _click(browser, "header.top nav a", "운용사")
        assert set(_companies_listed(browser)) == {c["company"] for c in rated.late["companies"]}
        browser.save_screenshot(str(shots / "admin-companies.png"))
        _click(browser, "a.company-link", SLASH_COMPANY)
        assert _h1(browser) == SLASH_COMPANY
        browser.get(f"{base}/funds/{fund['fund_code']}")
        _click(browser, "a.company-link", CLIENT_B_COMPANY)
        assert _h1(browser) == CLIENT_B_COMPANY
        browser.save_screenshot(str(shots / "admin-company.png"))
