"""A per-worker memo for the pages' heavy aggregates (the overview, the list's filter choices).

They change only when a batch is stored, so each entry is keyed by the caller's scope (admin, companies,
funds — not the key, so clients with the same scope share it) and the database's batch state (the newest
run id and the number of runs), read on every request with one indexed query. A batch stored by any
process changes that state, so no worker serves a stale overview; revocation is checked before this.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.tables import Run

T = TypeVar("T")


class ScopeCache:
    def __init__(self, size: int = 512) -> None:
        self._items: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(self, session: Session, who: Principal, name: str, compute: Callable[[], T]) -> T:
        stamp = tuple(session.execute(select(func.max(Run.id), func.count(Run.id))).one())
        key = (name, who.admin, who.companies, who.funds, stamp)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value
