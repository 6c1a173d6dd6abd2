"""Where GSM8K problems come from: the hub, a local copy, a JSONL file, or the embedded synthetic generator.

Every source yields the same raw rows (``id``, ``question``, ``answer_field`` in GSM8K's ``… #### N`` form);
the pack turns them into prompts. Sources, by the ``source`` string:

- ``None`` / ``"auto"``: ``openai/gsm8k`` from the hub; when it cannot be loaded (offline), the synthetic
  problems, with a notice on stderr saying so and why.
- a hub id (``"openai/gsm8k"``) or a local folder: ``datasets.load_dataset(source, "main", split=split)``
  (a folder saved with ``save_to_disk`` is read with ``load_from_disk``; a folder holding ``{split}.jsonl``
  and a single ``.jsonl`` file are read line by line, so an error can name the line).
- ``"synthetic"`` or ``"synthetic:steps=1-4,max=50,n=1000"``: :mod:`.synthetic` (steps per problem, largest
  number in a story, rows when no limit is given).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.domains.base import PackError
from evaluator.domains.gsm8k.numbers import parse_gold, strip_annotations
from evaluator.domains.gsm8k.synthetic import SyntheticConfig, generate

HUB_ID = "openai/gsm8k"
HUB_CONFIG = "main"
SYNTHETIC_SIZES = {"train": 5000, "test": 300}


@dataclass(frozen=True)
class RawRow:
    id: str
    question: str
    answer_field: str
    where: str
    """Where the row came from (file and line, or source and index), for error messages."""

    @property
    def gold(self) -> str:
        try:
            return parse_gold(self.answer_field)
        except ValueError as exc:
            raise PackError(f"{self.where}: {exc}") from None

    @property
    def solution(self) -> str:
        """The worked solution without calculator annotations and without the final ``#### N`` line."""
        lines = strip_annotations(self.answer_field).strip().splitlines()
        while lines and (lines[-1].lstrip().startswith("####") or not lines[-1].strip()):
            lines.pop()
        return "\n".join(lines).strip()


def parse_synthetic_spec(source: str) -> tuple[SyntheticConfig, int | None]:
    """``synthetic[:steps=A-B,max=N,n=ROWS]`` → generator config and row count (None: the split default)."""
    _, _, options = source.partition(":")
    fields: dict[str, Any] = {}
    size = None
    for part in filter(None, (p.strip() for p in options.split(","))):
        key, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            if key == "steps":
                low, _, high = value.partition("-")
                fields["min_steps"], fields["max_steps"] = int(low), int(high or low)
            elif key == "max":
                fields["max_number"] = int(value)
            elif key == "n":
                size = int(value)
            else:
                raise ValueError
        except ValueError:
            raise PackError(
                f"bad synthetic option {part!r} in {source!r}; use synthetic:steps=1-3,max=20,n=1000"
            ) from None
    return SyntheticConfig(**fields), size


def synthetic_rows(source: str, split: str, *, limit: int | None, seed: int) -> list[RawRow]:
    if split not in SYNTHETIC_SIZES:
        raise PackError(f"synthetic GSM8K has splits {', '.join(SYNTHETIC_SIZES)}, not {split!r}")
    config, size = parse_synthetic_spec(source)
    n = limit if limit is not None else (size or SYNTHETIC_SIZES[split])
    problems = generate(n, split, seed=seed, config=config)
    return [
        RawRow(f"synthetic-{split}-{seed}-{i:05d}", p.question, p.answer_field, f"synthetic {split} row {i}")
        for i, p in enumerate(problems)
    ]


def jsonl_rows(path: Path, prefix: str, limit: int | None) -> list[RawRow]:
    """Rows of a GSM8K-format JSONL file; a malformed line is an error naming the file and line."""
    rows: list[RawRow] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if limit is not None and len(rows) >= limit:
                break
            if not line.strip():
                continue
            where = f"{path}: line {lineno}"
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PackError(f"{where} is not valid JSON ({exc.msg})") from None
            rows.append(_raw(doc, f"{prefix}-{len(rows):05d}", where))
    return rows


def _raw(doc: Any, row_id: str, where: str) -> RawRow:
    if not isinstance(doc, dict):
        raise PackError(f"{where} is not a JSON object with 'question' and 'answer'")
    missing = [k for k in ("question", "answer") if not str(doc.get(k) or "").strip()]
    if missing:
        raise PackError(f"{where} has no {' or '.join(repr(k) for k in missing)} (GSM8K rows need both)")
    row = RawRow(str(doc.get("id") or row_id), str(doc["question"]).strip(), str(doc["answer"]), where)
    _ = row.gold  # fail now, naming the line, rather than later
    return row


def _from_columns(questions: Iterable[Any], answers: Iterable[Any], prefix: str, label: str) -> list[RawRow]:
    return [
        _raw({"question": q, "answer": a}, f"{prefix}-{i:05d}", f"{label} row {i}")
        for i, (q, a) in enumerate(zip(questions, answers, strict=True))
    ]


def _dataset_rows(ds: Any, source: str, split: str, limit: int | None) -> list[RawRow]:
    missing = [c for c in ("question", "answer") if c not in ds.column_names]
    if missing:
        raise PackError(
            f"{source} ({split}) has no {', '.join(missing)} column; columns are {ds.column_names}"
        )
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    return _from_columns(ds["question"], ds["answer"], f"gsm8k-{split}", f"{source} {split}")


def hub_rows(source: str, split: str, limit: int | None) -> list[RawRow]:
    """``load_dataset(source, "main", split=split)`` — the hub, a hub-layout local folder, or a cached copy."""
    from datasets import load_dataset

    try:
        try:
            ds = load_dataset(source, HUB_CONFIG, split=split)
        except ValueError as exc:
            if f"'{HUB_CONFIG}' not found" not in str(exc):
                raise
            ds = load_dataset(source, split=split)  # a local copy without GSM8K's config names
    except Exception as exc:  # datasets raises many kinds (network, config, split); all mean "cannot load"
        raise PackError(f"could not load GSM8K from {source!r} (split {split!r}): {_reason(exc)}") from exc
    return _dataset_rows(ds, source, split, limit)


def disk_rows(folder: Path, split: str, limit: int | None) -> list[RawRow]:
    """A folder written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``."""
    from datasets import DatasetDict, load_from_disk

    try:
        ds = load_from_disk(str(folder))
    except Exception as exc:  # corrupt or partial folder
        raise PackError(f"could not read the saved dataset in {folder}: {_reason(exc)}") from exc
    if isinstance(ds, DatasetDict):
        if split not in ds:
            raise PackError(f"{folder} has splits {', '.join(ds)}, not {split!r}")
        ds = ds[split]
    return _dataset_rows(ds, str(folder), split, limit)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def _notice(message: str) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(message, style="yellow", markup=False)


def load_rows(source: str | None, split: str, *, limit: int | None = None, seed: int = 0) -> list[RawRow]:
    """Raw rows of ``split`` from ``source`` (see the module notes)."""
    if limit is not None and limit < 1:
        raise PackError(f"limit must be at least 1, not {limit}")
    if source is None or source.strip() in ("", "auto"):
        try:
            return hub_rows(HUB_ID, split, limit)
        except PackError as exc:
            _notice(
                f"GSM8K could not be loaded from the Hugging Face hub ({exc}); "
                "using the embedded synthetic GSM8K-style problems instead."
            )
            return synthetic_rows("synthetic", split, limit=limit, seed=seed)
    source = source.strip()
    if source.lower() == "gsm8k":
        source = HUB_ID
    if source == "synthetic" or source.startswith("synthetic:"):
        return synthetic_rows(source, split, limit=limit, seed=seed)
    path = Path(source).expanduser()
    if path.is_file():
        if path.suffix != ".jsonl":
            raise PackError(
                f"{path} is not a .jsonl file; GSM8K files are JSON lines with 'question' and 'answer'"
            )
        return jsonl_rows(path, path.stem, limit)
    if path.is_dir():
        if (path / f"{split}.jsonl").is_file():
            return jsonl_rows(path / f"{split}.jsonl", f"gsm8k-{split}", limit)
        if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
            return disk_rows(path, split, limit)
        return hub_rows(str(path), split, limit)
    if source.endswith(".jsonl") or source.startswith((".", "/", "~")):
        raise PackError(f"GSM8K source {source!r} does not exist")
    if source.count("/") != 1:
        raise PackError(
            f"unknown GSM8K source {source!r}; use 'auto', 'synthetic', a hub id like {HUB_ID!r}, "
            "a .jsonl file or a folder"
        )
    return hub_rows(source, split, limit)
