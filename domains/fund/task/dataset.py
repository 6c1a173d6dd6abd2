"""The fund GRPO task's data: a fund universe → the engine → one prompt row per rated fund, split by fund.

Sources (``--data``):

* ``None``, ``sample`` or ``synthetic``: the built-in seeded universe (300 funds, 6 years); options after
  ``?``: ``sample?funds=120&seed=7&years=6&risk_free=0.03&as_of=2025-06-30``.
* A NAV file (the same loaders as ``evaluator fund evaluate``): ``navs.csv`` with optional
  ``?benchmark=PATH&meta=PATH&risk_free=0.03&as_of=2025-06-30&rubric=PATH&outliers=error&type_column=소유형``
  (a fund with a NAV typo is an ``error`` by default, so it never becomes a training row). Without ``benchmark``/``meta``,
  the files ``<stem>.benchmark<ext>`` and ``<stem>.meta<ext>`` beside the NAV file are used when they
  exist (``evaluator fund generate-sample`` writes the benchmark that way).

Only ``ok`` funds become rows. Splits are by fund: a fund's code hashes (SHA-256) to a bucket 0–99,
buckets below 80 are ``train`` and the rest ``test`` — stable across runs, machines and universe sizes,
so no fund is ever in both. ``all`` gives every rated fund.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from evaluator.domains.base import PackError
from evaluator.domains.fund.data import load_universe, parse_as_of, sample_universe
from evaluator.domains.fund.engine import Evaluation, evaluate_loaded
from evaluator.domains.fund.rubric import resolve_rubric
from evaluator.domains.fund.task.facts import facts_json, universe_facts
from evaluator.domains.fund.task.prompts import build_messages
from evaluator.domains.fund.types import DataError
from evaluator.methodology.rubric import RubricError

SPLITS = ("train", "test", "all")
TRAIN_SHARE = 80
SAMPLE_NAMES = ("sample", "synthetic")
SAMPLE_OPTIONS = {"funds", "seed", "years", "risk_free", "as_of", "rubric"}
FILE_OPTIONS = {"benchmark", "meta", "risk_free", "as_of", "rubric", "outliers", "type_column"}


@dataclass(frozen=True)
class Source:
    kind: str
    """``sample`` or ``file``."""
    path: str | None
    options: tuple[tuple[str, str], ...]

    def option(self, name: str, default: str | None = None) -> str | None:
        return dict(self.options).get(name, default)


def parse_source(source: str | None) -> Source:
    """Read a ``--data`` value (see the module docstring); PackError for unknown options or missing files."""
    text = (source or "sample").strip()
    base, _, query = text.partition("?")
    try:
        options = tuple(parse_qsl(query, keep_blank_values=False, strict_parsing=bool(query)))
    except ValueError as exc:
        raise PackError(f"fund data options {query!r} are not NAME=VALUE pairs joined by '&'") from exc
    is_sample = base.lower() in SAMPLE_NAMES
    allowed = SAMPLE_OPTIONS if is_sample else FILE_OPTIONS
    unknown = sorted({k for k, _ in options} - allowed)
    if unknown:
        raise PackError(
            f"unknown fund data option(s) {', '.join(unknown)}; for {'the sample' if is_sample else 'a NAV file'} "
            f"use {', '.join(sorted(allowed))}"
        )
    if is_sample:
        return Source("sample", None, options)
    if not Path(base).is_file():
        raise PackError(f"fund data {base!r} is neither 'sample' nor an existing NAV file (CSV or Parquet)")
    return Source("file", base, options)


def _sibling(path: Path, tag: str) -> str | None:
    candidate = path.with_name(f"{path.stem}.{tag}{path.suffix}")
    return str(candidate) if candidate.is_file() else None


def _int_option(source: Source, name: str, default: int) -> int:
    value = source.option(name)
    try:
        return int(value) if value is not None else default
    except ValueError:
        raise PackError(f"fund data option {name}={value!r} must be a whole number") from None


def load_evaluation(source: Source) -> Evaluation:
    """Run the engine on the source's universe (DataError/RubricError become PackError)."""
    try:
        rubric = resolve_rubric(source.option("rubric"))
        risk_free = source.option("risk_free", "0") or "0"
        if source.kind == "sample":
            universe = sample_universe(
                funds=_int_option(source, "funds", 300),
                years=_int_option(source, "years", 6),
                seed=_int_option(source, "seed", 7),
                risk_free=risk_free,
            )
        else:
            assert source.path is not None
            nav = Path(source.path)
            universe = load_universe(
                nav,
                meta=source.option("meta") or _sibling(nav, "meta"),
                benchmark=source.option("benchmark") or _sibling(nav, "benchmark"),
                risk_free=risk_free,
                type_column=source.option("type_column"),
            )
        as_of = source.option("as_of")
        day = parse_as_of(as_of, "as_of") if as_of else None
        # The same path as `fund evaluate`: adjustment columns and the market calendar are applied, so a
        # settling fund is graded on total returns here too, not marked unadjusted.
        return evaluate_loaded(
            universe,
            rubric,
            as_of=day,
            outliers=source.option("outliers", "error") or "error",
        )
    except (DataError, RubricError, ValueError) as exc:
        raise PackError(f"fund data {source.path or 'sample'}: {exc}") from exc


def split_of(fund_code: str) -> str:
    """``train`` or ``test`` for a fund, from a hash of its code alone."""
    bucket = int(hashlib.sha256(fund_code.encode("utf-8")).hexdigest()[:8], 16) % 100
    return "train" if bucket < TRAIN_SHARE else "test"


def task_rows(evaluation: Evaluation, style: str = "json") -> list[dict[str, Any]]:
    """One row per rated fund: prompt, gold grade/score and the facts the rewards check."""
    rows = []
    for code, facts in universe_facts(evaluation).items():
        rows.append(
            {
                "id": code,
                "prompt": build_messages(facts, evaluation.rubric),
                "style": style,
                "fund_code": code,
                "fund_name": facts["fund_name"] or "",
                "fund_type": facts["type"] or "",
                "grade": int(facts["grade"]),
                "answer": str(facts["grade"]),
                "score": float(facts["score"]),
                "peer_percentile": float(facts["peer_percentile"]),
                "facts": facts_json(facts),
            }
        )
    return rows


@lru_cache(maxsize=4)
def _rows_for(source: str | None) -> tuple[tuple[str, dict[str, Any]], ...]:
    rows = task_rows(load_evaluation(parse_source(source)))
    return tuple((split_of(r["fund_code"]), r) for r in rows)


def load_rows(source: str | None, split: str) -> list[dict[str, Any]]:
    """The rows of one split (fresh dicts each call; the engine runs once per source)."""
    if split not in SPLITS:
        raise PackError(f"the fund task has splits {', '.join(SPLITS)}, not {split!r}")
    rows = [dict(r) for s, r in _rows_for(source) if split == "all" or s == split]
    if not rows:
        raise PackError(f"fund data {source or 'sample'} has no rated funds in the {split} split")
    return rows
