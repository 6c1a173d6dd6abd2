"""A batch command's bulk work without CPython's cyclic garbage collector, which finds nothing to free there.

The collector runs by allocation counts: every 700 new container objects a young collection, and a full one
each time the long-lived heap has grown by a quarter. A 15,000-fund batch builds millions of objects it keeps
(reports, their parsed copies, row tuples), so the heap only grows and the collector walks all of it again
and again: 7 full collections, about 1 s of a 12 s ``fund evaluate``, to find some 9,000 cyclic objects
(library internals) at the end. The batch's own data are trees, which reference counting frees.
:func:`collector_paused` holds the collector off for the batch; whatever cycles it left are collected by the
first automatic collection after it (or go with the process). Only one-shot commands use it: a long-lived
process (the web server, training) and a command's model generation keep the collector as it is.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """No automatic cyclic collection inside the block (unless ``pause`` is false); the collector is as it
    was after it."""
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def skip_final_collection() -> None:
    """For ``atexit``: the interpreter's last collection walks every object of every imported library (pandas,
    SQLAlchemy: ~0.3 s) only to free memory the operating system takes back anyway. Frozen objects are left
    to it; the commands close their own files and database connections before they return."""
    gc.freeze()
