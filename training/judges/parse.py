"""Reading a judge's reply: a JSON ``{"score", "feedback"}`` object or a ``[RESULT] N`` line, on the 0–5 scale.

Anything else is a :class:`JudgeParseError` whose message is the reason given back to the judge when it
is asked again; scores off the scale are refused rather than clipped, because a judge that answers 9
on a 0–5 scale has not followed the rubric.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evaluator.training.judges.prompt import SCALE

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_RESULT = re.compile(r"\[RESULT\]\s*:?\s*([^\s\]]+)", re.IGNORECASE)
_LEADING_SCORE = re.compile(
    r"^\s*(?:```(?:json)?\s*)?\{\s*\"score\"\s*:\s*\"?(-?\d+(?:\.\d+)?)", re.IGNORECASE
)
_INT_TEXT = re.compile(r"^-?\d+(?:\.0+)?$")


class JudgeParseError(ValueError):
    """The judge's reply holds no usable score; the message says why in a few words."""


@dataclass(frozen=True)
class Judgement:
    """A parsed judgement: an integer score on the scale and the judge's feedback."""

    score: int
    feedback: str = ""

    @property
    def reward(self) -> float:
        """The score normalised to 0–1."""
        return (self.score - SCALE[0]) / (SCALE[1] - SCALE[0])


def check_score(value: Any) -> int:
    """An integer on the scale, from an int, a whole float or numeric text; otherwise a parse error."""
    if isinstance(value, bool) or value is None:
        raise JudgeParseError(f"score {value!r} is not a number")
    if isinstance(value, (int, float)):
        if float(value) != int(value):
            raise JudgeParseError(f"score {value} is not a whole number on the {SCALE[0]}-{SCALE[1]} scale")
        score = int(value)
    else:
        text = str(value).strip()
        if not _INT_TEXT.match(text):
            raise JudgeParseError(f"score {text!r} is not a whole number on the {SCALE[0]}-{SCALE[1]} scale")
        score = int(float(text))
    if not SCALE[0] <= score <= SCALE[1]:
        raise JudgeParseError(f"score {score} is off the {SCALE[0]}-{SCALE[1]} scale")
    return score


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object embedded in ``text`` that has a ``score`` key, in order of appearance."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict) and "score" in obj:
            found.append(obj)
        pos = text.find("{", end)
    return found


def parse_judgement(text: str | None) -> Judgement:
    """Read one reply. JSON wins over ``[RESULT] N``; the last of several is the judge's final word."""
    if text is None or not text.strip():
        raise JudgeParseError("the reply was empty")
    body = _THINK.sub(" ", text)
    if re.search(r"<think>", body, re.IGNORECASE):
        raise JudgeParseError("the reply ended inside a <think> block without an answer")
    objects = _json_objects(body)
    if objects:
        obj = objects[-1]
        feedback = obj.get("feedback", "")
        return Judgement(
            score=check_score(obj["score"]), feedback=str(feedback if feedback is not None else "")
        )
    results = _RESULT.findall(body)
    if results:
        feedback = _RESULT.split(body)[0].strip()
        return Judgement(score=check_score(results[-1]), feedback=feedback[-2000:])
    leading = _LEADING_SCORE.match(body)
    if leading:  # a JSON answer cut off after its score (e.g. by the token limit)
        return Judgement(score=check_score(leading.group(1)), feedback="")
    raise JudgeParseError('no JSON object with a "score" and no "[RESULT] N" line was found')
