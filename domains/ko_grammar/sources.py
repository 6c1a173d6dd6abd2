"""Items: a seeded synthetic generator from the rule families, or local files in the contest's layout.

Rows on disk follow the 국립국어원 AI 말평 어문 규범 교정 layout — ``{"id", "input": {"question_type",
"question"}, "output": {"answer"}}`` — one object per line (``.jsonl``) or a JSON list (``.json``). None of the
contest's data ships here. Synthetic items are split into train/test by a hash of their rule entry, so the
two splits never share a sentence whatever the seed.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.domains.base import PackError
from evaluator.domains.ko_grammar.answer import format_answer, parse_answer
from evaluator.domains.ko_grammar.rules import FAMILIES, Entry

SPLITS = ("train", "test", "all")
TYPES = ("선택형", "교정형")
TEST_SHARE = 0.2
CHOICE = '"{sentence}" 가운데 올바른 것을 선택하고, 그 이유를 설명하세요.'
CORRECTION = '다음 문장에서 어문 규범에 부합하지 않는 부분을 찾아 고치고, 그 이유를 설명하세요.\n"{sentence}"'


@dataclass(frozen=True)
class Item:
    id: str
    question_type: str
    question: str
    answer: str
    family: str = ""


def _items_of(family: str, key: str, entry: Entry) -> list[Item]:
    right = entry.sentence.format(entry.right)
    wrong = entry.sentence.format(entry.wrong)
    answer = format_answer(right, entry.reason)
    out = []
    for j, options in enumerate((f"{{{entry.right}/{entry.wrong}}}", f"{{{entry.wrong}/{entry.right}}}")):
        question = CHOICE.format(sentence=entry.sentence.format(options))
        out.append(Item(f"{key}-choice{j}", "선택형", question, answer, family))
    out.append(Item(f"{key}-fix", "교정형", CORRECTION.format(sentence=wrong), answer, family))
    return out


def synthetic_pool() -> list[Item]:
    """Every item the rule families make, in a fixed order."""
    return [
        item
        for f, fam in enumerate(FAMILIES)
        for k, entry in enumerate(fam.entries)
        for item in _items_of(fam.name, f"r{f:02d}-{k}", entry)
    ]


def split_of(item_id: str) -> str:
    """train or test by a hash of the item's entry (``r03-1``): an entry's choice and fix items stay together."""
    group = item_id.rsplit("-", 1)[0]
    bucket = int(hashlib.sha256(group.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if bucket < TEST_SHARE else "train"


def synthetic(split: str, seed: int = 0) -> list[Item]:
    """The split's synthetic items, shuffled by ``seed``."""
    items = [it for it in synthetic_pool() if split == "all" or split_of(it.id) == split]
    random.Random(seed).shuffle(items)
    return items


def _field(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _item(obj: Any, where: str) -> Item:
    if not isinstance(obj, dict):
        raise PackError(f"{where}: not a JSON object")
    qtype, question = _field(obj, "input", "question_type"), _field(obj, "input", "question")
    answer = _field(obj, "output", "answer")
    if not isinstance(question, str) or not question.strip():
        raise PackError(f"{where}: no input.question")
    if not isinstance(qtype, str) or not qtype.strip():
        raise PackError(f"{where}: no input.question_type (선택형 or 교정형)")
    if not isinstance(answer, str) or not answer.strip():
        raise PackError(
            f"{where}: no output.answer to grade against (files without answers, like a contest test set, "
            "cannot be evaluated here)"
        )
    parsed = parse_answer(answer)
    if not parsed.ok:
        raise PackError(
            f'{where}: output.answer does not follow "문장"이/가 옳다. 이유 ({"; ".join(parsed.problems)})'
        )
    return Item(str(obj.get("id") or where), qtype.strip(), question, answer)


def _file_for(folder: Path, split: str) -> Path:
    found = sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".json") and p.stem.endswith(split))
    if len(found) != 1:
        names = ", ".join(p.name for p in found) or "none"
        raise PackError(f"{folder}: expected one *{split}.jsonl (or .json) file for split {split!r}, found {names}")
    return found[0]


def read_file(path: Path) -> list[Item]:
    """Items of one ``.jsonl`` (a JSON object per line) or ``.json`` (a list) file; a bad line is named."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PackError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from exc
        if not isinstance(doc, list):
            raise PackError(f"{path}: expected a JSON list of items")
        return [_item(obj, f"{path} item {i + 1}") for i, obj in enumerate(doc)]
    items = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PackError(f"{path} line {lineno}: not valid JSON ({exc.msg})") from exc
        items.append(_item(obj, f"{path} line {lineno}"))
    return items


def load_items(source: str | None, split: str, seed: int = 0) -> list[Item]:
    """``synthetic`` (default) or a file/folder in the contest layout."""
    if split not in SPLITS:
        raise PackError(f"ko-grammar has splits {', '.join(SPLITS)}, not {split!r}")
    if source in (None, "", "synthetic"):
        return synthetic(split, seed)
    path = Path(source)
    if not path.exists():
        raise PackError(f"ko-grammar data {source!r} is neither 'synthetic' nor an existing file or folder")
    items = read_file(_file_for(path, split) if path.is_dir() else path)
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise PackError(f"{path}: id {item.id!r} appears twice")
        seen.add(item.id)
    return items
