"""Small readers for a run folder's JSON and YAML documents that turn every failure into a message.

A document is read whole (they are small: configs, summaries, reports), cached by the file's size and
mtime so a rescan or a second page view parses nothing again.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evaluator.app.run_folders.jsonl import file_signature

try:  # libyaml's loader is ~10x faster: a 500-run scan reads 500 configs
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_DOCUMENT_BYTES = 256 << 20  # a larger "report" is not something to parse on a page view
CACHE_DOCS = 2048


@dataclass
class Doc:
    """A parsed document, or why there is none (``missing`` when the file is simply absent)."""

    value: Any = None
    error: str | None = None
    missing: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.missing


class DocCache:
    def __init__(self, size: int = CACHE_DOCS) -> None:
        self.size = size
        self._items: OrderedDict[tuple, tuple[tuple[int, int, int], Doc]] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: Path, keys: tuple[str, ...] | None = None) -> Doc:
        """The whole document, or (YAML, ``keys`` given) only those top-level keys: what a scan needs."""
        sig = file_signature(path)
        if sig is None:
            return Doc(missing=True, error=f"{path.name} is missing")
        slot = (path, keys)
        with self._lock:
            hit = self._items.get(slot)
            if hit is not None and hit[0] == sig:
                self._items.move_to_end(slot)
                return hit[1]
        doc = _load(path, sig[1], keys)
        with self._lock:
            self._items[slot] = (sig, doc)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return doc


def _yaml_keys(raw: bytes, keys: tuple[str, ...]) -> Any:
    """Only ``keys`` of a block-style YAML mapping (as ``save_config`` writes it), each parsed by PyYAML.

    Building a whole run config's YAML nodes is most of a 500-run scan's time, and the list needs four
    keys; so the document is cut at its top-level keys (a line at column 0) and only the wanted blocks
    (with their indented or ``- `` continuation lines) are parsed. The run's page parses the whole file.
    """
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in raw.decode("utf-8").splitlines(keepends=True):
        head = line[:1]
        if head in (" ", "\t") or line.startswith("- ") or line.rstrip("\r\n") == "-" or not line.strip():
            if current is not None:
                blocks[current].append(line)
            continue
        current = None
        if head == "#" or line.startswith(("---", "...")) or ":" not in line:
            continue
        name = line.split(":", 1)[0].strip().strip("\"'")
        if name in keys:
            current = name
            blocks[name] = [line]
    out: dict[str, Any] = {}
    for lines in blocks.values():
        part = yaml.load("".join(lines), Loader=_Loader)
        if isinstance(part, dict):
            out.update(part)
    return out


def _load(path: Path, size: int, keys: tuple[str, ...] | None = None) -> Doc:
    if size > MAX_DOCUMENT_BYTES:
        return Doc(error=f"{path.name} is {size >> 20} MiB, more than the viewer reads")
    if size == 0:
        return Doc(error=f"{path.name} is empty (still being written, or cut off)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Doc(error=f"{path.name} cannot be read ({exc.strerror or exc})")
    try:
        if path.suffix in (".yaml", ".yml"):
            if keys is not None:
                return Doc(_yaml_keys(raw, keys))
            return Doc(yaml.load(raw, Loader=_Loader))  # a safe loader (C or Python)
        return Doc(json.loads(raw))
    except json.JSONDecodeError as exc:
        where = "cut off" if exc.pos >= len(raw.rstrip()) - 1 else f"line {exc.lineno}, column {exc.colno}"
        return Doc(error=f"{path.name} is not valid JSON ({exc.msg}; {where})")
    except yaml.YAMLError as exc:
        return Doc(error=f"{path.name} is not valid YAML ({str(exc).splitlines()[0]})")
    except UnicodeDecodeError:
        return Doc(error=f"{path.name} is not UTF-8 text")


def dict_or_error(doc: Doc, name: str) -> tuple[dict[str, Any], list[str]]:
    """The document as a mapping (empty when unusable) and the problems met on the way."""
    if doc.error:
        return {}, [doc.error]
    if not isinstance(doc.value, dict):
        return {}, [f"{name} is not a JSON/YAML object"]
    return doc.value, []
