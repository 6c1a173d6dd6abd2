"""What a first visit to the pages transfers, as headless Chromium measures it (resource timing).

Run: ``.venv/bin/python benchmarks/web_weight.py [--workdir DIR]``. Setup: the sample universe (40 funds) graded
by `fund evaluate --sample`, its funds and 운용사 renamed as real Korean ones are named (the sample's own names come
from the product's files, whose words the first font slices hold), stored in a SQLite database, a client key of one 운용사 and an admin key; the
web app served by uvicorn on 127.0.0.1. Each page is opened with an empty browser cache (cookies kept) at
1366 px, and once its charts are drawn and its fonts loaded, the page's navigation and resource entries are
summed (``transferSize``: headers and compressed bodies). Reported per page: all bytes, the Hangul font slices
(count and bytes) and Plotly. The last line is the figure; goals: login ≤ 0.5 MB, a fund page ≤ 2.5 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# Names as Korean firms and funds are really called, written here (not in the product's files, whose words the
# font's first slices hold): fund pages then pull the slices real names need.
COMPANIES = ("미래에셋자산운용", "삼성자산운용", "한국투자신탁운용", "키움투자자산운용", "신한자산운용", "한화자산운용",
             "교보악사자산운용", "트러스톤자산운용", "브이아이자산운용", "에셋플러스자산운용", "흥국자산운용", "다올자산운용")
FUNDS = ("TIGER 미국나스닥100 증권상장지수투자신탁(주식)", "KODEX 200 증권상장지수투자신탁(주식)",
         "네비게이터 증권자투자신탁 1(주식)", "밸류10년투자 증권투자신탁 1(채권혼합)", "코리아스타 증권투자신탁[주식]",
         "프리미어 글로벌 배당 증권자투자신탁(주식-재간접형)", "베트남 그로스 증권자투자신탁(주식)",
         "리치 그로스 증권투자신탁(주식)", "퇴직연금 뱅크론 증권자투자신탁[채권혼합]", "골드 특별자산투자신탁(금-파생형)",
         "중소형주 행복 증권자투자신탁(주식)", "꿈나무 적립식 증권투자신탁(주식)", "단기채 알파 증권투자신탁(채권)",
         "똑똑한 4차산업혁명 증권자투자신탁(주식)", "뚝심 가치주 증권투자신탁(주식)", "쌍끌이 배당 증권투자신탁(주식)")


def real_names(folder: Path) -> None:
    """Rename every fund and company in the reports (JSON text, so summaries and tables follow)."""
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    companies = sorted({f["company"] for f in summary["funds"] if f.get("company")}, key=len, reverse=True)
    names = sorted({f["fund_name"] for f in summary["funds"] if f.get("fund_name")}, key=len, reverse=True)
    swap = {old: f"{FUNDS[i % len(FUNDS)]} {chr(65 + i // len(FUNDS))}" for i, old in enumerate(names)}
    swap |= {old: COMPANIES[i % len(COMPANIES)] for i, old in enumerate(companies)}
    for path in folder.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        for old in sorted(swap, key=len, reverse=True):
            text = text.replace(json.dumps(old, ensure_ascii=False)[1:-1], swap[old])
        path.write_text(text, encoding="utf-8")


WEIGHT_JS = """
return document.fonts.ready.then(() => [...performance.getEntriesByType('navigation'),
  ...performance.getEntriesByType('resource')].map(e => [e.name, Math.max(e.transferSize, e.encodedBodySize)]));
"""


def _browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,900", "--disable-gpu"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _visit(driver: Any, url: str, charts: bool) -> list[list[Any]]:
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)
    deadline = time.monotonic() + 60
    while charts and time.monotonic() < deadline and not driver.execute_script(
            "return document.querySelectorAll('[data-drawn=\"1\"]').length > 0"):
        time.sleep(0.1)
    return driver.execute_script(WEIGHT_JS)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="web-weight-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("EVALUATOR_CACHE", str(work / "cache"))
    reports = work / "reports"
    if not (reports / "summary.json").exists():
        subprocess.run([sys.executable, "-m", "evaluator.app.cli", "fund", "evaluate", "--sample", "--sample-funds",
                        "40", "--as-of", "2025-06-30", "--out", str(reports)], check=True, capture_output=True)
        real_names(reports)
    import uvicorn

    from evaluator.app.api.settings import Settings
    from evaluator.app.storage.apikeys import create_key
    from evaluator.app.storage.batches import store_folder
    from evaluator.app.storage.database import open_database
    from evaluator.app.web.app import create_web_app

    db = work / "web.db"
    db.unlink(missing_ok=True)
    engine = open_database(f"sqlite:///{db}", migrate=True)
    store_folder(engine, reports)
    summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    fund = next(f for f in summary["funds"] if f.get("grade") is not None)
    doc = json.loads((reports / fund["file"]).read_text(encoding="utf-8"))
    _, key = create_key(engine, client="bench", companies=[doc["company"]], funds=[], admin=False, expires_on=None)
    app = create_web_app(engine=engine, settings=Settings(rate_per_minute=0))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from service_load import free_port

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    driver = _browser()
    figures = {}
    try:
        for name, path, charts in (("login", "/login", False), ("sign-in", None, True), ("funds", "/funds", False),
                                   ("fund", f"/funds/{doc['fund_code']}", True), ("overview", "/", True)):
            if path is None:  # sign in (not measured), so the next pages open as the client
                driver.find_element("name", "key").send_keys(key)
                driver.find_element("name", "key").submit()
                time.sleep(2)
                continue
            entries = _visit(driver, base + path, charts)
            fonts = [size for url, size in entries if ".woff2" in url]
            plotly = sum(size for url, size in entries if "plotly.min.js" in url)
            total = sum(size for _, size in entries)
            figures[name] = total
            print(f"{name}: {total:,} B in {len(entries)} responses; font slices {len(fonts)} = {sum(fonts):,} B; "
                  f"plotly {plotly:,} B")
    finally:
        driver.quit()
        server.should_exit = True
    print("web_weight first_visit_bytes " + " ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
