"""The audit log page (``/audit``): admin accounts and admin keys only; anyone else gets the same 404 as an
unknown page. Filters: the actor (a login or ``key:<id>``), the action and a UTC date range, as in
``evaluator audit``; the newest 200 events that match are shown."""

from __future__ import annotations

import datetime as dt
import json

from fastapi import APIRouter, Request
from fastapi.responses import Response

from evaluator.app.storage.audit import ACTIONS, events
from evaluator.app.web.auth import Db, Manager
from evaluator.app.web.render import render

router = APIRouter(include_in_schema=False)
SHOWN = 200


def _day(text: str | None) -> tuple[dt.date | None, str | None]:
    if not text:
        return None, None
    try:
        return dt.date.fromisoformat(text), None
    except ValueError:
        return None, f"날짜 형식이 올바르지 않습니다: {text[:20]} (YYYY-MM-DD)"


@router.get("/audit")
def audit_page(request: Request, viewer: Manager, session: Db, user: str | None = None,
               action: str | None = None, since: str | None = None, until: str | None = None) -> Response:
    user = (user or "").strip()[:100] or None
    action = action if action in ACTIONS else None
    start, bad_start = _day(since)
    end, bad_end = _day(until)
    error = bad_start or bad_end
    rows = [] if error else events(session, actor=user, action=action, since=start, until=end, limit=SHOWN)
    shown = [{"at": e.at.strftime("%Y-%m-%d %H:%M:%S"), "actor": e.actor, "action": e.action,
              "address": e.address or "", "detail": json.dumps(e.detail, ensure_ascii=False) if e.detail else ""}
             for e in rows]
    filters = {"user": user or "", "action": action or "", "since": start.isoformat() if start else "",
               "until": end.isoformat() if end else ""}
    return render(request, "audit.html", {"events": shown, "actions": ACTIONS, "filters": filters,
                                          "error": error, "limit": SHOWN}, status=422 if error else 200)
