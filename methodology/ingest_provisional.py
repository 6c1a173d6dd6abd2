"""Provisional grades (가등급 / 잠정등급) for young funds, from sentences and table rows.

``운용기간 1년 이상 3년 미만인 펀드는 1년 성과로 가등급을 부여한다``; a table row ``가등급 | 1년 이상 3년 미만 |
1년``; ``Funds with 1 year or more but under 3 years of track record receive a provisional rating on 1-year
performance``. The sentences that state the rule are set apart, so the eligibility and period readers never take
its ``1년 이상`` for the regular minimum history. Two different rules, or a rule without its window, are
reported, never guessed.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.methodology.ingest_findings import Findings
from evaluator.methodology.ingest_tables import Sentence
from evaluator.methodology.ingest_text import compact, years_value
from evaluator.methodology.rubric import PERIODS

MARK = re.compile(r"(?<![가-힣])가\s*등\s*급|잠\s*정\s*등\s*급|잠\s*정\s*평\s*가|provisional", re.I)
"""On cleaned text (letter spacing already joined): 가등급, never the 가등급 inside 평가등급."""
_UNIT = r"(년|개월|years?|months?)"
_RANGE = re.compile(rf"(\d+(?:\.\d+)?){_UNIT}(?:이상|ormore|orlonger)(?:,|but|and)*(?:(\d+(?:\.\d+)?){_UNIT}미만|(?:under|lessthan)(\d+(?:\.\d+)?){_UNIT})")
_WINDOW = re.compile(r"(\d+)(?:년|y|years?|-years?)(?:간)?(?:의)?(?:성과|수익률|실적|performance|returns?|기간|window)", re.I)


def provisional_sentences(sentences: list[Sentence]) -> tuple[list[Sentence], list[Sentence]]:
    """(the sentences that state a provisional rule, all the others)."""
    marked = [s for s in sentences if MARK.search(s.text)]
    return marked, [s for s in sentences if s not in marked]


def _window(text: str) -> str | None:
    c = compact(text)
    m = _WINDOW.search(_RANGE.sub("", c))
    if m:
        return f"{m.group(1)}y"
    rest = re.search(r"(\d+)(?:년|y|years?)(?!이상|미만|ormore|orlonger)", _RANGE.sub("", c))  # a table row's bare "1년"
    return f"{rest.group(1)}y" if rest else None


def read_provisional(marked: list[Sentence], f: Findings) -> dict[str, Any] | None:
    """The rubric's ``provisional`` rule, with provenance, or None (a problem says why when a rule is half stated)."""
    rules: list[tuple[dict[str, Any], Sentence]] = []
    for s in marked:
        c = compact(s.text)
        m = _RANGE.search(c)
        if not m:
            continue
        lo = years_value(m.group(1), m.group(2))
        hi = years_value(m.group(3), m.group(4)) if m.group(3) else years_value(m.group(5), m.group(6))
        window = _window(s.text)
        where = f"sentence on p.{s.page}: {s.text[:90]}" if s.source == "text" else f"{s.source}: {s.text[:60]}"
        if window is None or window not in PERIODS:
            f.problem(
                "missing", "provisional",
                f"a provisional (가등급) rule for {lo:g}–{hi:g} years of history names no window it is graded on "
                f"({where}); give it via --fill, e.g. {{\"provisional\": {{\"window\": \"1y\"}}}}", [where],
            )
            return None
        rule: dict[str, Any] = {"min_history_years": lo, "max_history_years": hi, "window": window}
        if "잠정등급" in c:
            rule["label_prefix"] = "잠정"
        if all(r != rule for r, _ in rules):
            rules.append((rule, s))
    if not rules:
        if marked:
            f.notes.append(f"provisional grades (가등급) are mentioned but no rule with a history range was found: {marked[0].text[:80]}")
        return None
    if len(rules) > 1:
        said = "; ".join(f"{r['min_history_years']:g}–{r['max_history_years']:g}y on {r['window']} (p.{s.page})" for r, s in rules)
        f.problem("ambiguous", "provisional", f"the document states different provisional (가등급) rules: {said}",
                  [s.text[:60] for _, s in rules])
        return None
    rule, s = rules[0]
    rule = {k: (int(v) if isinstance(v, float) and v.is_integer() else v) for k, v in rule.items()}
    f.found("provisional", rule, s.page, f"sentence on p.{s.page}" if s.source == "text" else s.source, s.text)
    return rule
