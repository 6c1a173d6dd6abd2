"""Output files that never lose work: atomic writes, no silent overwrite, names that stay inside a folder.

Every document the product writes goes through these helpers, so a crash mid-write leaves either the
old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import struct
import tempfile
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO


class OutputExistsError(FileExistsError):
    """Raised when an output folder or file exists and the caller did not ask to overwrite it."""


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def dumps(doc: Any, *, indent: int | None = None) -> str:
    """Strict JSON text: a NaN or infinity (a reward that abstained, an empty mean) is written as ``null``.

    Python's ``json`` writes a bare ``NaN`` by default, which no other JSON reader accepts. The common case
    (nothing non-finite) costs one strict ``dumps``; only a document that holds one is walked and cleaned.
    """
    try:
        return json.dumps(doc, ensure_ascii=False, indent=indent, default=_json_default, allow_nan=False)
    except ValueError:
        return json.dumps(finite(doc), ensure_ascii=False, indent=indent, default=_json_default, allow_nan=False)


def finite(obj: Any) -> Any:
    """``obj`` with every non-finite float (NaN, ±inf, numpy's too) replaced by None, recursively."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    if hasattr(obj, "item") and hasattr(obj, "dtype"):  # numpy scalars
        return finite(obj.item())
    return obj


def atomic_write_json(path: str | os.PathLike[str], doc: Any, *, indent: int = 2) -> Path:
    """Atomically write ``doc`` as UTF-8 JSON (Korean text stays readable: ``ensure_ascii=False``)."""
    return atomic_write_text(path, dumps(doc, indent=indent) + "\n")


def atomic_write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> Path:
    """Atomically write one JSON document per line."""
    text = "".join(dumps(r) + "\n" for r in rows)
    return atomic_write_text(path, text)


def append_jsonl(path: str | os.PathLike[str], row: Any) -> None:
    """Append one line; a single ``write`` of a whole line keeps concurrent appends from interleaving."""
    append_jsonl_rows(path, [row])


def append_jsonl_rows(path: str | os.PathLike[str], rows: Iterable[Any]) -> None:
    """Append one line per row in a single ``write`` (one open, whole lines; nothing written for no rows)."""
    text = "".join(dumps(row) + "\n" for row in rows)
    if not text:
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(text)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a JSONL file, naming the line of any malformed row."""
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {lineno} is not valid JSON ({exc.msg})") from exc
    return rows


def prepare_output_dir(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Create ``path``; refuse a non-empty existing folder unless ``force`` is set."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise OutputExistsError(f"{out} already exists and is not empty; pass --force to write into it")
    out.mkdir(parents=True, exist_ok=True)
    return out


STAGING_SUFFIX = ".incomplete"
"""A folder being written beside the one it will replace; left behind only by an interrupted write."""


@contextmanager
def replacing_dir(
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    owned: Collection[str] | Callable[[str], bool] | None = None,
) -> Iterator[Path]:
    """Write a whole folder beside ``path`` (``NAME.incomplete``) and swap it in only when the block completes.

    An interruption (an exception, SIGKILL, a full disk) leaves the old folder as it was, or no folder when
    there was none: never the new report beside the old samples. A non-empty ``path`` is refused unless
    ``force``. ``owned`` names what the command writes (names, or a test on a name): anything else in the old
    folder (a user's notes) is carried into the new one as hard links, so ``--force`` replaces only the
    command's own files. After an exception the staging folder is kept (its partial files may be worth
    reading); the next write removes it. The working folder (or one above it) is refused: swapping it would
    leave the shell in a deleted folder.
    """
    target = Path(path).absolute()
    if target == Path.cwd() or target in Path.cwd().parents:
        raise OutputExistsError(f"{path} is the current folder (or holds it); choose a folder below it for --out")
    recover_replaced(target)
    if target.exists() and not target.is_dir():
        raise OutputExistsError(f"{target} exists and is not a folder")
    existing = sorted(target.iterdir()) if target.is_dir() else []
    if existing and not force:
        raise OutputExistsError(f"{target} already exists and is not empty; pass --force to replace it")
    staging = target.with_name(target.name + STAGING_SUFFIX)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    mine = owned if callable(owned) else (lambda name: owned is None or name in owned)
    for entry in existing:
        if not mine(entry.name):
            _carry(entry, staging / entry.name)
    yield staging
    os.sync()  # one flush for the whole folder (its files are written plainly: the swap is what is atomic)
    swap_in(staging, target)


def write_staged_text(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    """A file inside a folder that :func:`replacing_dir` is staging: a plain write, no temporary file or fsync.

    Nothing can read the staging folder as a result before the swap, and the swap is preceded by one
    ``sync``, so per-file atomicity would only cost (15,000 fsyncs were most of a batch's writing time).
    The encoded text goes down in one ``write`` between ``open`` and ``close`` (the same bytes a text-mode
    file writes, without its buffer and the calls that set it up).
    """
    _write_bytes(path, text.encode(encoding))
    return path


def _write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    view = memoryview(data)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o666)  # O_BINARY: Windows would write "\n" as "\r\n"
    try:
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def stage_record(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> bytes:
    """One file for :func:`write_staged_records` (a worker's feed): its path and encoded text, framed."""
    name, data = os.fsencode(path), text.encode(encoding)
    return struct.pack("<II", len(name), len(data)) + name + data


def write_staged_records(stream: BinaryIO) -> dict[int, str]:
    """:func:`write_staged_text` of each :func:`stage_record` read from ``stream`` until its end (in a worker
    that creates a batch's files while the caller builds the next); ``{record number: "Error: message"}``
    for each that failed, the others written all the same."""
    failed: dict[int, str] = {}
    number = 0
    while len(head := stream.read(8)) == 8:
        size_name, size_data = struct.unpack("<II", head)
        name, data = stream.read(size_name), stream.read(size_data)
        if len(data) != size_data:  # the feed was cut off (its writer died): nothing more to write
            break
        try:
            _write_bytes(os.fsdecode(name), data)
        except Exception as exc:  # one file's failure is reported, never the others' loss
            failed[number] = f"{type(exc).__name__}: {exc}"
        number += 1
    return failed


def write_staged_json(path: Path, doc: Any, *, indent: int = 2) -> Path:
    """:func:`write_staged_text` of the same JSON text :func:`atomic_write_json` writes."""
    return write_staged_text(path, dumps(doc, indent=indent) + "\n")


def _carry(src: Path, dst: Path) -> None:
    """Hard-link (copy where links fail) a file or tree the command does not own into the new folder."""
    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    if src.is_dir() and not src.is_symlink():
        shutil.copytree(src, dst, copy_function=link, symlinks=True)
    elif src.is_symlink():
        os.symlink(os.readlink(src), dst)
    else:
        link(str(src), str(dst))


def swap_in(staging: Path, target: Path) -> None:
    """Put the finished ``staging`` folder in place of ``target``.

    Two atomic renames (old aside as ``.NAME.replaced``, new in), then the old one is deleted; a kill between
    them is repaired by :func:`recover_replaced` on the next write to ``target``.
    """
    old = _replaced(target)
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    _fsync_dir(target.parent)
    shutil.rmtree(old, ignore_errors=True)


def recover_replaced(target: Path) -> None:
    """Finish or undo a swap that a kill cut short: the old folder comes back if the new one never arrived."""
    old = _replaced(target)
    if not old.exists():
        return
    if target.exists():
        shutil.rmtree(old)
    else:
        os.replace(old, target)


def _replaced(target: Path) -> Path:
    return target.with_name(f".{target.name}.replaced")


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_new_file(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Refuse to overwrite an existing file unless ``force`` is set."""
    target = Path(path)
    if target.exists() and not force:
        raise OutputExistsError(f"{target} already exists; pass --force to overwrite it")
    return target


_UNSAFE = re.compile(r"[^0-9A-Za-z가-힣._-]+")


def safe_filename(name: str, *, default: str = "unnamed", max_len: int = 120) -> str:
    """Turn data (a fund code, a model id) into a file name that cannot leave its folder."""
    text = unicodedata.normalize("NFC", str(name)).strip()
    text = _UNSAFE.sub("_", text).strip("._")
    text = text[:max_len]
    return text or default


def path_inside(folder: str | os.PathLike[str], name: str, suffix: str = "") -> Path:
    """Join a data-derived ``name`` under ``folder`` and prove the result is still inside it."""
    base = Path(folder).resolve()
    target = (base / (safe_filename(name) + suffix)).resolve()
    if base != target.parent:
        raise ValueError(f"refusing to write outside {base}: {name!r}")
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, set):
        return sorted(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
