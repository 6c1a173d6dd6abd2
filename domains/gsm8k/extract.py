"""Reading the final answer out of a completion, strictly (the style's answer slot) or flexibly.

Decisions, because each one can be gamed if left open:

- **Strict** reads only the style's answer slot: ``<answer>…</answer>``, ``<SOLUTION>…</SOLUTION>``, or for
  ``qwen3-think`` the text after the single ``</think>``: every ``\\boxed{…}`` there, else a last line
  ``Answer: N`` / ``The answer is N`` / ``정답: N`` / ``답은 N``. A bare number without the format is no answer.
- A slot must hold **one** number: ``17 or 18``, ``17, 18``, ``17-18`` and ``[17, 18]`` are no answer.
  ``-5`` is one (negative) number.
- **Repeated slots**: accepted only when they all hold the same number (``<answer>18</answer><answer>18</answer>``
  reads 18; the format rewards still penalise the duplicate tags); different numbers are no answer.
- Nested or unbalanced answer tags, or several ``</think>``, are a broken slot: no answer.
- **Flexible** returns the strict answer when there is one. A slot that is *present* but empty, ambiguous or
  broken means the model committed to no answer: None, never a free pass to a number written elsewhere.
  (One exception: a single opening answer tag cut off before its closing tag is read up to the end.)
  With no slot at all it reads the answer the way GSM8K's authors grade — the last of ``#### N``,
  ``The answer is N``, ``\\boxed{N}``, a final ``Answer: N``/``A: N`` line — and otherwise the last number in the
  text (lm-eval's flexible extract). For ``qwen3-think`` only the text after ``</think>`` is read when a number
  follows it (a draft inside the thinking is not the answer). Calculator annotations ``<<…>>`` are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluator.domains.base import PackError
from evaluator.domains.gsm8k.numbers import (
    candidates,
    format_value,
    names_number,
    single_value,
    strip_annotations,
)
from evaluator.domains.gsm8k.styles import Style, get_style

MODES = ("strict", "flexible")

_MARKDOWN_LEAD = re.compile(r"^[\s>#*\-]+")
_ANSWER_LINES = (
    re.compile(r"^(?:the\s+)?(?:final\s+answer|answer|최종\s*답|정답|답)\s*[:：]\s*(?P<c>.*)$", re.I),
    re.compile(r"\banswer\s+is\s*[:：]?\s*(?P<c>.*)$", re.I),
    re.compile(r"(?:정답|답)\s*(?:은|는)\s*(?P<c>.*)$"),
)
_TRAILING_PUNCT = " \t.。!"
_BOX_START = re.compile(r"\\boxed\s*\{")

_FLEX_MARKERS = (
    re.compile(r"####\s*(?P<c>[^\n]*)"),
    re.compile(r"\banswer\s+is\s*[:：]?\s*(?P<c>[^\n]*)", re.I),
    re.compile(r"(?:정답|답)\s*(?:은|는)\s*(?P<c>[^\n]*)"),
)
_FINAL_LINE = re.compile(
    r"^(?:the\s+)?(?:final\s+answer|answer|a|최종\s*답|정답|답)\s*[:：]\s*(?P<c>.*)$", re.I
)
_SENTENCE_END = re.compile(r"\.(?!\d)|[;!?。(]|\s(?:because|since|so|which|as|therefore)\b", re.I)


@dataclass(frozen=True)
class Slot:
    """Where a completion put its answer. ``kind`` is ``tag``, ``box`` or ``line``; ``end`` follows the last one."""

    present: bool
    well_formed: bool = True
    contents: tuple[str, ...] = ()
    kind: str = ""
    end: int = -1
    remainder: str | None = None


ABSENT = Slot(present=False)


def find_boxes(text: str) -> tuple[list[tuple[str, int, int]], bool]:
    """Every ``\\boxed{…}`` (balanced braces) as (content, start, end), and whether all of them were closed."""
    found: list[tuple[str, int, int]] = []
    for start in _BOX_START.finditer(text):
        depth, i = 1, start.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            return found, False
        found.append((text[start.end() : i - 1], start.start(), i))
    return found, True


def _answer_line(line: str) -> str | None:
    """The answer part of an ``Answer: N`` style line, or None when the line is not one."""
    plain = _MARKDOWN_LEAD.sub("", line.replace("**", "")).strip()
    for pattern in _ANSWER_LINES:
        match = pattern.search(plain)
        if match:
            return match.group("c").strip().rstrip(_TRAILING_PUNCT)
    return None


def _tagged_slot(text: str, open_tag: str, close_tag: str) -> Slot:
    n_open, n_close = text.count(open_tag), text.count(close_tag)
    if n_open == 0 and n_close == 0:
        return ABSENT
    pairs = list(re.finditer(re.escape(open_tag) + r"(.*?)" + re.escape(close_tag), text, re.S))
    contents = tuple(m.group(1) for m in pairs)
    well = n_open == n_close == len(pairs) and not any(open_tag in c for c in contents)
    remainder = text.split(open_tag, 1)[1] if (n_open, n_close) == (1, 0) else None
    end = pairs[-1].end() if pairs else -1
    return Slot(True, well, contents, "tag", end, remainder)


def _think_slot(text: str, style: Style) -> Slot:
    n_close = text.count(style.think_close)
    if n_close == 0:
        return ABSENT
    if n_close > 1:
        return Slot(True, well_formed=False)
    offset = text.index(style.think_close) + len(style.think_close)
    after = text[offset:]
    boxes, closed = find_boxes(after)
    if boxes or not closed:
        end = offset + boxes[-1][2] if boxes else -1
        return Slot(True, closed, tuple(c for c, _, _ in boxes), "box", end)
    lines = [ln for ln in after.splitlines() if ln.strip()]
    content = _answer_line(lines[-1]) if lines else None
    if content is None:
        return ABSENT
    return Slot(True, True, (content,), "line", len(text))


def answer_slot(text: str, style: str | Style) -> Slot:
    """Locate the style's answer slot in ``text`` (see the module notes for what counts)."""
    spec = style if isinstance(style, Style) else get_style(style)
    text = text.replace("\r\n", "\n")
    if spec.answer_open and spec.answer_close:
        return _tagged_slot(text, spec.answer_open, spec.answer_close)
    return _think_slot(text, spec)


def _slot_answer(slot: Slot) -> str | None:
    if not slot.present or not slot.well_formed or not slot.contents:
        return None
    values = {single_value(c) for c in slot.contents}
    if len(values) != 1 or None in values:
        return None
    return format_value(values.pop())


def strict_answer(text: str, style: str | Style) -> str | None:
    """The single number in the style's answer slot, normalised; None when absent, empty or ambiguous."""
    return _slot_answer(answer_slot(text, style))


def _last_marker(text: str) -> str | None:
    """What follows the last GSM8K-style answer marker in ``text``; None when there is no marker."""
    hits: list[tuple[int, str]] = []
    for pattern in _FLEX_MARKERS:
        hits += [
            (m.start(), _SENTENCE_END.split(m.group("c"), maxsplit=1)[0]) for m in pattern.finditer(text)
        ]
    boxes, _ = find_boxes(text)
    hits += [(start, content) for content, start, _ in boxes]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines:
        final = _FINAL_LINE.match(_MARKDOWN_LEAD.sub("", lines[-1].replace("**", "")).strip())
        if final:
            hits.append((text.rfind(lines[-1]), final.group("c")))
    hits = [hit for hit in hits if names_number(hit[1])]  # "the answer is not obvious" commits to nothing
    return max(hits, key=lambda hit: hit[0])[1] if hits else None


def flexible_answer(text: str, style: str | Style) -> str | None:
    """Strict answer, else GSM8K's own markers, else the last number (see the module notes)."""
    text = strip_annotations(text.replace("\r\n", "\n"))
    slot = answer_slot(text, style)
    if slot.present:
        if slot.remainder is not None:
            value = single_value(slot.remainder)
            return None if value is None else format_value(value)
        return _slot_answer(slot)
    spec = style if isinstance(style, Style) else get_style(style)
    if spec.answer_open is None and spec.think_close in text:
        after = text.rsplit(spec.think_close, 1)[1]
        text = after if candidates(after) else text  # a draft answer inside the thinking is not the answer
    marked = _last_marker(text)
    if marked is not None:
        value = single_value(marked)
        return None if value is None else format_value(value)
    numbers = candidates(text)
    return format_value(numbers[-1]) if numbers else None


def extract_answer(text: str, style: str | Style, mode: str = "strict") -> str | None:
    """Dispatch on ``mode`` (``strict`` or ``flexible``)."""
    if mode == "strict":
        return strict_answer(text, style)
    if mode == "flexible":
        return flexible_answer(text, style)
    raise PackError(f"unknown extraction mode {mode!r}; choose one of {', '.join(MODES)}")
