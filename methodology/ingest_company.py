"""The 운용사 rating rule of a firm's methodology PDF, when the document states one (else nothing).

A document states it in sentences that name the 운용사 rating (``운용사 평가``, ``운용사 등급``, ``운용사 점수``):
the minimum number of rated funds (``펀드가 3개 이상``), how funds are weighted (``설정원본 … 가중``, or
``단순 평균``), the quantitative and qualitative shares (``계량 70%``, ``정성 30%``), whether a company
without a qualitative assessment is rated, and the pillars with their weights — in a table whose header names
the 운용사 (``운용사 정성평가 항목 | 가중치``) or in a sentence (``운용철학 25%, 조직안정성 20%, …``). Company
bands are the document's grade bands unless it states others (noted in the report). A rule that is stated but
incomplete is reported as a problem naming what is missing, never guessed.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_tables import Sentence, Table
from evaluator.methodology.ingest_text import compact

COMPANY = re.compile(
    r"운용사\s*(?:는|의|를|에\s*대한)?\s*(?:평가|등급|점수|정성)|운용회사\s*평가|asset\s*manager\s*rating",
    re.I,
)
_MIN = re.compile(r"(?:펀드|펀드\s*수)[^.]{0,25}?(\d+)\s*개\s*(?:이상|미만)")
_SHARE = {
    "quantitative": re.compile(r"계량[^.%]{0,25}?(\d+(?:\.\d+)?)\s*%"),
    "qualitative": re.compile(r"정성[^.%]{0,25}?(\d+(?:\.\d+)?)\s*%"),
}
_REQUIRED = re.compile(
    r"정성\s*평가[^.]{0,30}?(?:없는|받지\s*않은)[^.]{0,30}?(?:평가하지|등급을\s*부여하지|제외)"
)
_PAIR = re.compile(r"([가-힣A-Za-z][가-힣A-Za-z ]{1,20}?)\s*\(?(\d+(?:\.\d+)?)\s*%\)?")
PILLAR_IDS = {
    "운용철학": "philosophy", "조직안정성": "organization", "리스크관리체계": "risk_management",
    "리스크관리": "risk_management", "운용인력": "people", "시스템인프라": "infrastructure",
    "운용프로세스": "process", "운용체계": "process", "준법감시": "compliance", "내부통제": "compliance",
}  # fmt: skip


def is_company_sentence(s: Sentence) -> bool:
    """A sentence of the text (not a table row) that names the 운용사 rating."""
    return s.source == "text" and bool(COMPANY.search(s.text))


def _pillar_table(tables: list[Table]) -> list[tuple[str, float, str, str | None]] | None:
    """(name, weight, where, id) from a table whose header names the 운용사 and a weight column."""
    for t in tables:
        head = [compact(h or "").lower() for h in t.header]
        weight_cols = [j for j, h in enumerate(head) if "가중" in h or "배점" in h or "weight" in h]
        if t.role is not None or not any("운용사" in h for h in head) or not weight_cols:
            continue
        w = weight_cols[0]
        id_col = next((j for j, h in enumerate(head) if j != w and ("id" in h or "코드" in h)), None)
        n = next((j for j, h in enumerate(head) if j not in (w, id_col) and "항목" in h), None)
        n = n if n is not None else next(j for j in range(len(head)) if j not in (w, id_col))
        out, seen = [], set()
        for row in t.rows:
            cells = row.cells + [""] * len(head)
            num = re.search(r"\d+(?:\.\d+)?", cells[w])
            if (
                num and cells[n] and cells[n] not in seen
            ):  # a pillar over several rows (its levels) counts once
                seen.add(cells[n])
                pid = (
                    cells[id_col]
                    if id_col is not None and re.fullmatch(r"[a-z][a-z0-9_]*", cells[id_col])
                    else None
                )
                out.append((cells[n], float(num.group()), t.cell_where(row, w), pid))
        if out:
            t.role = "company_pillars"
            return out
    return None


def _pillar_sentence(said: list[Sentence]) -> list[tuple[str, float, str, str | None]] | None:
    for s in said:
        if "정성" not in s.text:
            continue
        pairs = [(m.group(1).strip(), float(m.group(2))) for m in _PAIR.finditer(s.text)]
        named = [(n, w) for n, w in pairs if compact(n) in PILLAR_IDS]
        if len(named) >= 2:
            return [(n, w, f"sentence on p.{s.page}", None) for n, w in named]
    return None


def _pillars(found: list[tuple[str, float, str, str | None]], f: Findings) -> list[dict[str, Any]]:
    out, used = [], set()
    for i, (name, weight, where, given) in enumerate(found, 1):
        pid = given or PILLAR_IDS.get(compact(name), f"pillar_{i}")
        pid = pid if pid not in used else f"{pid}_{i}"
        used.add(pid)
        out.append({"id": pid, "name": " ".join(name.split()), "weight": weight})
        f.found(f"company_rating.pillars.{pid}", weight, None, where, name)
    return out


def read_company_rule(
    tables: list[Table], sentences: list[Sentence], bands: list[dict[str, Any]] | None, f: Findings
) -> dict[str, Any] | None:
    """The ``company_rating`` section, or None when the document says nothing about rating 운용사."""
    text_sentences = [s for s in sentences if s.source == "text"]
    at = [i for i, s in enumerate(text_sentences) if is_company_sentence(s)]
    if not at:
        return None
    # a rule's sentences follow the one that names it ("운용사 평가는 … 최종 점수는 계량 70%와 …"): up to 3 after
    said = [
        text_sentences[i] for i in sorted({j for i in at for j in range(i, min(i + 4, len(text_sentences)))})
    ]
    text = " ".join(s.text for s in said)
    where = f"sentences on p.{', '.join(sorted({str(s.page) for s in said}))} naming the 운용사 rating"
    rule: dict[str, Any] = {}
    missing = []
    m = _MIN.search(text)
    if m:
        rule["min_funds"] = int(m.group(1))
        f.found("company_rating.min_funds", rule["min_funds"], said[0].page, where, m.group(0))
    else:
        missing.append("the minimum number of rated funds (e.g. '평가 펀드가 3개 이상')")
    if re.search(r"단순\s*평균|동일\s*가중", text):
        rule["size_field"] = "equal"
    elif re.search(r"(?:설정원본|설정액)[^.]{0,20}가중", text):
        rule["size_field"] = "set_amount_krw"
    else:
        missing.append("how funds are weighted ('설정원본 가중 평균' or '단순 평균')")
    shares = {k: float(p.search(text).group(1)) for k, p in _SHARE.items() if p.search(text)}
    if "quantitative" in shares and "qualitative" not in shares:
        shares["qualitative"] = 100.0 - shares["quantitative"]
    if len(shares) == 2:
        rule["weights"] = shares
        f.found("company_rating.weights", shares, said[0].page, where, text[:120])
    else:
        missing.append("the quantitative and qualitative shares (e.g. '계량 70%, 정성 30%')")
    rule["require_qualitative"] = bool(_REQUIRED.search(text))
    found = _pillar_table(tables) or _pillar_sentence(said)
    if found:
        rule["pillars"] = _pillars(found, f)
    elif shares.get("qualitative", 0) > 0:
        missing.append("the qualitative pillars and their weights (a table '운용사 정성평가 항목 | 가중치')")
    if bands:
        rule["bands"] = [dict(b) for b in bands]
        f.notes.append(
            "the document states no separate 운용사 grade bands; the fund grade bands are used for 운용사"
        )
    else:
        missing.append("grade bands")
    if missing:
        f.problem(
            "missing",
            "company_rating",
            "the document rates 운용사 but does not state " + "; ".join(missing),
            [where],
        )
        return None
    return {
        k: rule[k]
        for k in ("min_funds", "size_field", "weights", "require_qualitative", "pillars", "bands")
        if k in rule
    }
