"""Fixtures for the web tests: the web app over the loaded database (SQLite and real PostgreSQL),
signed-in test clients, a live uvicorn server on 127.0.0.1, and headless Chromium from Debian.

Chromium runs through Selenium with the system chromedriver (Selenium Manager downloads nothing).
Tests skip with the reason only when chromium/chromedriver are not installed.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from service_fixtures import Loaded

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def settings(**overrides: Any):  # type: ignore[no-untyped-def]
    from evaluator.app.api.settings import Settings

    return Settings(**{"rate_per_minute": 0, **overrides})


def web_app(loaded: Loaded, extensions: Any = None, **overrides: Any):  # type: ignore[no-untyped-def]
    from evaluator.app.web.app import create_web_app

    return create_web_app(engine=loaded.engine, settings=settings(**overrides), extensions=extensions)


def web_client(loaded: Loaded, base_url: str = "http://testserver", **overrides: Any):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    return TestClient(web_app(loaded, **overrides), base_url=base_url, raise_server_exceptions=False,
                      follow_redirects=False)


def login_token(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "the login form carries a CSRF token"
    return match.group(1)


def sign_in(client, key: str, login: str = "") -> Any:  # type: ignore[no-untyped-def]
    """GET the form, POST the login and password (an API key when ``login`` is empty) with its token;
    returns the POST response (303 on success)."""
    form = client.get("/login")
    return client.post("/login", data={"login": login, "password": key, "csrf": login_token(form.text),
                                       "next": "/"})


def page_csrf(html: str) -> str:
    return login_token(html)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free loopback port; yields the base URL."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def chromium_reason() -> str | None:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        return "chromium and chromium-driver not installed: apt-get install -y chromium chromium-driver"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = chromium_reason()
    if reason:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,900",
                "--lang=ko-KR", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
