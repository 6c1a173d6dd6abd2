"""Finding runs under the folders given to ``evaluator serve --runs``, and naming them safely in URLs.

A run is named by ``<root label>/<path inside the root>``: the label is the root folder's own name (made
unique with ``-2``, ``-3`` … when two roots share one), so a link stays the same across restarts and says
nothing secret. A name from a URL is accepted only when it resolves, symlinks included, to a folder or file
inside its root; nothing outside the scanned roots can be named.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from evaluator.app.run_folders.classify import RUN_MARKERS, Entry, classify_dir, classify_file
from evaluator.app.run_folders.documents import DocCache

SKIP_DIRS = re.compile(r"^(\.|__|checkpoint-\d+$|best_adapter$|final$|judge_cache$|node_modules$|wandb$)")
MAX_DEPTH = 8
MAX_DIRS = 200_000
SEGMENT = re.compile(r"^[^/\\\x00-\x1f]+$")


@dataclass(frozen=True)
class Root:
    label: str
    path: Path  # resolved
    only: str | None = None  # ``--runs`` named a run folder itself: the root is its parent, limited to it


def make_roots(folders: list[str | os.PathLike[str]]) -> list[Root]:
    """Each folder with a unique, URL-safe label; a folder that is not a directory is refused by name."""
    roots: list[Root] = []
    seen: set[str] = set()
    for folder in folders:
        path = Path(folder).expanduser().resolve()
        if not path.is_dir():
            raise ValueError(f"--runs {folder}: not a folder")
        only = None
        if _is_run(path) and path.parent != path:  # a run itself: named <parent>/<run> like any other
            path, only = path.parent, path.name
        if any(r.path == path and r.only == only for r in roots):
            continue
        base = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name).strip("-.") or "runs"
        label, n = base, 1
        while label in seen:
            n += 1
            label = f"{base}-{n}"
        seen.add(label)
        roots.append(Root(label, path, only))
    return roots


def _is_run(folder: Path) -> bool:
    try:
        names = set(os.listdir(folder))
    except OSError:
        return False
    return bool(names & (RUN_MARKERS | {"results.json", "report.json", "samples.jsonl"}))


class Catalog:
    """The runs found under the roots; ``scan()`` again on request (the list is swapped in whole)."""

    def __init__(self, folders: list[str | os.PathLike[str]], docs: DocCache | None = None) -> None:
        self.roots = make_roots(folders)
        self.docs = docs or DocCache()
        self.entries: dict[str, Entry] = {}
        self.scanned_at: float | None = None
        self.scan_seconds: float | None = None
        self.notes: list[str] = []
        self._lock = threading.Lock()

    def scan(self) -> list[Entry]:
        t0 = time.perf_counter()
        found: dict[str, Entry] = {}
        notes: list[str] = []
        for root in self.roots:
            self._walk(root, found, notes)
        with self._lock:
            self.entries = found
            self.notes = notes
            self.scanned_at = time.time()
            self.scan_seconds = time.perf_counter() - t0
        return self.list()

    def list(self) -> list[Entry]:
        return sorted(self.entries.values(), key=lambda e: (-e.mtime, e.key))

    def _walk(self, root: Root, found: dict[str, Entry], notes: list[str]) -> None:
        stack: list[tuple[Path, str, int]] = [(root.path / root.only, root.only, 1) if root.only else (root.path, "", 0)]
        visited = 0
        while stack:
            folder, rel, depth = stack.pop()
            visited += 1
            if visited > MAX_DIRS:
                notes.append(f"{root.label}: stopped after {MAX_DIRS} folders")
                return
            try:
                with os.scandir(folder) as it:
                    items = list(it)
            except OSError as exc:
                notes.append(f"{root.label}/{rel}: cannot be listed ({exc.strerror or exc})")
                continue
            names = {i.name for i in items}
            entry = classify_dir(root.label, rel, folder, names, self.docs) if rel else None
            if entry is not None:
                found[entry.key] = entry
            for item in items:
                if item.name.endswith(".json") and item.is_file(follow_symlinks=False):
                    comp = classify_file(root.label, _join(rel, item.name), Path(item.path), self.docs, names)
                    if comp is not None:
                        found[comp.key] = comp
                elif depth < MAX_DEPTH and item.is_dir(follow_symlinks=False) and not SKIP_DIRS.match(item.name):
                    stack.append((Path(item.path), _join(rel, item.name), depth + 1))

    def get(self, label: str, rel: str) -> Entry | None:
        """The entry named ``label/rel``: from the last scan, or (a run made since) classified now."""
        path = self.resolve(label, rel)
        if path is None:
            return None
        key = f"{label}/{rel}"
        hit = self.entries.get(key)
        if hit is not None:
            return hit
        if path.is_dir():
            try:
                names = set(os.listdir(path))
            except OSError:
                return None
            return classify_dir(label, rel, path, names, self.docs)
        if path.is_file() and path.suffix == ".json":
            return classify_file(label, rel, path, self.docs, set(os.listdir(path.parent)))
        return None

    def resolve(self, label: str, rel: str) -> Path | None:
        """The path ``rel`` names under the root ``label``, or None when it is not safely inside it."""
        root = next((r for r in self.roots if r.label == label), None)
        if root is None or not rel:
            return None
        parts = rel.split("/")
        if any(p in ("", ".", "..") or not SEGMENT.match(p) for p in parts):
            return None
        if root.only is not None and parts[0] != root.only:
            return None
        try:
            path = root.path.joinpath(*parts).resolve(strict=True)
        except (OSError, RuntimeError, ValueError):
            return None
        return path if path.is_relative_to(root.path) and path != root.path else None

    def entry_for_path(self, path: str | os.PathLike[str], base: Path | None = None) -> Entry | None:
        """The entry of a run folder named in a document (absolute, or relative to ``base``), if scanned."""
        candidate = Path(path)
        if not candidate.is_absolute() and base is not None:
            candidate = base / candidate
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError):
            return None
        for root in self.roots:
            if real.is_relative_to(root.path) and real != root.path:
                found = self.get(root.label, real.relative_to(root.path).as_posix())
                if found is not None:
                    return found
        return None


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name
