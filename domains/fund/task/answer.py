"""Reading a model's fund evaluation: the JSON object, how it was framed, and whether it fits the schema.

Strict reading: the whole completion is one JSON object, allowing surrounding whitespace, a leading
``<think>…</think>`` block (Qwen3 thinking) and a Markdown ```json fence. Flexible reading: the first
balanced ``{…}`` anywhere in the text that parses as an object with a ``grade`` or
``rationale_ko``. The grade comes from the object's
``grade`` (strict: an integer 1–5; flexible also takes ``"3"``, ``3.0`` or ``"3등급"``, and falls back to
a ``grade: N`` or ``N등급`` in the text). ``NaN``/``Infinity`` never parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from evaluator.core.schemas import load_schema, schema_problems

SCHEMA_PACKAGE = __package__
SCHEMA_FILE = "evaluation.schema.json"

_THINK = re.compile(r"^\s*<think>.*?</think>", re.S)
_FENCE = re.compile(r"^```[A-Za-z]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.S)
_GRADE_FIELD = re.compile(r"[\"']?grade[\"']?\s*[:=]\s*[\"']?([1-5])(?![0-9.])")
_GRADE_WORD = re.compile(r"(?<![0-9.])([1-5])\s*등급")
_GRADE_TEXT = re.compile(r"^\s*([1-5])\s*(?:등급)?\s*$")


@cache
def evaluation_schema() -> dict[str, Any]:
    """The JSON Schema of a model's answer (``evaluation.schema.json``)."""
    return load_schema(SCHEMA_PACKAGE, SCHEMA_FILE)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        obj = json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def strict_body(text: str) -> str:
    """The completion without a leading think block, surrounding whitespace and a code fence."""
    body = _THINK.sub("", text, count=1).strip()
    fenced = _FENCE.match(body)
    return fenced.group(1).strip() if fenced else body


def strict_object(text: str) -> dict[str, Any] | None:
    """The answer object when the whole completion is one (see module docstring); else None."""
    return _loads_object(strict_body(text))


def _object_end(text: str, start: int) -> int | None:
    """Index of the ``}`` closing the ``{`` at ``start`` (string-aware), or None when unbalanced."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def balanced_objects(text: str) -> Iterator[str]:
    """Every balanced ``{…}`` substring, in order of its opening brace."""
    start = text.find("{")
    while start != -1:
        end = _object_end(text, start)
        if end is not None:
            yield text[start : end + 1]
        start = text.find("{", start + 1)


ANSWER_KEYS = ("grade", "rationale_ko")
"""An object counts as an answer only with one of these (not, say, one criterion's entry)."""


def flexible_object(text: str) -> dict[str, Any] | None:
    """The first balanced ``{…}`` in the text that parses as a JSON object holding an answer key."""
    for candidate in balanced_objects(text):
        obj = _loads_object(candidate)
        if obj is not None and any(k in obj for k in ANSWER_KEYS):
            return obj
    return None


def strict_grade(obj: Any) -> int | None:
    """The grade when it is an integer 1–5 (``true`` is not a grade)."""
    value = obj.get("grade") if isinstance(obj, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5:
        return value
    return None


def loose_grade(obj: Any) -> int | None:
    """The grade read leniently: 3, 3.0, "3" or "3등급"."""
    value = obj.get("grade") if isinstance(obj, dict) else None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float) and float(value).is_integer() and 1 <= value <= 5:
        return int(value)
    if isinstance(value, str):
        match = _GRADE_TEXT.match(value)
        return int(match.group(1)) if match else None
    return None


@dataclass(frozen=True)
class Answer:
    """How a completion reads. ``obj`` is shared by a cache: read it, never change it."""

    obj: dict[str, Any] | None
    framing: str
    """``strict`` (the whole completion is the object), ``flexible`` (found inside other text), ``none``."""
    problems: tuple[str, ...]
    """Schema problems of ``obj`` in plain words (empty when it is valid)."""

    @property
    def strict(self) -> dict[str, Any] | None:
        return self.obj if self.framing == "strict" else None

    @property
    def schema_valid(self) -> bool:
        """A strictly framed answer that satisfies ``evaluation.schema.json``."""
        return self.framing == "strict" and not self.problems

    def grade(self, mode: str = "strict") -> int | None:
        """The stated grade: strict needs strict framing and an integer 1–5; flexible is lenient."""
        if mode == "strict":
            return strict_grade(self.strict)
        return loose_grade(self.obj)


@lru_cache(maxsize=4096)
def read_answer(text: str) -> Answer:
    """Parse once (rewards, grader and reports all read the same completion)."""
    obj = strict_object(text)
    framing = "strict"
    if obj is None:
        obj = flexible_object(text)
        framing = "flexible" if obj is not None else "none"
    if obj is None:
        return Answer(None, "none", ("the completion holds no JSON object",))
    return Answer(obj, framing, tuple(schema_problems(obj, evaluation_schema())))


def extract_grade(text: str, mode: str = "strict") -> int | None:
    """The grade a completion states (strict or flexible reading, see module docstring)."""
    answer = read_answer(text)
    if mode == "strict":
        return answer.grade("strict")
    found = answer.grade("flexible")
    if found is not None:
        return found
    field = _GRADE_FIELD.search(text)
    if field:
        return int(field.group(1))
    words = _GRADE_WORD.findall(text)
    return int(words[-1]) if words else None
