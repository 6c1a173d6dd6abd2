"""Security headers on every route (SQLite and a real PostgreSQL), and tags in data never rendered by the charts
(real Chromium, with the server's Content-Security-Policy in force, so the charts and Swagger UI are also shown to
work under it)."""

from __future__ import annotations

from typing import Any

import pytest
from service_fixtures import (  # noqa: F401
    CLIENT_A_COMPANY,
    Loaded,
    db_url,
    loaded,
    pg_server,
    report_folders,
)
from sqlalchemy import select, update
from sqlalchemy.orm import Session
from web_fixtures import browser, live_server, sign_in, web_app, web_client  # noqa: F401

from evaluator.app.api.security_headers import CSP
from evaluator.app.storage.tables import FundResult

SQLITE = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # the browser tests
BOLD_TYPE = "<b>혼합</b>"
LINK_NAME = '<a href="https://evil.example">세션 만료</a>'
WAIT = 60


def _routes(loaded: Loaded) -> list[str]:
    with Session(loaded.engine) as s:
        code = s.scalar(select(FundResult.fund_code).where(FundResult.company == CLIENT_A_COMPANY))
    return ["/", "/funds", f"/funds/{code}", "/companies", f"/companies/{CLIENT_A_COMPANY}", "/uploads", "/audit", "/login",
            "/no-such-page", "/export/funds.xlsx", f"/export/funds/{code}.pdf",
            "/api/v1/funds", f"/api/v1/funds/{code}", "/api/v1/summary", "/api/v1/runs", "/api/v1/nope",
            "/openapi.json", "/healthz", "/docs"]


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_headers_on_every_route(loaded: Loaded, scheme: str) -> None:  # SQLite and PostgreSQL
    client = web_client(loaded, base_url=f"{scheme}://testserver")
    assert sign_in(client, loaded.keys["admin"]).status_code == 303
    bearer = {"Authorization": f"Bearer {loaded.keys['admin']}"}
    for path in _routes(loaded):
        for headers in ({}, bearer):
            r = client.get(path, headers=headers)
            assert r.status_code < 500, (path, r.status_code)
            assert r.headers["X-Content-Type-Options"] == "nosniff", path
            assert r.headers["Referrer-Policy"] == "same-origin", path
            assert r.headers["Cache-Control"] == "no-store", path
            csp = r.headers["Content-Security-Policy"]
            assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, path
            if path != "/docs":
                assert csp == CSP and "unsafe-inline" not in csp, path
            assert ("Strict-Transport-Security" in r.headers) == (scheme == "https"), path
    asset = client.get("/").text.split('src="')[1].split('"')[0]
    r = client.get(asset)
    assert r.status_code == 200 and "immutable" in r.headers["Cache-Control"]
    assert r.headers["Content-Security-Policy"] == CSP


@SQLITE
def test_docs_nonce_is_fresh_and_only_for_its_script(loaded: Loaded) -> None:
    client = web_client(loaded)
    first, second = client.get("/docs"), client.get("/docs")
    nonce = first.headers["Content-Security-Policy"].split("'nonce-")[1].split("'")[0]
    assert f'<script nonce="{nonce}">' in first.text and nonce not in second.text
    assert "<script>" not in first.text and "cdn" not in first.text


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(condition)


def _browser_sign_in(driver: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}/login")
    field = driver.find_element(By.NAME, "password")
    field.send_keys(key)
    field.submit()
    _wait(driver, lambda d: d.current_url.rstrip("/") == base)


def _csp_violations(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]


@SQLITE
def test_tags_in_names_are_text_in_the_charts(loaded: Loaded, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    with Session(loaded.engine) as s, s.begin():
        code = s.scalar(select(FundResult.fund_code).where(FundResult.company == CLIENT_A_COMPANY,
                                                           FundResult.status == "ok", FundResult.is_current))
        s.execute(update(FundResult).where(FundResult.company == CLIENT_A_COMPANY).values(type=BOLD_TYPE))
        s.execute(update(FundResult).where(FundResult.fund_code == code).values(fund_name=LINK_NAME))
    with live_server(web_app(loaded)) as base:
        _browser_sign_in(browser, base, loaded.keys["admin"])
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-drawn='1'] .main-svg"))
        svg = "#chart-distribution svg"
        ticks = [e.text for e in browser.find_elements(By.CSS_SELECTOR, f"{svg} .xtick text")]
        assert BOLD_TYPE in ticks, ticks  # the tag shown as text
        assert not browser.find_elements(By.CSS_SELECTOR, f"{svg} a")
        bold = browser.execute_script(
            "return [...document.querySelectorAll(arguments[0] + ' tspan, ' + arguments[0] + ' text')]"
            ".filter(e => (e.getAttribute('style') || '').includes('bold') || "
            "e.getAttribute('font-weight') === 'bold').length", svg)
        assert bold == 0
        browser.get(f"{base}/funds/{code}")
        _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-drawn='1'] .main-svg")) >= 3)
        assert not browser.find_elements(By.CSS_SELECTOR, "a[href*='evil.example']")
        assert not browser.find_elements(By.CSS_SELECTOR, "svg a")
        browser.find_element(By.CSS_SELECTOR, "#chart-nav .main-svg")  # drawn under the CSP …
        assert not _csp_violations(browser)  # … with nothing blocked (no inline script or style)


@SQLITE
def test_swagger_ui_runs_under_its_policy(loaded: Loaded, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    with live_server(web_app(loaded)) as base:
        browser.get(f"{base}/docs")
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .opblock"))
        assert len(browser.find_elements(By.CSS_SELECTOR, ".swagger-ui .opblock")) >= 5
        assert not _csp_violations(browser)
