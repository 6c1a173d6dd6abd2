"""C library functions the standard library does not wrap (``prctl``, ``malloc_trim``), looked up once.

They are taken from the symbols already loaded into this process (``CDLL(None)``): no
``ctypes.util.find_library``, which runs ``ldconfig`` in a subprocess, and nothing to ``dlopen`` later, in a
forked child of a threaded parent. There is no maintained library for these two calls.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def libc_function(name: str) -> Callable[..., int] | None:
    """The C library's ``name`` (with ``errno`` kept for ``ctypes.get_errno``); None where it has none (not
    Linux, or a C library without that function)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
