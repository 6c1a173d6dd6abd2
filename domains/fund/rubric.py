"""The fund pack's own rubric (``rubric.json``, the sample methodology) and picking a user's rubric instead."""

from __future__ import annotations

import copy
import json
import os
from functools import cache
from importlib import resources
from typing import Any

from evaluator.methodology.rubric import load_rubric, validate_rubric


@cache
def _default() -> dict[str, Any]:
    text = resources.files("evaluator.domains.fund").joinpath("rubric.json").read_text(encoding="utf-8")
    return validate_rubric(json.loads(text), "the built-in fund rubric")


def default_rubric() -> dict[str, Any]:
    """A fresh copy of the built-in rubric (callers may change it without touching the cached one)."""
    return copy.deepcopy(_default())


def resolve_rubric(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The rubric at ``path`` (validated), or the built-in one when no path is given."""
    return default_rubric() if path is None else load_rubric(path)
