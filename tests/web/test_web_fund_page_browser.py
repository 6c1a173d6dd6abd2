"""The fund page in a real headless Chromium against a live server on 127.0.0.1, on a database holding two
`fund evaluate` batches and a quarterly `fund history --db` batch of the same sample universe.

Key facts read off the reports independently; the period-returns table equal to the engine's own figures for
the same windows (recomputed here from a fresh engine run, and checked against the engine's annualised
return for 1년/3년/5년); one grade-history point per as-of date, the history's quarter-ends included; a
not-rated fund shows its reasons and draws no empty chart; every form control has a label; a skip link; each
chart carries its data as a table. Screenshots go to $EVALUATOR_SCREENSHOTS (else the test's folder).
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from service_fixtures import (  # noqa: F401
    AS_OF_EARLY,
    AS_OF_LATE,
    CLIENT_A_COMPANY,
    Loaded,
    db_url,
    loaded,
    pg_server,
    report_folders,
    reports_in,
)
from web_fixtures import browser, live_server, web_app  # noqa: F401

WAIT = 60
WINDOW_LABELS = {"1m": "1개월", "3m": "3개월", "6m": "6개월", "1y": "1년", "3y": "3년", "5y": "5년"}
YEARS = {"1y": 1, "3y": 3, "5y": 5}


def _wait(driver: Any, condition: Any, timeout: float = WAIT) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _sign_in(driver: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}/login")
    assert _unlabelled(driver) == []
    field = driver.find_element(By.NAME, "password")  # a key in the password field, the login left empty
    field.send_keys(key)
    field.submit()
    _wait(driver, lambda d: d.current_url.rstrip("/") == base)


def _unlabelled(driver: Any) -> list[str]:
    """Visible form controls with no label (a <label>, aria-label or aria-labelledby)."""
    return list(driver.execute_script("""
        return [...document.querySelectorAll('input, select, textarea')]
          .filter(e => e.type !== 'hidden')
          .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
          .map(e => e.outerHTML.slice(0, 80));"""))


def _skip_link(driver: Any) -> None:
    first = driver.execute_script("return document.querySelector('body a, body button')")
    assert first.get_attribute("class") == "skip-link" and first.get_attribute("href").endswith("#main")
    assert driver.execute_script("return document.getElementById('main').tagName") == "MAIN"


def _charts_have_data_tables(driver: Any) -> int:
    """Every chart is drawn with data, and its <details> table holds one row per x value of its traces."""
    charts = driver.execute_script("""
        return [...document.querySelectorAll('[data-chart]')].map(el => {
          const spec = JSON.parse(document.getElementById(el.dataset.chart).textContent);
          const xs = new Set(spec.data.flatMap(t => (t.x || []).map(String)));
          const ys = spec.data.flatMap(t => t.y || []).filter(v => v !== null);
          const rows = document.querySelectorAll('#' + el.id + '-data tbody tr').length;
          return [el.id, xs.size, ys.length, rows, el.getAttribute('role'), el.getAttribute('aria-label')];
        });""")
    for chart_id, xs, ys, rows, role, label in charts:
        assert ys > 0, f"{chart_id} is drawn from nothing"
        assert rows == xs, (chart_id, rows, xs)
        assert role == "figure" and label, chart_id
    return len(charts)


def _api(base: str, key: str, path: str) -> Any:
    import json
    import urllib.request

    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=30) as response:  # 127.0.0.1 only
        return json.loads(response.read())


def _pct(value: float) -> str:
    return f"{value * 100:.2f}%"


@pytest.fixture(scope="module")
def history_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quarterly history of the same sample universe up to the early batch's date (run once, stored per test)."""
    out = tmp_path_factory.mktemp("history") / "h"
    result = run_cli("fund", "history", "--sample", "--sample-funds", "40", "--sample-years", "6", "--freq", "Q",
                     "--from", "2024-03", "--to", "2025-03", "--out", str(out), "--db", f"sqlite:///{out}.db")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def engine_run() -> Any:
    """The fund engine run afresh on the sample universe `fund evaluate --sample --sample-funds 40` grades."""
    from evaluator.domains.fund.data.class_families import infer_classes
    from evaluator.domains.fund.data.sample import sample_universe
    from evaluator.domains.fund.engine.evaluate import evaluate_loaded
    from evaluator.domains.fund.rubric import default_rubric

    universe = infer_classes(sample_universe(funds=40, risk_free="0", realistic=True), True)
    return evaluate_loaded(universe, default_rubric(), as_of=dt.date.fromisoformat(AS_OF_LATE))


def _store_history(loaded: Loaded, folder: Path) -> None:
    from evaluator.app.storage.batches import store_folder
    from evaluator.app.storage.tables import Run

    result = store_folder(loaded.engine, folder / "latest", source="history")
    assert result.created
    from sqlalchemy.orm import Session

    with Session(loaded.engine) as s:
        run = s.get(Run, result.run_id)
        assert run.engine_version not in ("unknown", "") and run.rubric_hash and len(run.rubric_hash) == 64


def _history_dates(folder: Path, code: str) -> set[str]:
    with (folder / "history.csv").open(encoding="utf-8-sig") as fh:
        return {row["as_of"] for row in csv.DictReader(fh) if row["fund_code"] == code}


def test_history_db_records_the_batch_identity(history_folder: Path) -> None:
    """`fund history --db` stores its latest/ batch with the engine version and rubric hash, like `fund evaluate`."""
    import json
    import sqlite3

    with sqlite3.connect(f"{history_folder}.db") as db:
        runs = db.execute("SELECT engine_version, rubric_hash, source FROM runs").fetchall()
    assert len(runs) == 1 and runs[0][0] not in ("unknown", "") and re.fullmatch(r"[0-9a-f]{64}", runs[0][1])
    assert runs[0][2] == "history"
    summary = json.loads((history_folder / "latest" / "summary.json").read_text(encoding="utf-8"))
    prov = summary["inputs"]["provenance"]
    assert prov["engine_version"] and prov["engine_version"] != "unknown"
    assert re.fullmatch(r"[0-9a-f]{64}", prov["rubric_sha256"]) and prov["input_hashes"]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_fund_page_in_the_browser(loaded: Loaded, report_folders: dict[str, Path], history_folder: Path,
                                      engine_run: Any, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    _store_history(loaded, history_folder)
    late = reports_in(report_folders[AS_OF_LATE])
    own = [d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok"]
    fund = next((d for d in own if d.get("share_classes")), own[0])
    shots = Path(os.environ.get("EVALUATOR_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    with live_server(web_app(loaded)) as base:
        _sign_in(browser, base, loaded.keys["a"])
        browser.get(f"{base}/funds/{fund['fund_code']}")
        _skip_link(browser)
        assert _unlabelled(browser) == []
        text = {k: browser.find_element(By.CSS_SELECTOR, f".fund-{k}").text
                for k in ("company", "first-date", "amount", "benchmark", "standing")}
        assert text["company"] == fund["company"] and text["first-date"] == fund["first_date"]
        assert text["amount"] == f"{fund['set_amount_krw'] / 1e8:,.0f}억원"
        assert text["benchmark"] == fund["benchmark_name"]
        assert text["standing"].startswith(f"상위 {fund['peer_percentile']:.1f}%")
        badge = browser.find_element(By.CSS_SELECTOR, ".fund-grade .grade-badge")
        assert badge.text == fund["grade_label"]
        color = badge.value_of_css_property("background-color")  # painted by the palette's stylesheet
        assert color not in ("rgba(0, 0, 0, 0)", "transparent"), color

        # the period-returns table: the engine's own figures for the same windows
        tr = engine_run.levels
        col = tr.codes.index(fund["fund_code"])
        from evaluator.domains.fund.engine.period_returns import period_returns, trailing_returns

        engine_table = period_returns(engine_run)[fund["fund_code"]]
        own_returns = trailing_returns(tr.levels[:, [col]], tr.dates, engine_run.as_of)
        rows = browser.find_elements(By.CSS_SELECTOR, "table.period-returns tbody tr")
        shown = {r.get_attribute("data-window"): [c.text for c in r.find_elements(By.CSS_SELECTOR, "th, td")]
                 for r in rows}
        assert list(shown) == [w for w in WINDOW_LABELS if w in engine_table] and len(shown) >= 5
        as_of = pd.Timestamp(AS_OF_LATE)
        end = int(tr.dates.searchsorted(as_of, side="right")) - 1
        for w, cells in shown.items():
            figures = engine_table[w]
            assert cells[0] == WINDOW_LABELS[w]
            assert cells[1] == _pct(figures["fund"]) == _pct(float(own_returns[w][0]))
            assert cells[2] == _pct(figures["type_average"])
            assert cells[3] == f"{figures['rank']} / {figures['peers']}"
            if w in YEARS:  # the same growth the engine annualises, over the same trading days
                start = int(tr.dates.searchsorted(as_of - pd.DateOffset(years=YEARS[w]), side="right")) - 1
                annual = engine_run.fund(fund["fund_code"]).metrics[w]["annualized_return"]
                assert (1 + figures["fund"]) ** (252 / (end - start)) - 1 == pytest.approx(annual, rel=1e-9)
        peers = [d for d in late if d["type"] == fund["type"] and d["status"] != "error"
                 and "1y" in (d.get("period_returns") or {})]
        one_year = sorted((d["period_returns"]["1y"]["fund"] for d in peers), reverse=True)
        assert engine_table["1y"]["type_average"] == pytest.approx(float(np.mean(one_year)))
        assert engine_table["1y"]["rank"] == 1 + sum(v > engine_table["1y"]["fund"] for v in one_year)

        # grade history: one point per as-of date, the history's quarter-ends included
        expected = sorted(_history_dates(history_folder, fund["fund_code"]) | {AS_OF_EARLY, AS_OF_LATE})
        dates = [r.find_element(By.CSS_SELECTOR, "td").text
                 for r in browser.find_elements(By.CSS_SELECTOR, "table.grade-history tbody tr")]
        assert dates == expected and len(dates) >= 6
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#chart-history[data-drawn='1'] .main-svg"))
        grade_trace = browser.execute_script(
            "return document.getElementById('chart-history').data.find(t => t.name === '등급')")
        rated = [d for d, r in zip(dates, browser.find_elements(By.CSS_SELECTOR, "table.grade-history tbody tr"),
                                   strict=True) if r.find_elements(By.CSS_SELECTOR, "td")[1].text == "평가"]
        assert grade_trace["x"] == rated and len(set(grade_trace["x"])) == len(grade_trace["x"])
        assert all(1 <= g <= 5 for g in grade_trace["y"])
        api = _api(base, loaded.keys["a"], f"/api/v1/funds/{fund['fund_code']}/history")["items"]
        assert sorted({i["as_of"] for i in api}) == expected  # the API holds the same dates
        path_days = {i["as_of"] for i in api if i.get("from_history")}
        assert path_days == set(expected) - {AS_OF_EARLY, AS_OF_LATE} and len(path_days) == 4
        assert sum(i["as_of"] == AS_OF_EARLY for i in api) == 2  # both stored batches of that date, as before
        assert _charts_have_data_tables(browser) >= 3
        browser.save_screenshot(str(shots / "fund-page.png"))
        browser.execute_script("document.getElementById('chart-history').scrollIntoView()")
        browser.save_screenshot(str(shots / "fund-history.png"))

        # share classes of the same portfolio, each with its grade as the batch rated it
        _sign_in(browser, base, loaded.keys["admin"])
        family = next(d for d in late if len(d.get("share_classes") or []) >= 2)
        by_code = {d["fund_code"]: d for d in late}
        browser.get(f"{base}/funds/{family['fund_code']}")
        items = browser.find_elements(By.CSS_SELECTOR, "ul.share-classes li")
        listed = {re.search(r"\((KR[0-9A-Z]+)\)", i.text).group(1): i.find_element(By.CSS_SELECTOR, ".grade-badge").text
                  for i in items}
        assert set(listed) == set(family["share_classes"])
        for code, label in listed.items():
            sibling = by_code[code]
            assert sibling["portfolio_code"] == family["portfolio_code"]
            assert label == {"ok": sibling["grade_label"], "error": "오류"}.get(sibling["status"], "미평가")

        # a not-rated fund: its reasons, and no chart drawn from nothing
        idle = next(d for d in late if d["status"] == "not_rated" and d["errors"])
        browser.get(f"{base}/funds/{idle['fund_code']}")
        reasons = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "section.not-rated .reasons li")]
        assert reasons == idle["errors"]
        assert browser.find_element(By.CSS_SELECTOR, ".fund-grade .grade-badge").text == "미평가"
        assert not browser.find_elements(By.ID, "chart-history") and not browser.find_elements(By.ID, "chart-criteria")
        assert browser.find_element(By.CSS_SELECTOR, ".history-empty").text
        _charts_have_data_tables(browser)
        browser.save_screenshot(str(shots / "fund-not-rated.png"))

        for path in ("/", "/funds", "/uploads"):  # every other page's controls are labelled too
            browser.get(f"{base}{path}")
            assert _unlabelled(browser) == [], path
            _skip_link(browser)
            _charts_have_data_tables(browser)


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_grade_points_one_per_date_on_every_database(loaded: Loaded, report_folders: dict[str, Path],
                                                     history_folder: Path) -> None:
    """The page's grade history on SQLite and PostgreSQL: one point per as-of date, the newest stored batch of a
    date winning over a grade path; a client sees nothing of a fund outside its scope."""
    from sqlalchemy.orm import Session

    from evaluator.app.storage import fund_page
    from evaluator.app.storage.apikeys import Principal

    _store_history(loaded, history_folder)
    late = reports_in(report_folders[AS_OF_LATE])
    fund = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    expected = sorted(_history_dates(history_folder, fund["fund_code"]) | {AS_OF_EARLY, AS_OF_LATE})
    admin = Principal(key_id="t", client="t", admin=True, companies=(), funds=())
    outsider = Principal(key_id="o", client="o", admin=False, companies=("없는 운용사",), funds=())
    with Session(loaded.engine) as session:
        points = fund_page.grade_points(session, admin, fund["fund_code"])
        assert [p["as_of"] for p in points] == expected
        assert [p["as_of"] for p in points if p["from_history"]] == expected[:4]
        early = next(p for p in points if p["as_of"] == AS_OF_EARLY)
        assert not early["from_history"] and early["run_id"] == max(  # the newer batch of that date
            p["run_id"] for p in fund_page.fund_history(session, admin, fund["fund_code"]) if p["as_of"] == AS_OF_EARLY)
        assert fund_page.grade_points(session, outsider, fund["fund_code"]) == []
