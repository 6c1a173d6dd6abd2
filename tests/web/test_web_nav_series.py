"""The fund page's NAV chart: each rated fund's total-return index beside its benchmark, written with the
reports (nav_series.jsonl), stored with the batch, and shown only within the caller's scope.

Values are checked against the NAV file itself (raw-basis funds) and against the engine's own annualised
return (every rated fund: the index's end value is the window's total return), not against this code.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from service_fixtures import (  # noqa: F401
    AS_OF_LATE,
    CLIENT_A_COMPANY,
    CLIENT_B_COMPANY,
    Loaded,
    auth,
    db_url,
    loaded,
    pg_server,
    report_folders,
    reports_in,
)
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from web_fixtures import sign_in, web_client

from evaluator.app.storage.batches import BatchError, store_folder
from evaluator.app.storage.database import open_database
from evaluator.app.storage.tables import FundSeries, Run
from evaluator.domains.fund.engine.nav_series import MAX_POINTS, rated_series, sample_rows
from evaluator.methodology.rubric import PERIODS


@pytest.fixture(scope="module")
def graded():  # type: ignore[no-untyped-def]
    from evaluator.domains.fund.data.sample import sample_universe
    from evaluator.domains.fund.engine.evaluate import evaluate_loaded
    from evaluator.domains.fund.rubric import default_rubric

    universe = sample_universe(funds=40, realistic=True)
    return universe, evaluate_loaded(universe, default_rubric(), as_of=pd.Timestamp(AS_OF_LATE))


def _dates(doc: dict) -> list[pd.Timestamp]:
    start = pd.Timestamp(doc["start"])
    return [start + pd.Timedelta(days=d) for d in doc["days"]]


def test_series_match_the_nav_file_and_the_graded_return(graded) -> None:  # type: ignore[no-untyped-def]
    universe, evaluation = graded
    series = dict(rated_series(evaluation))
    rated = [f for f in evaluation.funds if f.status == "ok"]
    assert set(series) == {f.fund_code for f in rated} and len(rated) >= 10
    calendar = evaluation.levels.dates
    checked_raw = 0
    for fund in rated:
        doc = series[fund.fund_code]
        dates = _dates(doc)
        window = max(PERIODS[p] for p, w in fund.period_weights.items() if w > 0)
        assert doc["window"] == f"{window}y" and doc["scale"] == 100
        assert dates[-1] == pd.Timestamp(AS_OF_LATE) and len(dates) <= MAX_POINTS
        assert dates[0] <= pd.Timestamp(AS_OF_LATE) - pd.DateOffset(years=window) < dates[1]
        assert max(np.diff(doc["days"])) <= 7 or len(dates) == MAX_POINTS  # weekly unless thinned
        assert doc["fund"][0] == doc["benchmark"][0] == 10000
        # the end value is the window's total return: the engine's annualised return, undone
        n = int(calendar.searchsorted(dates[-1])) - int(calendar.searchsorted(dates[0]))
        annual = fund.metrics[f"{window}y"]["annualized_return"]
        assert doc["fund"][-1] / 10000 == pytest.approx((1 + annual) ** (n / 252), abs=1e-4)
        bench = universe.benchmark[fund.type].reindex(calendar).ffill()
        assert doc["benchmark"][-1] == round(bench[dates[-1]] / bench[dates[0]] * 10000)
        assert doc["benchmark_name"] == fund.type
        if fund.return_basis == "raw":  # no distributions: the index is the 기준가격 itself
            nav = universe.navs[fund.fund_code].reindex(calendar).ffill()
            expected = [round(nav[d] / nav[dates[0]] * 10000) for d in dates]
            assert doc["fund"] == expected
            checked_raw += 1
    assert checked_raw >= 5


def test_a_settling_fund_is_drawn_on_total_return_not_raw_nav(graded) -> None:  # type: ignore[no-untyped-def]
    universe, evaluation = graded
    series = dict(rated_series(evaluation))
    calendar = evaluation.levels.dates
    kinds = set()
    for fund in (f for f in evaluation.funds if f.status == "ok" and f.return_basis != "raw"):
        doc = series[fund.fund_code]
        dates = _dates(doc)
        kinds.add(fund.return_basis)
        if fund.return_basis == "adjusted":  # 수정기준가격 as given
            adjusted = universe.adjustments.adjusted[fund.fund_code].reindex(calendar).ffill()
            assert doc["fund"] == [round(adjusted[d] / adjusted[dates[0]] * 10000) for d in dates]
        else:  # a 결산 inside the window: 기준가격 drops back, the index does not
            paid = universe.adjustments.distribution[fund.fund_code]
            assert (paid[(paid.index > dates[0]) & (paid.index <= dates[-1])] > 0).any()
            raw = universe.navs[fund.fund_code].reindex(calendar).ffill()
            assert doc["fund"][-1] > raw[dates[-1]] / raw[dates[0]] * 10000 + 500
    assert kinds == {"adjusted", "distribution"}


def test_sample_rows_keep_the_ends_and_the_limit() -> None:
    dates = pd.bdate_range("2015-01-01", "2025-06-30")
    for start, end, limit in (
        (0, len(dates) - 1, 260),
        (100, 110, 260),
        (5, len(dates) - 3, 50),
        (7, 7, 260),
    ):
        rows = sample_rows(dates, start, end, limit)
        assert rows[0] == start and rows[-1] == end and len(rows) <= limit
        assert np.all(np.diff(rows) > 0)
    weekly = sample_rows(dates, len(dates) - 300, len(dates) - 1, 260)
    assert {d.dayofweek for d in dates[weekly[1:-1]]} == {4}  # each week's last business day: Friday


def test_the_folder_carries_series_and_a_broken_line_stores_nothing(report_folders, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = report_folders[AS_OF_LATE]
    lines = (source / "nav_series.jsonl").read_text(encoding="utf-8").splitlines()
    rated = {d["fund_code"] for d in reports_in(source) if d["status"] == "ok"}
    assert {json.loads(line)["fund_code"] for line in lines} == rated
    error_fund = next(d["fund_code"] for d in reports_in(source) if d["status"] != "ok")
    good = json.loads(lines[0])
    hostile = [
        "not json",
        json.dumps({**good, "fund_code": error_fund}),  # a fund without a grade
        json.dumps({**good, "fund": good["fund"][:-1]}),  # lengths differ
        json.dumps({**good, "days": list(reversed(good["days"]))}),
        json.dumps({**good, "start": "2025-02-30"}),
        json.dumps({**good, "benchmark": ["x"] * len(good["days"])}),
        lines[0].replace(str(good["fund"][1]), "NaN", 1),
        lines[0],  # a repeated fund
    ]
    engine = open_database(f"sqlite:///{tmp_path / 'x.db'}", migrate=True)
    for bad in hostile:
        folder = tmp_path / "bad"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(source, folder)
        (folder / "nav_series.jsonl").write_text("\n".join([*lines, bad]) + "\n", encoding="utf-8")
        with pytest.raises(BatchError, match=r"nav_series\.jsonl line"):
            store_folder(engine, folder)
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 0
    assert store_folder(engine, source).created
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(FundSeries)) == len(rated)
    engine.dispose()


def _nav_spec(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="chart-nav-spec">(.*?)</script>', page, re.S)
    assert match, "the fund page has a NAV chart"
    return json.loads(html.unescape(match.group(1)))


def test_each_client_sees_only_its_own_series(loaded: Loaded, report_folders) -> None:  # type: ignore[no-untyped-def]
    """On SQLite and on a real PostgreSQL server: pages and the JSON endpoint alike."""
    late = reports_in(report_folders[AS_OF_LATE])
    lines = {
        json.loads(x)["fund_code"]: json.loads(x)
        for x in (report_folders[AS_OF_LATE] / "nav_series.jsonl").read_text(encoding="utf-8").splitlines()
    }
    own = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    other = next(d for d in late if d["company"] == CLIENT_B_COMPANY and d["status"] == "ok")
    client = web_client(loaded)
    sign_in(client, loaded.keys["a"])
    spec = _nav_spec(client.get(f"/funds/{own['fund_code']}").text)
    names = [t["name"] for t in spec["data"]]
    assert names == ["펀드 (수정기준가, 총수익 기준)", "벤치마크"]
    expected = lines[own["fund_code"]]
    assert spec["data"][0]["y"] == [v / 100 for v in expected["fund"]] and spec["data"][0]["y"][0] == 100
    assert spec["data"][1]["y"] == [v / 100 for v in expected["benchmark"]]
    assert spec["data"][0]["x"][-1] == AS_OF_LATE
    api = client.get(f"/api/v1/funds/{own['fund_code']}/nav", headers=auth(loaded.keys["a"]))
    assert api.status_code == 200 and api.json()["series"]["fund"] == spec["data"][0]["y"]
    for path in (f"/funds/{other['fund_code']}", f"/api/v1/funds/{other['fund_code']}/nav"):
        denied, unknown = (
            client.get(path, headers=auth(loaded.keys["a"])),
            client.get(path.replace(other["fund_code"], "KR0000000000"), headers=auth(loaded.keys["a"])),
        )
        assert denied.status_code == unknown.status_code == 404 and denied.text == unknown.text
        assert (
            other["fund_name"] not in denied.text
            and str(lines[other["fund_code"]]["fund"][5]) not in denied.text
        )
    admin = client.get(f"/api/v1/funds/{other['fund_code']}/nav", headers=auth(loaded.keys["admin"]))
    assert admin.status_code == 200 and admin.json()["series"]["benchmark_name"] == other["type"]


def test_a_batch_stored_without_series_says_so(loaded: Loaded, report_folders, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old = tmp_path / "old"
    shutil.copytree(report_folders[AS_OF_LATE], old)
    (old / "nav_series.jsonl").unlink()
    summary = json.loads((old / "summary.json").read_text(encoding="utf-8"))
    summary["as_of"] = "2025-09-30"  # a newer batch, as an older version of the product wrote it
    (old / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    for p in old.glob("*.json"):
        if p.name != "summary.json":
            doc = json.loads(p.read_text(encoding="utf-8"))
            p.write_text(json.dumps({**doc, "as_of": "2025-09-30"}, ensure_ascii=False), encoding="utf-8")
    assert store_folder(loaded.engine, old).created
    own = next(d for d in reports_in(old) if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    client = web_client(loaded)
    sign_in(client, loaded.keys["a"])
    page = client.get(f"/funds/{own['fund_code']}").text
    assert "chart-nav-spec" not in page and "기준가 추이를 저장하기 전에" in page
    api = client.get(f"/api/v1/funds/{own['fund_code']}/nav", headers=auth(loaded.keys["a"]))
    assert api.status_code == 200 and api.json() == {
        "fund_code": own["fund_code"],
        "as_of": "2025-09-30",
        "series": None,
    }


def test_the_migration_goes_down_and_up(db_url: str) -> None:
    from alembic import command
    from sqlalchemy import inspect

    from evaluator.app.storage.database import _alembic_config, current_revision, head_revision

    engine = open_database(db_url, migrate=True)
    assert inspect(engine).has_table("fund_series")
    command.downgrade(_alembic_config(engine), "0003_company_ratings")
    assert not inspect(engine).has_table("fund_series")
    command.upgrade(_alembic_config(engine), "head")
    assert inspect(engine).has_table("fund_series") and current_revision(engine) == head_revision(engine)
    engine.dispose()
