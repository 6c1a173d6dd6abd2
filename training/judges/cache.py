"""Judgements already paid for, keyed by (judge model, prompt), so an identical request is never sent twice.

GRPO groups often hold duplicate completions (a policy that has converged answers the same way several
times), and a resumed run sees the same prompts again; with a deterministic judge the answer would be the
same, so it is looked up instead. Only successful judgements are kept: a failure is tried again next time.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any


def cache_key(model: str, messages: list[dict[str, str]]) -> str:
    """A stable digest of the judge model and the exact prompt messages."""
    payload = json.dumps([model, messages], ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class JudgeCache:
    """A bounded, thread-safe LRU map from :func:`cache_key` to a finished judgement."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(self, key: str) -> Any | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
