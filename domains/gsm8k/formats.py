"""Format checks behind the shaping rewards: strict/soft layout, tag counting and a bare-integer answer.

These follow the well-known GRPO-GSM8K recipe, with its regex slips fixed (the original strict/soft patterns
used ``re.match`` without DOTALL, so multi-line reasoning never matched) and these choices made explicit:

- Both format checks need a **non-empty** answer slot: an empty ``<answer></answer>`` is not the format.
- **strict**: the whole completion (ignoring surrounding whitespace) is exactly the style's layout, every tag
  once, newlines where the system prompt puts them, a non-empty think block, nothing after the answer
  (``qwen3-think``: exactly one ``\\boxed{}`` on the last line after ``</think>``, or a final ``Answer: N``
  line; only closing punctuation may follow).
- **soft**: the think block then the answer block, every tag once, any whitespace; text before or after is
  tolerated (``xmlcount`` charges for text after). ``qwen3-think``: one ``</think>`` (the opening ``<think>``
  may be missing, as when a chat template pre-fills it) and a non-empty final answer after it.
- **xmlcount**: 0.25 for each of the style's four markers present exactly once, minus 0.001 per character
  after the final closing marker, within 0..1. For ``qwen3-think`` the markers are ``<think>``, ``</think>``,
  ``\\boxed{`` after ``</think>`` and its closing brace; closing punctuation after the box is free.
- **int**: there is a strict answer and its slot text (each repeat of it) is a bare integer: digits with an
  optional minus sign, no units, commas, decimals or markup.
"""

from __future__ import annotations

import re

from evaluator.domains.gsm8k.extract import answer_slot, find_boxes, strict_answer
from evaluator.domains.gsm8k.styles import Style, get_style

_BARE_INT = re.compile(r"-?[0-9]+")
_FREE_AFTER_BOX = re.compile(r"[\s.。!$*\\)\]]")
_PER_CHAR_PENALTY = 0.001


def _spec(style: str | Style) -> Style:
    return style if isinstance(style, Style) else get_style(style)


def _prepare(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _tags_once(text: str, spec: Style) -> bool:
    return all(text.count(tag) == 1 for tag in spec.tags)


def _slot_filled(text: str, spec: Style) -> bool:
    slot = answer_slot(text, spec)
    return slot.present and slot.well_formed and bool(slot.contents) and all(c.strip() for c in slot.contents)


def strict_format_ok(text: str, style: str | Style) -> bool:
    spec, text = _spec(style), _prepare(text)
    if spec.answer_open and spec.answer_close:
        if not _tags_once(text, spec):
            return False
        inner = r"\n(.*?)\n" if spec.name == "xml" else r"(.*?)"
        pattern = (
            re.escape(spec.think_open)
            + r"\n(.*?)\n"
            + re.escape(spec.think_close)
            + r"\n"
            + re.escape(spec.answer_open)
            + inner
            + re.escape(spec.answer_close)
        )
        match = re.fullmatch(pattern, text, re.S)
        return bool(match and match.group(1).strip() and match.group(2).strip())
    if text.count(spec.think_open) != 1 or text.count(spec.think_close) != 1:
        return False
    match = re.fullmatch(
        re.escape(spec.think_open) + r"\n(.*?)\n" + re.escape(spec.think_close) + r"\n+(.+)", text, re.S
    )
    if not match or not match.group(1).strip() or not _slot_filled(text, spec):
        return False
    slot = answer_slot(text, spec)
    if slot.kind == "box":
        tail = text[slot.end :]
        return len(slot.contents) == 1 and "\n" not in tail and not _FREE_AFTER_BOX.sub("", tail)
    return True


def soft_format_ok(text: str, style: str | Style) -> bool:
    spec, text = _spec(style), _prepare(text)
    if spec.answer_open and spec.answer_close:
        if not _tags_once(text, spec):
            return False
        pattern = (
            re.escape(spec.think_open)
            + r".*?"
            + re.escape(spec.think_close)
            + r"\s*"
            + re.escape(spec.answer_open)
            + r"(.*?)"
            + re.escape(spec.answer_close)
        )
        match = re.search(pattern, text, re.S)
        return bool(match and match.group(1).strip())
    if text.count(spec.think_close) != 1 or text.count(spec.think_open) > 1:
        return False
    if spec.think_open in text and text.index(spec.think_open) > text.index(spec.think_close):
        return False
    slot = answer_slot(text, spec)
    return _slot_filled(text, spec) and (slot.kind != "box" or len(slot.contents) == 1)


def xmlcount_score(text: str, style: str | Style) -> float:
    spec, text = _spec(style), text.replace("\r\n", "\n")
    if spec.answer_open and spec.answer_close:
        score = 0.25 * sum(text.count(tag) == 1 for tag in spec.tags)
        if spec.answer_close in text:
            score -= _PER_CHAR_PENALTY * len(text.rsplit(spec.answer_close, 1)[1].strip())
    else:
        score = 0.25 * ((text.count(spec.think_open) == 1) + (text.count(spec.think_close) == 1))
        if spec.think_close in text:
            after = text.split(spec.think_close, 1)[1]
            boxes, closed = find_boxes(after)
            opened = after.count("\\boxed")
            score += 0.25 * (opened == 1) + 0.25 * (opened == 1 and closed and len(boxes) == 1)
            if boxes:
                score -= _PER_CHAR_PENALTY * len(_FREE_AFTER_BOX.sub("", after[boxes[-1][2] :]))
    return round(min(1.0, max(0.0, score)), 4)


def int_ok(text: str, style: str | Style) -> bool:
    spec = _spec(style)
    if strict_answer(text, spec) is None:
        return False
    return all(_BARE_INT.fullmatch(c.strip()) for c in answer_slot(text, spec).contents)
