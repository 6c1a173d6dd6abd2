"""Paged, filtered reading of logged completions (training) and graded samples (evaluation).

A page reads only its own lines through the file's line index. A filter (a reward's range, correct or
incorrect, a search) reads every line once and keeps the matching positions, cached per file state and
filter, so paging through the matches costs a page's lines each time.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluator.app.run_folders.jsonl import IndexCache, JsonlIndex, Row
from evaluator.domains.registry import get_pack

PAGE_SIZE = 25
MAX_PAGE_SIZE = 200
TAG = re.compile(rb"STUDENT RESPONSE ([0-9a-f]{12}) BEGIN")
REWARDS_BYTES = re.compile(rb'"rewards":\s*(\{[^{}]*\})')
PLAIN = re.compile(r"^[\x20-\x7e]*$")
ODD_BYTES = (b"\\u", b"\\/", "\u0130".encode(), "\u212a".encode())  # escapes; İ and the Kelvin sign


def _odd(raw: bytes) -> bool:
    return any(odd in raw for odd in ODD_BYTES)


def _plain(text: str) -> bool:
    return bool(PLAIN.match(text)) and '"' not in text and "\\" not in text


@dataclass
class Filter:
    """What a samples page asks for; ``key()`` names it for the match cache."""

    q: str = ""
    reward: str = ""
    low: float | None = None
    high: float | None = None
    correct: str = ""  # "yes", "no" or "" (evaluation samples)

    def active(self) -> bool:
        return bool(self.q or (self.reward and (self.low is not None or self.high is not None)) or self.correct)

    def key(self) -> tuple:
        return (self.q.lower(), self.reward, self.low, self.high, self.correct)

    def quick(self, raw: bytes) -> bool | None:
        """Decide from a line's (or a chunk of lines') bytes where that is exact, else None (parse).

        A search for plain ASCII text that is absent from the lowered bytes is absent from the text, unless
        the line holds ``\\u`` or ``\\/`` escapes or one of the two characters whose lower case is ASCII
        (İ, the Kelvin sign): those lines are parsed. A training row's ``"rewards": {…}``
        is found by its bytes (inside a JSON string every quote is escaped, so the pattern is the key itself)
        and decides a reward range alone.
        """
        if self.q and _plain(self.q) and self.q.lower().encode() not in raw.lower() and not _odd(raw):
            return False
        if self.reward and not self.q and not self.correct and (self.low is not None or self.high is not None):
            found = REWARDS_BYTES.findall(raw)  # a chunk holds many: only a single line is decided here
            if len(found) == 1:
                try:
                    scores = json.loads(found[0])
                except json.JSONDecodeError:
                    return None
                return self._in_range(scores.get(self.reward))
        return None

    def _in_range(self, score: Any) -> bool:
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            return False
        return not ((self.low is not None and score < self.low) or (self.high is not None and score > self.high))

    def keep(self, row: Row) -> bool:
        value = row.value
        if not isinstance(value, dict):
            return not self.active()
        if self.correct and bool(value.get("correct")) != (self.correct == "yes"):
            return False
        if self.reward and (self.low is not None or self.high is not None):
            scores = value.get("rewards") if isinstance(value.get("rewards"), dict) else value.get("scores")
            if not self._in_range(scores.get(self.reward) if isinstance(scores, dict) else None):
                return False
        if self.q:
            hay = " ".join(str(value.get(k) or "") for k in ("prompt", "question", "completion", "extracted", "id"))
            return self.q.lower() in hay.lower()
        return True


@dataclass
class Page:
    rows: list[Row]
    total: int  # matching rows
    all_rows: int
    page: int
    pages: int
    size: int
    problems: list[str] = field(default_factory=list)


def read_page(indexes: IndexCache, path: Path, flt: Filter, page: int, size: int = PAGE_SIZE) -> Page | None:
    """Page ``page`` (1-based) of the rows ``flt`` keeps; None when the file does not exist."""
    idx = indexes.get(path)
    if idx is None:
        return None
    size = max(1, min(size, MAX_PAGE_SIZE))
    if flt.active():
        hits = indexes.matching(idx, flt.key(), flt.keep, flt.quick)
        total = len(hits)
        pages = max(1, -(-total // size))
        page = max(1, min(page, pages))
        chosen = hits[(page - 1) * size : page * size]
        rows = [r for i in chosen for r in idx.read(i, 1)]
    else:
        total = len(idx)
        pages = max(1, -(-total // size))
        page = max(1, min(page, pages))
        rows = idx.read((page - 1) * size, size)
    problems = idx.problems(path.name)
    bad = sum(1 for r in rows if r.error)
    if bad:
        problems.append(f"{path.name}: {bad} line(s) on this page could not be read (shown with their line number)")
    return Page(rows, total, len(idx), page, pages, size, problems)


def reward_names(idx: JsonlIndex) -> list[str]:
    """The reward (or score) names of the first readable rows: the filter's choices."""
    for row in idx.read(0, 20):
        if isinstance(row.value, dict):
            scores = row.value.get("rewards") if isinstance(row.value.get("rewards"), dict) else row.value.get("scores")
            if isinstance(scores, dict):
                return [str(k) for k in scores]
    return []


class JudgeIndex:
    """Judge log lines by the response tag in their prompt: the judged completion's own SHA-256 prefix.

    The judge's prompt fences each response between markers carrying ``sha256(completion)[:12]``, so a
    logged completion finds its judgement by hashing its text; no step arithmetic, no guessing.
    """

    def __init__(self, indexes: IndexCache) -> None:
        self.indexes = indexes
        self._maps: dict[Path, tuple[tuple[int, int, int], dict[str, int]]] = {}
        self._lock = threading.Lock()

    def _map(self, path: Path) -> tuple[JsonlIndex, dict[str, int]] | None:
        idx = self.indexes.get(path)
        if idx is None:
            return None
        with self._lock:
            hit = self._maps.get(path)
        if hit is not None and hit[0] == idx.signature:
            return idx, hit[1]
        tags: dict[str, int] = {}
        with open(path, "rb") as fh:
            pos, carry = 0, b""
            while pos < idx.end:
                block = carry + fh.read(min(1 << 22, idx.end - pos))
                base = pos - len(carry)
                pos = base + len(block)
                for m in TAG.finditer(block):
                    k = bisect_right(idx.starts, base + m.start()) - 1
                    if k >= 0:
                        tags.setdefault(m.group(1).decode(), k)  # a response's first (pre-re-ask) judgement
                carry = block[-48:]  # a tag cut by the block edge is found whole in the next round
        with self._lock:
            self._maps[path] = (idx.signature, tags)
        return idx, tags

    def judgements(self, path: Path, completions: list[str]) -> list[dict[str, Any] | None]:
        found = self._map(path)
        if found is None:
            return [None] * len(completions)
        idx, tags = found
        out: list[dict[str, Any] | None] = []
        for text in completions:
            k = tags.get(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12])
            row = idx.read(k, 1)[0] if k is not None else None
            out.append(row.value if row is not None and isinstance(row.value, dict) else None)
        return out


@lru_cache(maxsize=16)
def _pack(domain: str) -> Any:
    return get_pack(domain)


def extracted_answer(domain: str | None, style: str | None, completion: str) -> tuple[bool, str | None]:
    """(could extract, the pack's strict extraction) of a logged completion: training logs do not store it.

    ``(False, None)`` when the run names no single pack and style (a multi-pack run) or the pack refuses: the
    page then says the answer is not available, never that the completion had none.
    """
    if not domain or not style:
        return False, None
    try:
        return True, _pack(domain).extract(completion, style=style, mode="strict")
    except Exception:  # an unknown pack or style: "not available", never a failed page
        return False, None
