"""Every grade scale on every path: evaluate → history → backtest → companies → agreement → database → API → pages.

One row per scale a firm publishes (1등급 best of five, five stars with ★★★★★ best, seven grades, three grades).
On each path the best fund is shown first, labelled and coloured as the best, and counts add up. A feature that
reads grades gets a check here, so a new scale-dependent path cannot pass for five grades only.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from service_fixtures import Loaded, auth, client_for
from web_fixtures import sign_in, web_client

from evaluator.methodology.rubric_scale import DEFAULT_SCALE, GRADE_COLORS, GradeScale

SCALES = {
    "five-1-best": None,  # the built-in rubric itself: no grade_scale, 1등급 best
    "five-stars": GradeScale(5, "high", "stars"),
    "seven": GradeScale(7, "low", "number"),
    "three": GradeScale(3, "low", "number"),
}
EARLY, LATE = "2025-03-31", "2025-06-30"
FUNDS = "48"
PROVISIONAL = {"min_history_years": 1, "max_history_years": 3, "window": "1y"}
BEST_COLOR, WORST_COLOR = GRADE_COLORS[0], GRADE_COLORS[-1]


def _rubric(scale: GradeScale | None, target: Path) -> Path | None:
    """The built-in rubric on ``scale``: equal shares, bands listed from the best grade down."""
    if scale is None:
        return None
    from evaluator.domains.fund.rubric import default_rubric

    rubric = default_rubric()
    share = 100 / scale.grades
    rubric["grade_bands"] = [{"grade": g, "label": scale.label(g), "share": share} for g in scale.best_first()]
    rubric["grade_scale"] = scale.spec()
    if scale.grades == 7:  # one row also grades young funds provisionally (가N등급)
        rubric["provisional"] = PROVISIONAL
    target.write_text(json.dumps(rubric, ensure_ascii=False), encoding="utf-8")
    return target


def _ok(result: Any) -> str:
    assert result.exit_code == 0, result.output
    return str(result.output)


def _reports(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json")) if p.name != "summary.json"]


@dataclass
class Path_:
    scale: GradeScale
    base: Path
    url: str
    rubric_args: list[str]


@pytest.fixture(scope="module", params=list(SCALES))
def path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path_:
    """Both batches evaluated on the scale (the early one imported with `db import`, the late one stored with
    --db), a quarterly history with its backtest, the 운용사 ratings and an agreement against the engine."""
    scale = SCALES[request.param] or DEFAULT_SCALE
    base = tmp_path_factory.mktemp(request.param)
    rubric = _rubric(SCALES[request.param], base / "rubric.json")
    args = ["--rubric", str(rubric)] if rubric else []
    url = f"sqlite:///{base / 'db.sqlite'}"
    common = ["--sample", "--sample-funds", FUNDS, *args]
    _ok(run_cli("fund", "evaluate", *common, "--as-of", EARLY, "--out", str(base / "early")))
    _ok(run_cli("db", "import", str(base / "early"), "--db", url))
    _ok(run_cli("fund", "evaluate", *common, "--as-of", LATE, "--out", str(base / "late"), "--db", url))
    _ok(run_cli("fund", "history", *common, "--sample-years", "6", "--freq", "Q", "--from", "2022-03",
                "--to", "2025-06", "--out", str(base / "history")))
    _ok(run_cli("fund", "backtest", str(base / "history"), "--horizon", "6", "--replicates", "100",
                "--out", str(base / "backtest")))
    _ok(run_cli("fund", "companies", str(base / "late"), *args, "--out", str(base / "companies"), "--db", url))
    with (base / "experts.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["fund_code", "grade"])
        w.writerows((r["fund_code"], r["grade"]) for r in _reports(base / "late") if r["status"] == "ok")
    _ok(run_cli("fund", "agreement", str(base / "late"), "--experts", str(base / "experts.csv"), *args,
                "--out", str(base / "agreement"), "--resamples", "0"))
    return Path_(scale, base, url, args)


def _best_by_score(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The top-scored rated fund of the largest 유형 (found without the grade; a big enough group that its top
    fund falls in the best band of every scale here)."""
    rated = [r for r in reports if r["status"] == "ok" and not r.get("provisional")]
    types = [r["type"] for r in rated]
    largest = max(set(types), key=types.count)
    assert types.count(largest) >= 10
    return [max((r for r in rated if r["type"] == largest), key=lambda r: r["score"])]


def test_evaluate_grades_on_the_scale_best_first(path: Path_) -> None:
    s = path.scale
    reports = _reports(path.base / "late")
    for top in _best_by_score(reports):
        assert (top["grade"], top["grade_label"]) == (s.best_grade(), s.label(s.best_grade()))
    rated = [r for r in reports if r["status"] == "ok"]
    assert {r["grade"] for r in rated} == set(s.best_first())  # every grade is used
    regular = [r for r in rated if not r.get("provisional")]  # 가등급 rank on their own window
    for t in {r["type"] for r in regular}:  # within a 유형, a higher score never has a worse rank
        ranked = sorted((r for r in regular if r["type"] == t), key=lambda r: -r["score"])
        assert [s.rank(r["grade"]) for r in ranked] == sorted(s.rank(r["grade"]) for r in ranked)
    summary = json.loads((path.base / "late" / "summary.json").read_text(encoding="utf-8"))
    for row in summary["grade_distribution"].values():
        assert [k for k in row if k.isdigit()] == [str(g) for g in s.best_first()]
    young = [r for r in rated if r.get("provisional")]
    assert bool(young) == (s.grades == 7)
    assert all(r["grade_label"] == "가" + s.label(r["grade"]) for r in young)


def test_history_and_backtest_read_the_scale_best_first(path: Path_) -> None:
    import pandas as pd

    s = path.scale
    table = pd.read_parquet(path.base / "history" / "history.parquet")
    graded = table[table["status"] == "ok"]
    assert set(graded["grade"].astype(int)) <= set(s.best_first())
    last = graded[graded["as_of"] == graded["as_of"].max()]
    largest = last[last["type"] == last["type"].value_counts().idxmax()]
    assert int(largest.loc[largest["score"].idxmax(), "grade"]) == s.best_grade()
    doc = json.loads((path.base / "backtest" / "backtest.json").read_text(encoding="utf-8"))
    keys = [str(g) for g in s.best_first()]
    assert list(doc["all"]["grades"]) == keys
    assert list(doc["grade_labels"].values()) == [s.label(g) for g in s.best_first()]
    assert doc["grade_scale"] == s.spec()
    assert sum(b["observations"] for b in doc["all"]["grades"].values()) == doc["all"]["observations"]
    matrix = doc["all"]["migration"]["matrix"]
    assert list(matrix) == keys and all(list(row)[:-1] == keys for row in matrix.values())
    from evaluator.core.schemas import schema_problems
    from evaluator.domains.fund.history.backtest_plot import excess_figure

    schema = json.loads(Path(__file__).parents[2].joinpath("domains/fund/history/backtest.schema.json").read_text())
    assert schema_problems(doc, schema) == []
    from evaluator.core.plotting import style

    with style():
        ticks = [t.get_text() for t in excess_figure(doc).axes[0].get_xticklabels()]
    assert ticks[0] == s.label(s.best_grade()) and len(ticks) == s.grades


def test_companies_and_agreement_follow_the_scale(path: Path_) -> None:
    s = path.scale
    agreement = json.loads((path.base / "agreement" / "agreement.json").read_text(encoding="utf-8"))
    assert agreement["grades"]["count"] == s.grades
    assert set(agreement["grades"]["labels"]) == {s.label(g) for g in s.best_first()}
    assert agreement["overall"]["engine"]["exact"]["rate"] == 1.0
    confusion = agreement["overall"]["engine"]["confusion"]
    assert sum(map(sum, confusion)) == agreement["overall"]["engine"]["pairs"]
    companies = json.loads((path.base / "companies" / "companies.json").read_text(encoding="utf-8"))
    rated = [c for c in companies["companies"] if c["status"] == "ok"]
    assert rated and [c["grade"] for c in rated] == sorted(c["grade"] for c in rated)  # 운용사 bands: 1등급 best
    late = {r["fund_code"]: r for r in _reports(path.base / "late")}
    cells = []  # each company report's fund table: the fund's grade as its report labels it
    for md in (path.base / "companies" / "reports").glob("*.md"):
        for line in md.read_text(encoding="utf-8").splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) > 5 and parts[1] in late:
                cells.append((parts[4], late[parts[1]]))
    assert cells and all(text == (r["grade_label"] if r["status"] == "ok" else "-") for text, r in cells)
    assert s.label(s.best_grade()) in {text for text, _ in cells}


def _loaded(path: Path_) -> Loaded:
    from evaluator.app.storage.apikeys import create_key
    from evaluator.app.storage.database import open_database

    engine = open_database(path.url, migrate=True)
    key_id, key = create_key(engine, client="admin", admin=True, companies=[], funds=[], expires_on=None)
    return Loaded(path.url, engine, {"admin": key}, {"admin": key_id}, "")


def test_database_and_api_list_the_best_first(path: Path_) -> None:
    s = path.scale
    loaded = _loaded(path)
    try:
        api = client_for(loaded)
        h = auth(loaded.keys["admin"])
        page = api.get("/api/v1/funds", params={"page_size": 100}, headers=h).json()
        assert page["grade_scale"] == s.spec() and page["mixed_scales"] is False
        first = page["items"][0]
        assert (first["grade"], first["grade_label"], first["grade_rank"]) == (s.best_grade(), s.label(s.best_grade()), 1)
        ranks = [i["grade_rank"] for i in page["items"]]
        assert ranks == sorted(ranks) and all(i["grade_rank"] == s.rank(i["grade"]) for i in page["items"])
        late = [r for r in _reports(path.base / "late") if r["status"] == "ok" and not r.get("provisional")]
        assert page["total"] == len(late)
        for g in s.best_first():  # every grade of the scale is a filter, and only that grade comes back
            one = api.get("/api/v1/funds", params={"grade": g, "page_size": 100}, headers=h)
            assert one.status_code == 200 and one.json()["total"] == sum(r["grade"] == g for r in late)
            assert {i["grade"] for i in one.json()["items"]} == {g}
        bad = api.get("/api/v1/funds", params={"grade": s.grades + 1}, headers=h)
        assert bad.status_code == 422
        msg = bad.json()["detail"][0]["msg"]
        assert "grade must be one of " + ", ".join(str(g) for g in s.best_first()) in msg
        summary = api.get("/api/v1/summary", headers=h).json()
        for row in summary["grade_distribution"].values():
            assert [k for k in row if k.isdigit()] == [str(g) for g in s.best_first()]
            assert sum(n for k, n in row.items() if k != "total") == row["total"]
        assert summary["funds"] == len(_reports(path.base / "late"))
        runs = api.get("/api/v1/runs", headers=h).json()["items"]
        assert len(runs) == 2 and all(r["grade_scale"] == s.spec() for r in runs)  # both batches carry the scale
        history = api.get(f"/api/v1/funds/{first['fund_code']}/history", headers=h).json()["items"]
        assert {i["grade_scale"]["grades"] for i in history} == {s.grades}
        assert history[-1]["grade_label"] == s.label(history[-1]["grade"])
    finally:
        loaded.engine.dispose()


class _Tables(HTMLParser):
    """Cells of every <table>, with each cell's attributes (stdlib parser: the pages are our own)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self._cell: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"class": dict(attrs).get("class", ""), "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = {"attrs": dict(attrs), "text": ""}
            self.tables[-1]["rows"][-1].append(self._cell)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data.strip()


def _tables(html: str) -> list[dict[str, Any]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def _chart(html: str, chart_id: str) -> dict[str, Any]:
    match = re.search(rf'<script type="application/json" id="{chart_id}-spec">(.*?)</script>', html, re.S)
    assert match, chart_id
    return json.loads(match.group(1))


def test_pages_show_every_grade_best_first_and_coloured_by_rank(path: Path_) -> None:
    s = path.scale
    labels = [s.label(g) for g in s.best_first()]
    loaded = _loaded(path)
    try:
        client = web_client(loaded)
        assert sign_in(client, loaded.keys["admin"]).status_code == 303
        html = client.get("/").text
        dist = next(t for t in _tables(html) if "distribution" in t["class"])
        head = dist["rows"][0]
        assert [c["text"] for c in head[1 : 1 + s.grades]] == labels
        assert head[1]["attrs"]["data-color"] == BEST_COLOR and head[s.grades]["attrs"]["data-color"] == WORST_COLOR
        assert ("가등급" in [c["text"] for c in head]) == (s.grades == 7)
        for row in dist["rows"][1:]:  # every row adds up to its 합계
            numbers = [int(c["text"]) for c in row[1:]]
            assert sum(numbers[:-1]) == numbers[-1]
        chart = _chart(html, "chart-distribution")
        assert [t["name"] for t in chart["data"][: s.grades]] == labels
        assert chart["data"][0]["marker"]["color"] == BEST_COLOR
        matrix = next(t for t in _tables(html) if "matrix" in t["class"])
        assert [c["text"] for c in matrix["rows"][0][1:]] == labels  # both batches on one scale: a matrix
        funds = client.get("/funds")
        rows = next(t for t in _tables(funds.text) if "funds" in t["class"])["rows"][1:]
        grade_cell = rows[0][4]
        assert grade_cell["text"] == labels[0] and "rank-best" in grade_cell["attrs"]["class"]
        assert grade_cell["attrs"]["data-color"] == BEST_COLOR
        worst = client.get("/funds", params={"grade": s.worst_grade()})
        assert worst.status_code == 200
        assert {r[4]["text"] for r in next(t for t in _tables(worst.text) if "funds" in t["class"])["rows"][1:]} == {labels[-1]}
        assert client.get("/funds", params={"grade": s.grades + 1}).status_code == 422
        code = re.search(r'<a href="/funds/([^"]+)">', funds.text).group(1)  # the best fund, first in the list
        page = client.get(f"/funds/{code}").text
        badge = rf'<dd class="fund-grade rank-best" data-color="{BEST_COLOR}"><span class="grade-badge gs{s.grades}-r1">'
        assert re.search(badge + labels[0], page)  # the grade written in its badge, coloured as the best
        css = client.get(re.search(r'href="(/assets/web/grades\.css[^"]*)"', page).group(1).replace("&amp;", "&")).text
        assert re.search(rf"\.gs{s.grades}-r1 {{ background: {BEST_COLOR};", css)
        assert re.search(rf"\.gs{s.grades}-r{s.grades} {{ background: {WORST_COLOR};", css)
        axis = _chart(page, "chart-history")["layout"]["yaxis2"]
        top = axis["range"][1]  # plotly draws range[1] at the top
        assert abs(top - s.best_grade()) == 0.5 and axis["ticktext"][0] == labels[0]
    finally:
        loaded.engine.dispose()


def test_batches_on_different_scales_are_not_mixed(tmp_path: Path) -> None:
    """A five-grade batch then a star batch: the overview says so instead of a 5등급 → ★★★★★ "move"."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    stars = _rubric(SCALES["five-stars"], tmp_path / "stars.json")
    common = ["--sample", "--sample-funds", "24"]
    _ok(run_cli("fund", "evaluate", *common, "--as-of", EARLY, "--out", str(tmp_path / "a"), "--db", url))
    _ok(run_cli("fund", "evaluate", *common, "--rubric", str(stars), "--as-of", LATE, "--out", str(tmp_path / "b"),
                "--db", url))
    loaded = _loaded(Path_(DEFAULT_SCALE, tmp_path, url, []))
    try:
        client = web_client(loaded)
        sign_in(client, loaded.keys["admin"])
        html = client.get("/").text
        assert "등급 체계가 달라" in html and not any("matrix" in t["class"] for t in _tables(html))
        api = client_for(loaded)
        h = auth(loaded.keys["admin"])
        late = api.get("/api/v1/funds", headers=h).json()
        assert late["grade_scale"]["style"] == "stars" and late["items"][0]["grade_label"] == "★★★★★"
        early = api.get("/api/v1/funds", params={"as_of": EARLY}, headers=h).json()
        assert early["grade_scale"] == DEFAULT_SCALE.spec()
        assert all(i["grade_label"] == f"{i['grade']}등급" for i in early["items"])
        code = late["items"][0]["fund_code"]
        history = api.get(f"/api/v1/funds/{code}/history", headers=h).json()["items"]
        assert [i["grade_scale"]["style"] for i in history] == ["number", "stars"]
        page = client.get(f"/funds/{code}").text
        assert "등급 체계가 서로 다른 평가가 섞여 있습니다" in page
        graded = _chart(page, "chart-history")["data"][1]
        assert graded["x"] == [LATE]  # only the star batch on the star axis
    finally:
        loaded.engine.dispose()


def test_a_company_name_with_a_slash_is_found(tmp_path: Path) -> None:
    """The company list shows a name such as ``A/B자산운용``; its own URL answers with it (quoted or not)."""
    from urllib.parse import quote

    from evaluator.app.storage.companies import store_companies

    _ok(run_cli("fund", "evaluate", "--sample", "--sample-funds", "48", "--out", str(tmp_path / "e")))
    _ok(run_cli("fund", "companies", str(tmp_path / "e"), "--out", str(tmp_path / "c")))
    doc = json.loads((tmp_path / "c" / "companies.json").read_text(encoding="utf-8"))
    name = "한빛/다온 자산운용"
    doc["companies"][0]["company"] = name
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    loaded = _loaded(Path_(DEFAULT_SCALE, tmp_path, url, []))
    try:
        store_companies(loaded.engine, tmp_path / "e", doc)
        api = client_for(loaded)
        h = auth(loaded.keys["admin"])
        listed = [c["company"] for c in api.get("/api/v1/companies", headers=h).json()["items"]]
        assert name in listed
        for path in (quote(name, safe="/"), quote(name, safe="")):
            one = api.get(f"/api/v1/companies/{path}", headers=h)
            assert one.status_code == 200 and one.json()["company"] == name
        assert api.get("/api/v1/companies/" + quote("한빛/없음"), headers=h).status_code == 404
    finally:
        loaded.engine.dispose()


def test_company_pages_and_exports_follow_the_scale(path: Path_) -> None:
    """운용사 pages: the company grade on the rule's bands (1 best, the band's label) on every fund scale, its funds
    on the funds' scale as its Korean report writes them; the list's .xlsx and the fund PDF write grades as the
    firm does."""
    import io

    import pdfplumber
    from openpyxl import load_workbook

    s = path.scale
    labels = [s.label(g) for g in s.best_first()]
    companies = json.loads((path.base / "companies" / "companies.json").read_text(encoding="utf-8"))
    rated = {c["company"]: c for c in companies["companies"] if c["status"] == "ok"}
    assert rated
    late = {r["fund_code"]: r for r in _reports(path.base / "late")}
    loaded = _loaded(path)
    try:
        client = web_client(loaded)
        sign_in(client, loaded.keys["admin"])
        table = next(t for t in _tables(client.get("/companies").text) if "companies" in t["class"])
        shown = [(r[0]["text"], r[1]["text"], int(r[1]["attrs"]["data-rank"])) for r in table["rows"][1:]
                 if r[0]["text"] in rated]
        assert [n for n, _, _ in shown] == [c["company"] for c in companies["companies"] if c["status"] == "ok"]
        assert [rank for _, _, rank in shown] == sorted(rank for _, _, rank in shown)  # 1 (the best band) first
        assert all((label, rank) == (rated[n]["grade_label"], rated[n]["grade"]) for n, label, rank in shown)
        name = shown[0][0]
        page = client.get(f"/companies/{name}").text
        assert re.search(r'class="company-grade[^"]*">' + re.escape(rated[name]["grade_label"]), page)
        funds = next(t for t in _tables(page) if "company-funds" in t["class"])["rows"][1:]
        assert funds and all(r[3]["text"] == (late[r[1]["text"]]["grade_label"] if late[r[1]["text"]]["status"] == "ok"
                                              else "미평가" if late[r[1]["text"]]["status"] != "error" else "오류")
                             for r in funds)
        book = load_workbook(io.BytesIO(client.get("/export/funds.xlsx", params={"status": "ok"}).content))
        grades = [r[5] for r in book["펀드"].iter_rows(min_row=2, values_only=True)]
        assert grades[0] == labels[0] and set(grades) <= set(labels)
        code = re.search(r'<a href="/funds/([^"]+)">', client.get("/funds").text).group(1)  # the best fund
        pdf = client.get(f"/export/funds/{code}.pdf")
        with pdfplumber.open(io.BytesIO(pdf.content)) as doc:
            text = doc.pages[0].extract_text()
        assert f"{code} · {labels[0]}" in text
    finally:
        loaded.engine.dispose()
