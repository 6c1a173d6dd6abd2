"""Name → domain pack. Packs are imported lazily so the trainer and harness never import one by name."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from evaluator.domains.base import DomainPack, PackError

_PACKS: dict[str, str] = {
    "gsm8k": "evaluator.domains.gsm8k.pack:GSM8KPack",
    "fund": "evaluator.domains.fund.pack:FundPack",
    "ko-grammar": "evaluator.domains.ko_grammar.pack:KoGrammarPack",
}


DEFAULT_DOMAIN = "gsm8k"
"""The pack a run config uses when it names none."""


def register(name: str, target: str) -> None:
    """Register a pack by ``"module.path:ClassName"`` (used by plug-ins and tests)."""
    _PACKS[name] = target
    get_pack.cache_clear()


def pack_names() -> list[str]:
    return sorted(_PACKS)


def pack_cli_modules() -> list[Any]:
    """Each registered pack's light ``cli`` module (its commands and metric options), where it has one.

    Imported without the pack itself, so the command line can build its flags quickly at start-up.
    """
    found = []
    for name in pack_names():
        package = _PACKS[name].partition(":")[0].rpartition(".")[0]
        if package and find_spec(f"{package}.cli") is not None:  # a top-level plug-in module has no package
            found.append(import_module(f"{package}.cli"))
    return found


@cache
def get_pack(name: str) -> DomainPack:
    if name not in _PACKS:
        raise PackError(f"unknown domain {name!r}; known domains: {', '.join(pack_names())}")
    module_name, _, cls_name = _PACKS[name].partition(":")
    cls = getattr(import_module(module_name), cls_name)
    pack = cls()
    pack.check_contract()  # a rubric that forgets a reward fails here, not as a silent weight in training
    return pack


def tokenizer_corpus(limit: int = 400) -> list[str]:
    """Every registered pack's :meth:`~DomainPack.tokenizer_corpus`, in name order (for the tiny tokenizer)."""
    texts: list[str] = []
    for name in pack_names():
        texts.extend(get_pack(name).tokenizer_corpus(limit))
    return texts


def corpus_fingerprint(texts: list[str]) -> str:
    """12 hex digits of the corpus: part of the tiny model's cache key, so a new or changed pack rebuilds it."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x1e")
    return digest.hexdigest()[:12]


def unregister(name: str) -> None:
    """Remove a registered pack (tests and plug-in reloads)."""
    _PACKS.pop(name, None)
    get_pack.cache_clear()
