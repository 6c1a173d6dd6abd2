"""How much of a rationale is copied from its prompt: the share of its characters inside a long common run.

The prompt's text is rebuilt from the facts (:func:`evaluator.domains.fund.task.prompts.copyable_text`: the
system prompt, the figure lines, the band table, the judgement rule, the answer format and its example),
so training (TRL) and evaluation (the grader, which never sees the prompt column) measure the same thing.
Both texts are compared with whitespace collapsed and the fund's name, company and code removed. A
rationale character counts as copied when it lies inside a run of ``SHINGLE`` characters that also occurs in
the prompt. The longest copied run that lies inside one figure line of the prompt is not counted: quoting
one figure line inside a sentence is fine. The prompt, its band table, its format example or several
figure lines pasted whole cover most of the rationale.

Hand-written (a set of character shingles) rather than a library: ``rouge-score`` drops Korean and
``difflib`` is quadratic on these lengths; this is linear and needs no tokenizer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from evaluator.domains.fund.task.facts import facts_json
from evaluator.domains.fund.task.prompts import copyable_text, metric_lines

SHINGLE = 10
"""Characters in a common run before it counts as copied (``3년 연환산 수익률`` is exactly 10)."""
FREE_SHARE, ZERO_SHARE = 0.4, 0.7
"""Copied share up to which there is no penalty, and from which the copy factor is 0 (linear between)."""

_SPACE = re.compile(r"\s+")


def _normal(text: str, names: Sequence[str]) -> str:
    for name in sorted((n for n in names if n), key=len, reverse=True):
        text = text.replace(name, " ")
    return _SPACE.sub(" ", text).strip()


def _names(facts: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(facts.get(k) or "") for k in ("fund_name", "company", "fund_code"))


@lru_cache(maxsize=512)
def _prompt(facts_text: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The prompt's shingles, and its figure lines (each normalised) for the one-line allowance."""
    facts = json.loads(facts_text)
    names = _names(facts)
    prompt = _normal(copyable_text(facts), names)
    lines = tuple(_normal(line.removeprefix("- "), names) for line in metric_lines(facts))
    return frozenset(prompt[i : i + SHINGLE] for i in range(len(prompt) - SHINGLE + 1)), lines


def _spans(covered: bytearray) -> list[tuple[int, int]]:
    spans, start = [], None
    for i, flag in enumerate([*covered, 0]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            spans.append((start, i))
            start = None
    return spans


def copied_share(text: str, facts: Mapping[str, Any], facts_text: str | None = None) -> float:
    """Share (0–1) of the rationale's non-space characters that lie in a run copied from the prompt
    (``facts_text``: the facts as the dataset row carries them, when the caller has it, to skip re-encoding)."""
    body = _normal(text, _names(facts))
    if not body:
        return 0.0
    shingles, lines = _prompt(facts_text if facts_text is not None else facts_json(facts))
    covered = bytearray(len(body))
    for i in range(len(body) - SHINGLE + 1):
        if body[i : i + SHINGLE] in shingles:
            covered[i : i + SHINGLE] = b"\x01" * SHINGLE
    quoted = [(a, b) for a, b in _spans(covered) if any(body[a:b].strip() in line for line in lines)]
    if quoted:  # one figure line quoted inside a sentence is allowed
        a, b = max(quoted, key=lambda span: span[1] - span[0])
        covered[a:b] = bytes(b - a)
    chars = [i for i, ch in enumerate(body) if ch != " "]
    return sum(covered[i] for i in chars) / len(chars)


def copy_factor(share: float) -> float:
    """1 up to ``FREE_SHARE`` copied, 0 from ``ZERO_SHARE``, linear between."""
    if share <= FREE_SHARE:
        return 1.0
    return max(0.0, (ZERO_SHARE - share) / (ZERO_SHARE - FREE_SHARE))
