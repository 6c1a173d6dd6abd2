"""Peer groups, eligibility (with per-유형 overrides) and period weights, from tables or sentences.

``운용기간 3년 이상``, ``설정원본 100억원 이상`` (억원/조원/KRW billion), ``동일 유형 내 … 10개 미만인 경우 등급을
산출하지 아니한다``, ``단, 채권형은 설정원본 300억원 이상``, ``5년 이상 10년 미만인 펀드는 3년 50%, 5년 50%``.
Two different general values for one rule are reported as ambiguous, never one picked.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_lexicon import header_role, is_total
from evaluator.methodology.ingest_tables import Sentence, Table, fill_down
from evaluator.methodology.ingest_text import NumberError, compact, find_amounts, parse_weight, years_value
from evaluator.methodology.rubric import PERIODS

_GROUP = re.compile(r"([가-힣A-Za-z]{1,10}형)")
_NOT_GROUP = {"유형", "동일유형", "투자유형", "펀드유형", "같은유형", "해당유형", "각유형", "동류형", "종류형", "유사형"}
_LIST_CONTEXT = re.compile(r"유형|동류|peer|구분|분류", re.I)
_STRONG_CONTEXT = re.compile(r"유형|동류|peer", re.I)  # before 구분/분류, which also list styles (성장형, 가치형)


def _where(s: Sentence) -> str:
    return f"sentence on p.{s.page}: {s.text[:90]}" if s.source == "text" else f"{s.source}: {s.text[:60]}"


def read_peer_groups(tables: list[Table], sentences: list[Sentence], f: Findings) -> list[str] | None:
    for t in tables:
        cols = [i for i, h in enumerate(t.header) if re.search(r"유형|동류그룹|peergroup|fundtype", compact(h))]
        if cols and t.role is None:
            names = [r.cells[cols[-1]] for r in t.rows if cols[-1] < len(r.cells) and r.cells[cols[-1]]]
            names = [n for n in names if not is_total(n)]
            if len(names) >= 2:
                t.role = "peer groups"
                f.found("peer_groups", names, t.pages[0], t.name, ", ".join(names))
                return names
    lists: list[tuple[list[str], Sentence]] = []
    for strong in (True, False):
        for s in sentences:
            if bool(_STRONG_CONTEXT.search(s.text)) != strong or not _LIST_CONTEXT.search(s.text):
                continue
            names: list[str] = []
            for m in _GROUP.finditer(s.text):
                n = re.sub(r"^.*(?:은|는|:|을|를)", "", m.group(1))  # letter-spaced text loses the space
                if compact(n) not in _NOT_GROUP and n not in names and not n.endswith("유형"):
                    names.append(n)
            if len(names) >= 2:
                lists.append((names, s))
        if lists:
            break
    if lists:
        names, s = max(lists, key=lambda x: len(x[0]))  # the fullest list, not an example naming two
        others = [n for n, _ in lists if not set(n) <= set(names)]
        if others:
            f.notes.append(f"other lists of 유형 in the text, not used: {others}")
        f.found("peer_groups", names, s.page, _where(s), s.text)
        return names
    looked = [t.name for t in tables] + ["sentences naming two or more …형"]
    said = next((s for s in sentences if _CLASSIFICATION.search(s.text)), None)
    f.found(
        "peer_groups",
        None,
        said.page if said else None,
        _where(said) if said else "looked in: " + "; ".join(looked),
        "the document names no list of 유형; peer_groups is left out, so every 유형 in the data is a peer group",
    )
    f.notes.append(
        "no list of 유형 (peer groups) in the document"
        + (f" ({_where(said)})" if said else "")
        + ": every 유형 in the data will form its own peer group"
    )
    return None


_CLASSIFICATION = re.compile(r"(?:유형|분류)[^.]{0,40}(?:따른다|따름|준용|협회|표준)|classification|peer\s*groups?\s*(?:are|follow)", re.I)


_HISTORY_CTX = re.compile(r"운용기간|설정\s*후|설정일|경과|운용된|운용실적|운용\s*기간|track\s*record|history", re.I)
_HISTORY = re.compile(
    r"(\d+(?:\.\d+)?)\s*(년|개월|years?|months?)\s*(?:이|가)?\s*(?:이상|초과|경과|지난|or\s*more|or\s*longer)", re.I
)
_HISTORY_EN = re.compile(
    r"(?:at\s*least|minimum\s*track\s*record\s*(?:of|is)?\s*[:：]?)\s*(\d+(?:\.\d+)?)\s*(years?|months?)", re.I
)
_HISTORY_BELOW = re.compile(r"(\d+(?:\.\d+)?)\s*(년|개월|years?|months?)\s*(?:미만|less\s*than)", re.I)
_EXCLUDE = re.compile(r"제외|평가하지\s*않|평가\s*대상이\s*아니|excluded|not\s*rated|not\s*eligible", re.I)
_AMOUNT_CTX = re.compile(r"설정\s*원본|설정\s*액|설정\s*규모|순자산|운용\s*규모|fund\s*size|AUM|net\s*assets", re.I)
_SIZE = re.compile(
    r"(\d+)\s*개\s*(미만|이하)|(?:fewer|less)\s*than\s*(\d+)\s*(?:eligible\s*|rated\s*)?funds|(\d+)\s*개\s*이상"
    r"|at\s*least\s*(\d+)\s*(?:eligible\s*|rated\s*)?funds",
    re.I,
)
_SIZE_CTX = re.compile(r"동일\s*유형|동류|유형\s*내|유형별|peer|같은\s*유형|그룹|펀드\s*수", re.I)


def _groups_named(text: str, groups: list[str]) -> list[str]:
    c = compact(text)
    return [g for g in groups if compact(g) in c]


def _set(store: dict[str, list[tuple[float, Sentence]]], key: str, value: float, s: Sentence) -> None:
    if all(abs(v - value) > 1e-9 for v, _ in store.setdefault(key, [])):
        store[key].append((value, s))


def _threshold_hits(text: str, excluded: bool) -> list[tuple[str, float, str]]:
    """(rule, value, the clause that states it) for every history/amount threshold in one sentence; the clause
    (text since the previous threshold) tells whether it names particular 유형."""
    hits: list[tuple[str, float, str]] = []
    if _HISTORY_CTX.search(text) or _HISTORY_EN.search(text):
        start = 0
        for m in list(_HISTORY.finditer(text)) + list(_HISTORY_EN.finditer(text)):
            hits.append(("min_history_years", years_value(m.group(1), m.group(2).lower()), text[start : m.end()]))
            start = m.end()
        below = _HISTORY_BELOW.search(text) if excluded and not hits else None
        if below:
            hits.append(("min_history_years", years_value(below.group(1), below.group(2).lower()), text[: below.end()]))
    if _AMOUNT_CTX.search(text):
        start = 0
        for value, m in find_amounts(text):
            tail = re.sub(r"\([^)]*\)", "", text[m.end() : m.end() + 40])[:12]  # skip "(채권형은 300억원)"
            head = text[max(0, m.start() - 24) : m.start()]  # "Minimum fund size: KRW 10 billion"
            if (
                re.search(r"이상|or\s*more|초과", tail, re.I)
                or re.search(r"at\s*least|minimum|최소", head, re.I)
                or (excluded and re.search(r"미만|less\s*than|below", tail + head, re.I))
            ):
                hits.append(("min_set_amount_krw", value, text[start : m.end()]))
                start = m.end()
    return hits


def read_eligibility(sentences: list[Sentence], groups: list[str], f: Findings) -> dict[str, Any] | None:
    general: dict[str, list[tuple[float, Sentence]]] = {}
    per_group: dict[str, dict[str, list[tuple[float, Sentence]]]] = {}
    for s in sentences:
        text = s.text
        if "%" in text:
            continue
        hits: list[tuple[str, float, str]] = []
        excluded = bool(_EXCLUDE.search(text))  # "… 미만인 펀드는 평가대상에서 제외한다"
        hits += _threshold_hits(text, excluded)
        m = _SIZE.search(text)
        if m and _SIZE_CTX.search(text) and re.search(r"등급|산출|부여|rate|grade|평가|eligible|needs?|requires?", text, re.I):
            if m.group(1):
                n = int(m.group(1)) + (1 if m.group(2) == "이하" else 0)
            else:
                n = int(m.group(3) or m.group(4) or m.group(5))
            _set(general, "min_peer_group_size", n, s)
        for key, value, segment in hits:
            named = _groups_named(segment, groups)
            if not named or len(named) == len(groups):
                _set(general, key, value, s)
            else:  # "단, 채권형은 설정원본 300억원 이상": that 유형's own threshold
                for g in named:
                    _set(per_group.setdefault(g, {}), key, value, s)
    out: dict[str, Any] = {}
    looked = ["every sentence and table row mentioning 운용기간/설정원본(설정액)/동일 유형 펀드 수"]
    hints = {
        "min_history_years": "e.g. '운용기간 3년 이상'",
        "min_set_amount_krw": "e.g. '설정원본 100억원 이상'",
        "min_peer_group_size": "e.g. '동일 유형 펀드가 10개 미만인 경우 등급을 산출하지 아니한다'",
    }
    for key, hint in hints.items():
        found = general.get(key, [])
        if not found:
            f.problem("missing", f"eligibility.{key}", f"no rule found ({hint})", looked)
        elif len(found) > 1:
            said = "; ".join(f"{v:g} ({_where(s)}: {s.text[:60]})" for v, s in found)
            f.problem("ambiguous", f"eligibility.{key}", f"the document states different values: {said}", looked)
        else:
            value, s = found[0]
            out[key] = int(value) if key != "min_history_years" and value == int(value) else value
            f.found(f"eligibility.{key}", out[key], s.page, _where(s), s.text)
    overrides: dict[str, dict[str, float]] = {}
    for g, rules in per_group.items():
        for key, found in rules.items():
            if len(found) > 1:
                said = "; ".join(f"{v:g} ({_where(s)})" for v, s in found)
                f.problem("ambiguous", f"eligibility.overrides.{g}.{key}", f"different values for {g}: {said}", looked)
                continue
            value, s = found[0]
            if out.get(key) == value:
                continue
            overrides.setdefault(g, {})[key] = int(value) if key == "min_set_amount_krw" else value
            f.found(f"eligibility.overrides.{g}.{key}", value, s.page, _where(s), s.text)
    if overrides:
        out["overrides"] = overrides
    return out or None


_PAIR = re.compile(
    r"(\d+)\s*(?:년|y|-?years?)\s*(?:수익률|성과|기간|실적|window|returns?|performance)?\s*[:(]?\s*(\d+(?:\.\d+)?)\s*%", re.I
)
_MIN = re.compile(
    r"(\d+(?:\.\d+)?)\s*(년|개월|years?|months?)\s*(?:이상|초과|or\s*more|or\s*longer|and\s*over|\+)"
    r"|(\d+(?:\.\d+)?)\s*(?:년|개월)?\s*[~\-]\s*\d+(?:\.\d+)?\s*(년|개월)",
    re.I,
)
_BELOW = re.compile(r"(\d+(?:\.\d+)?)\s*(?:년|개월)\s*미만")


def _min_years(text: str) -> float | None:
    """``5년 이상``, ``60개월 이상``, ``60~119개월``, ``5년~10년`` → the lower bound in years."""
    m = _MIN.search(text)
    if not m:
        return None
    if m.group(1) is not None:
        return years_value(m.group(1), m.group(2).lower())
    return years_value(m.group(3), m.group(4))


def _rule(weights: dict[str, float]) -> dict[str, float] | str:
    total = sum(weights.values())
    if abs(total - 1) < 1e-6:
        return {k: v * 100 for k, v in weights.items()}
    if abs(total - 100) < 1e-6:
        return weights
    return f"weights {', '.join(f'{k} {v:g}' for k, v in weights.items())} add up to {total:g}, not 100 or 1"


def _period_name(text: str) -> str | None:
    m = re.fullmatch(r"(\d+)(?:년|y|years?)(?:수익률|성과|기간|\(\d+y\))?", compact(text))
    if not m:
        return None
    name = f"{m.group(1)}y"
    return name if name in PERIODS else None


def _periods_long(t: Table) -> list[tuple[float | None, dict[str, float], str, int]] | None:
    """``운용기간 | 평가기간 | 가중치`` with one row per window (the 운용기간 cell merged over its rows)."""
    heads = [compact(h) for h in t.header]
    period = next((i for i, h in enumerate(heads) if re.search(r"평가기간|측정기간|기간|window|period", h) and i > 0), None)
    weight = next((i for i, h in enumerate(heads) if header_role(t.header[i]) == "weight"), None)
    if period is None or weight is None or not re.search(r"운용기간|경과기간|구분|history|설정기간", heads[0]):
        return None
    fill_down(t, [0])
    by_label: dict[str, tuple[float | None, dict[str, float], str, int]] = {}
    for row in t.rows:
        name = _period_name(row.cells[period]) if period < len(row.cells) else None
        if not name or weight >= len(row.cells):
            continue
        try:
            w = parse_weight(row.cells[weight])
        except NumberError:
            return None
        if w is None:
            continue
        label = row.cells[0]
        if label not in by_label:
            lo = _min_years(label)
            if lo is None and re.fullmatch(r"\d+(?:\.\d+)?", label) and re.search(r"년|year", t.header[0], re.I):
                lo = float(label)  # "최소 운용기간(년)" over bare numbers
            by_label[label] = (lo, {}, t.cell_where(row, 0) + f" = {label!r}", row.page)
        by_label[label][1][name] = w[0]
    return list(by_label.values()) or None


def _periods_from_table(t: Table, f: Findings) -> list[tuple[float | None, dict[str, float], str, int]] | None:
    cols = {i: _period_name(h) for i, h in enumerate(t.header)}
    wide = {i: p for i, p in cols.items() if p}
    if len(wide) < 2 or header_role(t.header[0]) == "weight":
        return _periods_long(t)
    rules = []
    for row in t.rows:
        label = row.cells[0]
        if not label or is_total(label):
            continue
        lo = _min_years(label)
        if lo is None and re.fullmatch(r"\d+(?:\.\d+)?", label) and re.search(r"년|year", t.header[0], re.I):
            lo = float(label)  # "최소 운용기간(년) | …" with bare numbers
        weights: dict[str, float] = {}
        for i, p in wide.items():
            try:
                w = parse_weight(row.cells[i]) if i < len(row.cells) else None
            except NumberError:
                w = None
            if w and w[0] > 0:
                weights[p] = w[0]
        if weights:
            rules.append((lo, weights, t.cell_where(row, 0), row.page))
    return rules or None


def _periods_from_sentence(s: Sentence) -> list[tuple[float | None, dict[str, float], str, int]]:
    """One sentence may hold several rules: ``5년 미만은 3년 100%, 5년 이상은 3년 40%, 5년 60%``."""
    pairs = list(_PAIR.finditer(s.text))
    if not pairs:
        return []
    rules: list[tuple[float | None, dict[str, float], str, int]] = []
    start = 0
    where = f"sentence on p.{s.page}: {s.text[:80]}"
    current: tuple[float | None, dict[str, float]] | None = None
    for p in pairs:
        head = s.text[start : p.start()]
        if current is None or _MIN.search(head) or _BELOW.search(head):
            lo = _min_years(head)
            if lo is None and not _BELOW.search(head) and not re.search(
                r"펀드|경우|운용기간|평가기간|기간별|가중치|funds?|track\s*record|history|window", head, re.I
            ):
                return rules
            current = (lo, {})
            rules.append((current[0], current[1], where, s.page))
        current[1][f"{p.group(1)}y"] = float(p.group(2))
        start = p.end()
    return rules


def read_periods(
    tables: list[Table], sentences: list[Sentence], min_history: float | None, f: Findings
) -> list[dict[str, Any]] | None:
    found: list[tuple[float | None, dict[str, float], str, int]] = []
    for t in tables:
        if t.role is None:
            got = _periods_from_table(t, f)
            if got:
                t.role = "period weights"
                found = got
                break
    if not found:
        for s in sentences:
            if s.source == "text":
                found += _periods_from_sentence(s)
    if not found:
        f.problem(
            "missing",
            "period_weights",
            "no period weights (e.g. '5년 이상 10년 미만인 펀드는 3년 50%, 5년 50%' or a table of 운용기간 × 3년/5년/10년)",
            [t.name for t in tables] + ["every sentence with 'N년 … %'"],
        )
        return None
    unbounded = [where for lo, _, where, _ in found if lo is None]
    if len(unbounded) > 1:
        f.problem(
            "ambiguous",
            "period_weights",
            f"{len(unbounded)} period-weight rules give no minimum history, so they cannot be told apart",
            unbounded,
        )
        return None
    rules: list[dict[str, Any]] = []
    for lo, weights, where, page in found:
        years = lo if lo is not None else min_history
        if years is None:
            f.problem("missing", "period_weights", f"cannot tell from which history the rule applies ({where})", [where])
            return None
        bad = [k for k in weights if k not in PERIODS]
        if bad:
            f.problem("invalid", "period_weights", f"unknown window(s) {', '.join(bad)} ({where})", [where])
            return None
        rule = _rule(weights)
        if isinstance(rule, str):
            f.problem("invalid", "period_weights", f"{rule} ({where})", [where])
            return None
        years = int(years) if years == int(years) else years
        rules.append({"min_history_years": years, "weights": rule})
        f.found(f"period_weights[{years}]", rule, page, where, where)
    rules.sort(key=lambda r: r["min_history_years"])
    return rules
