"""A failed upload's reason in Korean, naming what to fix in the form (which file, which column, which field).

The job keeps the loader's own message (the API returns it as it is, for programs); the pages show this
rewording. The loader speaks for the command line, so its hints name flags (``--type-column``) the form does
not offer; each known message is matched here and said the way the form works. A message not recognised is
still shown, in a <details>, after a Korean sentence, with any command-line hint removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

ROLES = {"data": "기준가격(NAV) 파일", "meta": "펀드 정보(meta) 파일", "benchmark": "벤치마크 파일"}
STATES = {"queued": "대기", "running": "진행 중", "done": "완료", "failed": "실패"}
"""Job states as the pages write them (the API keeps the English names)."""
_CLI_HINT = re.compile(r"[;,]?[^;,.]*--[a-z][a-z-]+[^;.]*")


def state_label(state: str) -> str:
    return STATES.get(state, state)


def _which(message: str, files: Mapping[str, Any]) -> str:
    """The form field whose file the message names (the client's own file name is in the message)."""
    for role, info in files.items():
        name = str((info or {}).get("name") or "")
        if name and name in message:
            return f"{ROLES.get(role, role)}({name})"
    if message.startswith("META"):
        return ROLES["meta"]
    return ROLES["data"]


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], str], str]]
RULES: list[Rule] = [
    (re.compile(r"has no date column .*?its columns are: (.*)$", re.S),
     lambda m, f: f"{f}에 날짜 열(기준일자 또는 date)이 없습니다. 지금 있는 열: {m.group(1)}. "
                  "날짜 열의 이름을 기준일자로 고쳐 다시 올리세요."),
    (re.compile(r"but no NAV column"),
     lambda m, f: f"{f}에 기준가격 열(기준가격 또는 nav)이 없습니다. 열을 넣거나 이름을 고쳐 다시 올리세요."),
    (re.compile(r"no fund code column"),
     lambda m, f: f"{f}에 펀드코드 열(펀드코드 또는 fund_code)이 없습니다. 열을 넣거나 이름을 고쳐 다시 올리세요."),
    (re.compile(r"no header row found"),
     lambda m, f: f"{f}의 첫 행들에서 머리글을 찾지 못했습니다. 첫 행에 기준일자, 펀드코드, 기준가격 같은 열 이름을 "
                  "두고 다시 올리세요."),
    (re.compile(r"holds no NAV rows"),
     lambda m, f: f"{f}에 기준가격 자료가 한 줄도 없습니다. 자료가 든 파일을 다시 올리세요."),
    (re.compile(r"no 유형/type column"),
     lambda m, f: "유형 열이 없습니다. 기준가격(NAV) 파일이나 펀드 정보(meta) 파일에 '유형' 열(동류그룹)을 넣어 "
                  "다시 올리세요."),
    (re.compile(r"neither UTF-8 nor CP949"),
     lambda m, f: f"{f}의 글자 인코딩을 읽을 수 없습니다. CSV를 UTF-8 또는 CP949(엑셀 기본)로 저장해 다시 올리세요."),
    (re.compile(r"is not a readable (\w+) file|not readable"),
     lambda m, f: f"{f}을(를) 읽을 수 없습니다. CSV(UTF-8/CP949), XLSX 또는 XLS 파일인지 확인해 다시 올리세요."),
    (re.compile(r"has no sheet|applies to Excel files"),
     lambda m, f: f"{f}의 자료는 엑셀의 첫 시트에 두어야 합니다. 첫 시트로 옮겨 다시 올리세요."),
    (re.compile(r"unit .* is not one of (.*); write the amount in 원"),
     lambda m, f: f"{f}의 금액 단위를 알 수 없습니다. 단위는 {m.group(1)} 가운데 하나로 쓰거나 원 단위로 적어 "
                  "다시 올리세요."),
    (re.compile(r"is not a date"),
     lambda m, f: "기준일이 날짜가 아닙니다. 기준일 칸을 YYYY-MM-DD 날짜로 고르거나 비워 두세요."),
]


def upload_error(message: str | None, files: Mapping[str, Any]) -> dict[str, str | None]:
    """``{"text": Korean reason and what to fix, "detail": the loader's words when not recognised}``."""
    message = message or ""
    where = _which(message, files)
    for pattern, say in RULES:
        match = pattern.search(message)
        if match:
            return {"text": say(match, where), "detail": None}
    detail = _CLI_HINT.sub("", message).strip() or None
    return {"text": f"{where}로 평가를 시작하지 못했습니다. 파일의 열과 값을 확인해 다시 올리세요.", "detail": detail}
