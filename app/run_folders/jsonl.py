"""Random access to a JSONL file by line: an index of line offsets, extended as the file grows.

Showing page 1 of a 50,000-completion file must not parse 50,000 lines: the index costs one pass over the
bytes (newline search, no JSON parsing), is kept per file while its size and mtime stay the same, and is
extended from where it stopped when the file only grew (runs append). A last line without its newline is
a line still being written (or cut off by a crash): it is counted, never parsed.
"""

from __future__ import annotations

import json
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BLOCK = 1 << 22  # 4 MiB reads while indexing
CACHE_FILES = 256
CACHE_FILTERS = 64
CHUNK_ROWS = 2000  # rows read (and, by a filter, skipped) at once
NEWLINE = 10
SPACE_BYTES = np.frombuffer(b" \t\r\x0b\x0c", dtype=np.uint8)


@dataclass
class Row:
    """One non-blank line: its position (0-based among rows), physical line number, and value or error."""

    index: int
    line: int
    value: Any = None
    error: str | None = None


@dataclass
class JsonlIndex:
    """Start offsets of the complete, non-blank lines of one file, and what trails after the last one."""

    path: Path
    signature: tuple[int, int, int] = (0, 0, 0)  # (inode, size, mtime_ns)
    starts: array = field(default_factory=lambda: array("q"))
    ends: array = field(default_factory=lambda: array("q"))
    lines: array = field(default_factory=lambda: array("q"))
    end: int = 0  # offset just past the last complete line
    next_line: int = 1
    partial_bytes: int = 0  # bytes after the last newline: a half-written last line

    def __len__(self) -> int:
        return len(self.starts)

    def _extend(self, fh: Any, size: int) -> None:
        """Index the complete lines from ``self.end`` to ``size`` (numpy finds the newlines of each block)."""
        fh.seek(self.end)
        pos, line, carry_start = self.end, self.next_line, self.end
        while pos < size:
            block = fh.read(min(BLOCK, size - pos))
            if not block:
                break
            newlines = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == NEWLINE)
            if len(newlines):
                stops = newlines + pos
                starts = np.empty_like(stops)
                starts[0] = carry_start
                starts[1:] = stops[:-1] + 1
                keep = self._nonblank(fh, block, pos, starts, stops)
                self.starts.frombytes(starts[keep].astype(np.int64).tobytes())
                self.ends.frombytes(stops[keep].astype(np.int64).tobytes())
                numbers = np.arange(line, line + len(stops), dtype=np.int64)
                self.lines.frombytes(numbers[keep].tobytes())
                line += len(stops)
                carry_start = int(stops[-1]) + 1
            pos += len(block)
        self.end, self.next_line = carry_start, line
        self.partial_bytes = size - carry_start

    @staticmethod
    def _nonblank(fh: Any, block: bytes, pos: int, starts: Any, stops: Any) -> Any:
        """Which lines have content: a first byte that is not a space says so; the rest are checked whole."""
        keep = stops > starts
        inside = (starts >= pos) & keep
        first = np.frombuffer(block, dtype=np.uint8)[np.where(inside, starts - pos, 0)]
        unsure = np.flatnonzero(keep & (~inside | np.isin(first, SPACE_BYTES)))
        for k in unsure:  # rare: a line starting with a space, or one that began in the previous block
            keep[k] = _nonblank(fh, int(starts[k]), int(stops[k]))
        return keep

    def read(self, first: int, count: int) -> list[Row]:
        """Rows ``first`` .. ``first + count - 1`` parsed (one read of the byte span they cover)."""
        stop = min(len(self), first + count)
        if first >= stop:
            return []
        with open(self.path, "rb") as fh:
            fh.seek(self.starts[first])
            blob = fh.read(self.ends[stop - 1] - self.starts[first])
        base = self.starts[first]
        return [
            parse_row(k, self.lines[k], blob[self.starts[k] - base : self.ends[k] - base]) for k in range(first, stop)
        ]

    def iter_chunks(self, chunk: int | None = None) -> Iterator[tuple[int, int, bytes]]:
        """(first row, end row, the bytes those rows span), ``chunk`` rows at a time."""
        chunk = chunk or CHUNK_ROWS
        with open(self.path, "rb") as fh:
            for first in range(0, len(self), chunk):
                stop = min(len(self), first + chunk)
                fh.seek(self.starts[first])
                yield first, stop, fh.read(self.ends[stop - 1] - self.starts[first])

    def iter_rows(self, chunk: int = 2000) -> Iterator[Row]:
        for first in range(0, len(self), chunk):
            yield from self.read(first, chunk)

    def problems(self, name: str) -> list[str]:
        if not self.partial_bytes:
            return []
        return [
            f"{name}: the last line is incomplete ({self.partial_bytes} bytes without a line end: still being "
            "written, or cut off); it is not shown"
        ]


def _nonblank(fh: Any, start: int, stop: int) -> bool:
    """Whether a line that spans two read blocks has any content (rare: only at block edges)."""
    here = fh.tell()
    fh.seek(start)
    data = fh.read(stop - start)
    fh.seek(here)
    return bool(data.strip())


def parse_row(index: int, line: int, raw: bytes) -> Row:
    try:
        return Row(index, line, json.loads(raw))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
        return Row(index, line, None, f"line {line} is not valid JSON ({msg})")


def file_signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class IndexCache:
    """Indexes per path, reused while the file is unchanged and extended when it only grew."""

    def __init__(self, size: int = CACHE_FILES) -> None:
        self.size = size
        self._items: OrderedDict[Path, JsonlIndex] = OrderedDict()
        self._filters: OrderedDict[tuple, array] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path) -> JsonlIndex | None:
        """The file's index, or None when it does not exist (or cannot be read)."""
        sig = file_signature(path)
        if sig is None:
            return None
        with self._lock:
            idx = self._items.get(path)
            if idx is not None and idx.signature == sig:
                self._items.move_to_end(path)
                return idx
        grown = idx is not None and idx.signature[0] == sig[0] and sig[1] > idx.signature[1]
        fresh = idx if grown else JsonlIndex(path)
        try:
            with open(path, "rb") as fh:
                if grown and fresh.end and not _ends_line(fh, fresh.end):
                    fresh = JsonlIndex(path)  # rewritten in place: index again from the start
                fresh = _copy(fresh)
                fresh._extend(fh, sig[1])
        except OSError:
            return None
        fresh.signature = sig
        with self._lock:
            self._items[path] = fresh
            self._items.move_to_end(path)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return fresh

    def matching(self, idx: JsonlIndex, key: tuple, keep: Callable[[Row], bool],
                 quick: Callable[[bytes], bool | None] | None = None) -> array:
        """Positions of the rows ``keep`` accepts, cached per file state and filter ``key``.

        ``quick`` may decide from bytes without parsing (True/False), or say None: parse. It is asked first
        about a whole chunk of lines (False rejects them all), then about each line.
        """
        full = (idx.path, idx.signature, key)
        with self._lock:
            hit = self._filters.get(full)
        if hit is not None:
            return hit
        found = array("q")
        starts, ends = idx.starts, idx.ends
        for first, stop, blob in idx.iter_chunks():
            if quick is not None and quick(blob) is False:
                continue
            base = starts[first]
            for k in range(first, stop):
                raw = blob[starts[k] - base : ends[k] - base]
                verdict = quick(raw) if quick is not None else None
                if verdict is None:
                    verdict = keep(parse_row(k, idx.lines[k], raw))
                if verdict:
                    found.append(k)
        with self._lock:
            self._filters[full] = found
            while len(self._filters) > CACHE_FILTERS:
                self._filters.popitem(last=False)
        return found


def _ends_line(fh: Any, offset: int) -> bool:
    fh.seek(offset - 1)
    return fh.read(1) == b"\n"


def _copy(idx: JsonlIndex) -> JsonlIndex:
    """A copy to extend, so readers holding the cached index never see it half-extended."""
    return JsonlIndex(
        idx.path, idx.signature, array("q", idx.starts), array("q", idx.ends), array("q", idx.lines),
        idx.end, idx.next_line, idx.partial_bytes,
    )


def last_row(path: Path, tail: int = 1 << 16) -> Any:
    """The last complete line's value, reading only the file's tail; None when there is none."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - tail)
            fh.seek(start)
            data = fh.read()
    except OSError:
        return None
    lines = data.split(b"\n")
    complete = lines[:-1] if start == 0 else lines[1:-1]  # the first piece may be a line's middle
    for raw in reversed(complete):
        if raw.strip():
            try:
                return json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return None
    return None
