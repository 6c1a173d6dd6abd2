"""Downloads linked from the pages, under the pages' scope rules: the fund list as ``.xlsx`` (the list's own
filters, :class:`~evaluator.app.web.fund_list.ListQuery`; one row per fund, Korean headers) and a fund page as
PDF (:mod:`evaluator.app.web.fund_pdf`). Both read through the API's scoped queries, so an out-of-scope fund is
the same 404 as an unknown one and a list never holds another client's fund.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from evaluator.app.api.read_routes import CODE_RE
from evaluator.app.storage import nav_series, queries, scales
from evaluator.app.storage.audit import record
from evaluator.app.web.auth import Db, User, client_address
from evaluator.app.web.fund_list import STATUS_LABELS, Filters, ListQuery, checked
from evaluator.app.web.fund_page import CRITERION_LABELS, metrics_table
from evaluator.app.web.fund_pdf import bars_png, fund_pdf, history_png, nav_png

router = APIRouter(include_in_schema=False)
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
EXPORT_MAX = 100_000  # rows; a bigger list is refused (narrow the filters) rather than cut short
COLUMNS = (
    ("펀드코드", "fund_code"), ("펀드명", "fund_name"), ("운용사", "company"), ("유형", "type"),
    ("상태", "status_text"), ("등급", "grade_text"), ("종합 점수", "score"), ("유형 내 상위(%)", "peer_percentile"),
    ("기준일", "as_of"),
)  # fmt: skip
FILTER_LABELS = {"q": "검색어", "type": "유형", "grade": "등급", "company": "운용사", "status": "상태"}


def _text_cell(ws: Any, value: Any) -> Any:
    """A cell that is always data: text from uploads that starts with ``=`` is not a formula, and characters
    a workbook cannot hold are dropped."""
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    if value is None or isinstance(value, int | float):
        return WriteOnlyCell(ws, value=value)
    cell = WriteOnlyCell(ws, value=ILLEGAL_CHARACTERS_RE.sub("", str(value)))
    cell.data_type = "s"
    return cell


def list_workbook(items: list[dict[str, Any]], filters: ListQuery, note: str | None = None) -> bytes:
    """The list as a workbook: sheet 펀드 (a header row, then one row per fund, in the list's order) and sheet
    조건 (the filters it was made with)."""
    from openpyxl import Workbook

    wb = Workbook(write_only=True)
    ws = wb.create_sheet("펀드")
    ws.append([_text_cell(ws, h) for h, _ in COLUMNS])
    for item in items:
        row = {**item, "status_text": STATUS_LABELS.get(item.get("status") or "", item.get("status")),
               "grade_text": item.get("grade_label") or ""}
        ws.append([_text_cell(ws, row.get(key)) for _, key in COLUMNS])
    about = wb.create_sheet("조건")
    params = filters.as_params()
    if params["status"]:
        params["status"] = STATUS_LABELS[params["status"]]
    for key, label in FILTER_LABELS.items():
        about.append([_text_cell(about, label), _text_cell(about, params[key] or "전체")])
    about.append([_text_cell(about, "펀드 수"), len(items)])
    about.append([_text_cell(about, "만든 시각(UTC)"),
                  _text_cell(about, dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M"))])
    if note:
        about.append([_text_cell(about, "참고"), _text_cell(about, note)])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def _attachment(name: str) -> str:
    """``Content-Disposition`` for a file name that may hold Hangul (RFC 6266 ``filename*``)."""
    return f"attachment; filename=\"export\"; filename*=UTF-8''{quote(name, safe='')}"


@router.get("/export/funds.xlsx")
def funds_xlsx(request: Request, viewer: User, session: Db, filters: Filters) -> Response:
    """Every fund the list shows for these filters (all its pages), as the viewer's scope allows."""
    view = checked(session, viewer, filters)
    total, items = queries.list_funds(session, viewer.principal, filters.fund_filter(), page=1,
                                      page_size=EXPORT_MAX + 1)
    if total > EXPORT_MAX:
        raise HTTPException(413, f"펀드가 {total:,}개로 한 파일({EXPORT_MAX:,}개)을 넘습니다. 조건을 좁혀 주세요.")
    body = list_workbook(items, filters, view.message())
    record(session, viewer.principal, "export", {"file": "funds.xlsx", "funds": total, **filters.as_params()},
           address=client_address(request))
    day = dt.date.today().isoformat()
    return Response(body, media_type=XLSX, headers={"Content-Disposition": _attachment(f"펀드목록-{day}.xlsx"),
                                                    "Cache-Control": "no-store"})


def pdf_page(session: Any, principal: Any, code: str) -> dict[str, Any] | None:
    """Everything the PDF shows, through the same scoped queries as the fund page; None when not visible."""
    found = nav_series.fund_report_and_series(session, principal, code) if CODE_RE.match(code) else None
    if found is None:
        return None
    report, series = json.loads(found[0]), nav_series.chart_document(found[1])
    history = queries.fund_history(session, principal, code)
    scale = scales.ScaleView.of(h["grade_scale"] for h in reversed(history)).scale
    status = report.get("status")
    grade = report.get("grade") if status == "ok" else None
    label = scales.label(scale, grade, "provisional" if report.get("provisional") else "ok") if grade else None
    shown = label or STATUS_LABELS.get("error" if status == "error" else "not_rated", "–")
    criteria = {CRITERION_LABELS.get(k, k): v for k, v in (report.get("criterion_scores") or {}).items()
                if v is not None}
    facts = [["코드", report["fund_code"]], ["유형", report.get("type") or "–"],
             ["운용사", report.get("company") or "–"], ["등급", shown],
             ["종합 점수", "–" if report.get("score") is None else f"{report['score']:.1f}"],
             ["기준일", report.get("as_of") or found[2].isoformat()],
             ["방법론", f"{(report.get('rubric') or {}).get('name', '')} {(report.get('rubric') or {}).get('version', '')}"]]
    rated = status == "ok"
    return {
        "report": report, "grade_text": shown, "facts": facts, "metrics": metrics_table(report.get("metrics") or {}),
        "charts": {
            "nav": nav_png(series) if series and rated else None,
            "history": history_png(history, scale) if any(h["status"] in ("ok", "provisional") for h in history)
            else None,
            "criteria": bars_png(criteria) if criteria and rated else None,
        },
    }


@router.get("/export/funds/{code:anytext}.pdf")
def fund_pdf_download(request: Request, code: str, viewer: User, session: Db) -> Response:
    page = pdf_page(session, viewer.principal, code)
    if page is None:
        raise HTTPException(404, "no such fund")
    record(session, viewer.principal, "export", {"file": "fund.pdf", "fund_code": code},
           address=client_address(request))
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in code)[:80] or "fund"
    return Response(fund_pdf(page), media_type="application/pdf",
                    headers={"Content-Disposition": _attachment(f"{safe}.pdf"), "Cache-Control": "no-store"})
