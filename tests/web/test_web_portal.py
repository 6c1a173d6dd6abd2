"""The client portal on SQLite and a real PostgreSQL server: 운용사 pages, lists that hold every fund in scope
(rated or not), a client's "내 펀드 변동", and the .xlsx and PDF exports, each showing a key exactly what its API
scope allows. Expected values come from companies.json, the Korean reports and the report files on disk.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from portal_fixtures import SLASH_COMPANY, Rated, rated, scope_of  # noqa: F401
from service_fixtures import (  # noqa: F401
    AS_OF_EARLY,
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
from web_fixtures import sign_in, web_client


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _grade(c: dict[str, Any]) -> str:
    return c["grade_label"] if c["grade"] is not None else "미평가"


def test_company_pages_show_each_key_its_api_scope(loaded: Loaded, rated: Rated) -> None:
    everyone = {c["company"]: c for c in rated.late["companies"]}
    early = {c["company"]: c for c in rated.early["companies"]}
    for who in ("a", "b", "funds", "slash", "admin"):
        client = web_client(loaded)
        sign_in(client, rated.keys[who])
        scope = scope_of(who)
        sees = set(everyone) if scope is None else scope
        api = client.get("/api/v1/companies", headers=auth(rated.keys[who])).json()["items"]
        assert {i["company"] for i in api} == sees
        listing = client.get("/companies")
        assert listing.status_code == 200 and 'href="/companies"' in listing.text
        names = [html.unescape(n) for n in re.findall(r'class="company-link" href="[^"]+">([^<]+)<', listing.text)]
        assert names == [i["company"] for i in api]  # the API's rows, in its order (best first on the scale)
        unknown = client.get("/companies/없는 운용사")
        for name, c in everyone.items():
            page = client.get("/companies/" + quote(name, safe="/"))  # a "/" in a name stays a "/"
            if name not in sees:
                assert page.status_code == 404 and page.text == unknown.text, (who, name)
                assert name not in listing.text
                continue
            assert page.status_code == 200, (who, name)
            text = _text(page.text)
            assert _grade(c) in text and (c["score"] is None or f"{c['score']:.1f}" in text)
            for f in c["funds"]:
                assert f'href="/funds/{quote(f["fund_code"], safe="")}"' in page.text
            if name in rated.reports:  # strengths and weaknesses as the Korean report words them
                said = [ln for ln in rated.reports[name].splitlines() if ln.startswith(("강점", "약점"))]
                assert said and all(s in text for s in said), (name, said)
            history = re.findall(r"<tr><td>(\d{4}-\d{2}-\d{2})</td><td[^>]*>([^<]+)</td>", page.text)
            want = [(AS_OF_LATE, _grade(c))] + ([(AS_OF_EARLY, _grade(early[name]))] if name in early else [])
            assert history == want, (name, history)
    a = web_client(loaded)
    sign_in(a, rated.keys["a"])
    raw = a.get("/companies/" + quote(CLIENT_A_COMPANY)).text
    page = _text(raw)
    assert "운용철학" in page and "강점은 운용철학(5점), 약점은 리스크관리체계(2점)입니다." in page
    link = html.unescape(re.search(r'class="export xlsx" href="([^"]+)"', raw).group(1))
    _, rows, _ = _xlsx_rows(a.get(link).content)  # the company's funds, as the list filtered to it holds them
    assert sorted(r[0] for r in rows) == sorted(f["fund_code"] for f in everyone[CLIENT_A_COMPANY]["funds"])


def test_fund_page_links_its_company_only_when_the_viewer_may_open_it(loaded: Loaded, rated: Rated,
                                                                      report_folders: dict[str, Path]) -> None:
    late = reports_in(report_folders[AS_OF_LATE])
    own = next(d for d in late if d["company"] == CLIENT_A_COMPANY)
    a = web_client(loaded)
    sign_in(a, rated.keys["a"])
    link = f'class="company-link" href="/companies/{quote(CLIENT_A_COMPANY, safe="")}"'
    assert link in a.get(f"/funds/{own['fund_code']}").text
    extra = next(d for d in late if d["fund_code"] == loaded.b_extra_fund)
    funds_only = web_client(loaded)
    sign_in(funds_only, rated.keys["funds"])
    page = funds_only.get(f"/funds/{extra['fund_code']}")
    assert page.status_code == 200 and "company-link" not in page.text  # no 운용사 rating in its scope
    assert funds_only.get("/companies/" + quote(extra["company"])).status_code == 404


def test_lists_hold_every_fund_in_scope_rated_or_not(loaded: Loaded, rated: Rated,
                                                     report_folders: dict[str, Path]) -> None:
    late = reports_in(report_folders[AS_OF_LATE])
    mine = [d for d in late if d["company"] == CLIENT_B_COMPANY or d["fund_code"] == loaded.b_extra_fund]
    unrated = [d for d in mine if d["status"] != "ok"]
    assert unrated, "the sample gives client B an unrated fund"
    b = web_client(loaded)
    sign_in(b, rated.keys["b"])
    for d in unrated:  # its own unrated fund is found by name
        body = b.get("/funds", params={"q": d["fund_name"]}).text
        assert f"/funds/{d['fund_code']}" in body and "조건에 맞는 펀드가 없습니다" not in body
    for status in ("not_rated", "error", "ok"):
        want = {d["fund_code"] for d in mine if d["status"] == status and not d.get("provisional")}
        body = b.get("/funds", params={"status": status}).text
        shown = set(re.findall(r'<a href="/funds/([^"]+)">', body))
        assert shown == want, status
    other = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] != "ok")
    assert other["fund_code"] not in b.get("/funds", params={"q": other["fund_name"]}).text
    api = b.get("/api/v1/funds", params={"status": "all", "page_size": 100}, headers=auth(rated.keys["b"])).json()
    assert {i["fund_code"] for i in api["items"]} == {d["fund_code"] for d in mine}
    assert b.get("/funds", params={"status": "broken"}).status_code == 422
    bad = b.get("/api/v1/funds", params={"status": "broken"}, headers=auth(rated.keys["b"]))
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_request"
    rated_only = b.get("/api/v1/funds", params={"page_size": 100}, headers=auth(rated.keys["b"])).json()
    assert {i["fund_code"] for i in rated_only["items"]} == {d["fund_code"] for d in mine if d["status"] == "ok"
                                                             and not d.get("provisional")}  # the API's default


def test_a_client_overview_names_its_funds_whose_grade_changed(loaded: Loaded, rated: Rated,
                                                               report_folders: dict[str, Path]) -> None:
    from evaluator.app.storage.apikeys import create_key

    early = {d["fund_code"]: d for d in reports_in(report_folders[AS_OF_EARLY])}
    late = reports_in(report_folders[AS_OF_LATE])
    moves = [(d, early[d["fund_code"]]) for d in late if d["fund_code"] in early and d["status"] == "ok"
             and early[d["fund_code"]]["status"] == "ok" and early[d["fund_code"]]["grade"] != d["grade"]]
    assert moves, "the sample moves some funds between the batches"
    by_company: dict[str, int] = {}
    for d, _ in moves:
        by_company[d["company"]] = by_company.get(d["company"], 0) + 1
    company = max(by_company, key=lambda c: (by_company[c], c))  # the client with the most moves
    _, key = create_key(loaded.engine, client="mover", companies=[company], funds=[], admin=False, expires_on=None)
    client = web_client(loaded)
    sign_in(client, key)
    page = client.get("/").text
    block = page.split("내 펀드 변동", 1)[1].split("</ul>", 1)[0]
    names = sorted(html.unescape(n) for n in re.findall(r'<li><a href="/funds/[^"]+">([^<]+)</a>', block))
    assert names == sorted(d["fund_name"] for d, _ in moves if d["company"] == company)
    for d, was in moves:
        if d["company"] == company:
            word = "상향" if d["grade"] < was["grade"] else "하향"
            assert re.search(rf"{re.escape(html.escape(d['fund_name']))}</a> \({d['fund_code']}\):\s+"
                             rf"{was['grade']}등급 → {d['grade']}등급 <span[^>]*>{word}</span>", block), d
    a = web_client(loaded)  # a client whose funds kept their grades: the section says so
    sign_in(a, rated.keys["a"])
    assert all(d["company"] != CLIENT_A_COMPANY for d, _ in moves)
    assert "등급이 바뀐 펀드가 없습니다" in a.get("/").text.split("내 펀드 변동", 1)[1]
    admin = web_client(loaded)
    sign_in(admin, rated.keys["admin"])
    assert "내 펀드 변동" not in admin.get("/").text


def _xlsx_rows(body: bytes) -> tuple[list[str], list[list[Any]], dict[str, Any]]:
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(body), read_only=True)
    rows = [list(r) for r in wb["펀드"].iter_rows(values_only=True)]
    about = {r[0]: r[1] for r in wb["조건"].iter_rows(values_only=True)}
    return rows[0], rows[1:], about


def test_xlsx_holds_exactly_the_funds_the_list_shows(loaded: Loaded, rated: Rated,
                                                     report_folders: dict[str, Path]) -> None:
    late = reports_in(report_folders[AS_OF_LATE])
    admin = web_client(loaded)
    sign_in(admin, rated.keys["admin"])
    fund_type = late[0]["type"]
    for params in ({}, {"status": "ok"}, {"type": fund_type}, {"status": "not_rated", "type": fund_type},
                   {"company": CLIENT_A_COMPANY, "grade": "2"}):
        shown: list[str] = []
        for page in range(1, 10):  # every page of the list
            body = admin.get("/funds", params={**params, "page": page}).text
            shown += re.findall(r'<a href="/funds/([^"]+)">', body)
            if "다음</a>" not in body:
                break
        listing = admin.get("/funds", params=params).text
        assert "/export/funds.xlsx" in listing or not shown
        r = admin.get("/export/funds.xlsx", params=params)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/vnd.openxmlformats")
        header, rows, about = _xlsx_rows(r.content)
        assert header[:3] == ["펀드코드", "펀드명", "운용사"] and "등급" in header and "상태" in header
        assert [row[0] for row in rows] == shown, params  # the same funds, in the list's order
        assert about["펀드 수"] == len(rows)
    b = web_client(loaded)
    sign_in(b, rated.keys["b"])
    mine = {d["fund_code"] for d in late if d["company"] == CLIENT_B_COMPANY or d["fund_code"] == loaded.b_extra_fund}
    _, rows, _ = _xlsx_rows(b.get("/export/funds.xlsx").content)
    assert {row[0] for row in rows} == mine  # scope: its own funds only, rated or not
    _, rows, _ = _xlsx_rows(b.get("/export/funds.xlsx", params={"company": CLIENT_A_COMPANY}).content)
    assert rows == []
    assert b.get("/export/funds.xlsx", params={"grade": "9"}).status_code == 422


def test_xlsx_cells_from_data_are_never_formulas() -> None:
    from evaluator.app.web.exports import list_workbook
    from evaluator.app.web.fund_list import ListQuery

    hostile = {"fund_code": "=1+1", "fund_name": '=HYPERLINK("http://x","펀드")', "company": "+cmd|' /C calc'!A0",
               "type": "주식\x07형", "status": "ok", "grade_label": "1등급", "score": 80.5, "peer_percentile": 3.0,
               "as_of": "2025-06-30"}
    _, rows, about = _xlsx_rows(list_workbook([hostile], ListQuery(q="=SUM(A1)")))
    assert rows == [["=1+1", '=HYPERLINK("http://x","펀드")', "+cmd|' /C calc'!A0", "주식형", "평가", "1등급", 80.5,
                     3.0, "2025-06-30"]]
    assert about["검색어"] == "=SUM(A1)"
    from openpyxl import load_workbook

    cell = load_workbook(io.BytesIO(list_workbook([hostile], ListQuery())))["펀드"]["A2"]
    assert cell.data_type == "s" and cell.value == "=1+1"


def _pdf_fonts(body: bytes) -> list[dict[str, Any]]:
    """Every font descriptor in the PDF with whether it carries an embedded font program."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    doc = PDFDocument(PDFParser(io.BytesIO(body)))
    out = []
    for xref in doc.xrefs:
        for objid in xref.get_objids():
            try:
                obj = resolve1(doc.getobj(objid))
            except Exception:  # a free or unreadable entry is no font
                continue
            if isinstance(obj, dict) and str(obj.get("Type")) == "/'FontDescriptor'":
                out.append({"name": str(resolve1(obj.get("FontName"))),
                            "embedded": any(k in obj for k in ("FontFile", "FontFile2", "FontFile3"))})
    return out


def test_fund_pdf_is_a_real_pdf_with_the_hangul_font_and_the_scope(loaded: Loaded, rated: Rated,
                                                                   report_folders: dict[str, Path]) -> None:
    import pdfplumber

    late = reports_in(report_folders[AS_OF_LATE])
    own = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] == "ok")
    unrated = next(d for d in late if d["company"] == CLIENT_A_COMPANY and d["status"] != "ok")
    other = next(d for d in late if d["company"] == CLIENT_B_COMPANY)
    a = web_client(loaded)
    sign_in(a, rated.keys["a"])
    page = a.get(f"/funds/{own['fund_code']}").text
    assert f'href="/export/funds/{own["fund_code"]}.pdf"' in page
    r = a.get(f"/export/funds/{own['fund_code']}.pdf")
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf" and r.content[:5] == b"%PDF-"
    fonts = _pdf_fonts(r.content)
    assert any("NanumGothic" in f["name"] and f["embedded"] for f in fonts), fonts
    with pdfplumber.open(io.BytesIO(r.content)) as pdf:
        text = "\n".join(p.extract_text() or "" for p in pdf.pages)
        images = sum(len(p.images) for p in pdf.pages)
    assert own["fund_name"] in text and f"{own['grade']}등급" in text and "기준가 추이" in text
    assert images >= 3  # NAV, grade history, criterion scores
    r = a.get(f"/export/funds/{unrated['fund_code']}.pdf")
    with pdfplumber.open(io.BytesIO(r.content)) as pdf:
        text = "\n".join(p.extract_text() or "" for p in pdf.pages)
    assert unrated["fund_name"] in text and "기준가 추이" not in text  # no empty NAV chart for an unrated fund
    denied, unknown = a.get(f"/export/funds/{other['fund_code']}.pdf"), a.get("/export/funds/KR0000000000.pdf")
    assert denied.status_code == unknown.status_code == 404 and denied.text == unknown.text
    assert other["fund_name"] not in denied.text
