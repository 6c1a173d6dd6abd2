"""Share-class families from fund names, for META without a 대표펀드코드 (or equivalent) column.

Korean share classes are one portfolio sold with different fees; their names differ only by a class
suffix: "…증권투자신탁[주식] A", "… C", "… C-e", "…(주식)종류A-e", "… Class C-P", "…(A)", "…Ce".
Counted as separate funds they inflate a 운용사's rating (one fund in three classes is three portfolios)
and the 1/k peer weights are lost. So classes whose names, with the class suffix taken off, are equal
and whose 운용사 and 유형 are equal are one family; a name without a suffix joins the family of its
base. Only the *end* of a name is read, so "…1호" and "…2호", "(H)" and "(UH)" (hedged and unhedged
funds), "[주식]" and "[채권]" stay apart. A family with one class is its own portfolio.

Written here rather than taken from a library: no package parses Korean share-class names.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.loaders import Universe

FAMILY = "family_code"
INFERRED = "family_inferred"
"""A META column the inference adds: True where the fund's family was inferred from its name."""

_LETTER = r"(?:[ACDEFGIJKOPRSTW])"
_MOD = r"(?:-?(?:Pe|PE|P|e|E|I|F|W|G|R|S|T|J|O|\d))"
_CLASS = rf"{_LETTER}\d?{_MOD}{{0,3}}"
"""A class token: a letter (not H: hedged funds are separate), an optional digit and up to three
modifiers: A, Ae, A-e, C1, C-e, C-P, C-Pe, C-P2e, CPe, S-P, S-T, I, W, F."""
_PREFIX = r"(?:종류형?|클래스|Class|CLASS|class)\s*"
_SUFFIX = re.compile(
    rf"(?:"
    rf"[\s_\-]*[(\[]\s*(?:{_PREFIX})?{_CLASS}\s*(?:클래스|class)?[)\]]"  # (A), [C-e], (종류A)
    rf"|[\s_\-]*{_PREFIX}{_CLASS}"  # 종류A, Class C-e, 클래스A
    rf"|(?<=[\s)\]_\-가-힣0-9]){_CLASS}"  # bare after a space, a bracket, Hangul or a number: " A", ")C-e", "신탁Ce"
    rf")\s*$"
)


def base_name(name: str) -> str:
    """The name without its class suffix (fullwidth letters and spaces normalised)."""
    text = unicodedata.normalize("NFKC", str(name)).strip()
    text = re.sub(r"\s+", " ", text)
    for _ in range(2):  # "…(주식) 종류A (C-e)" is rare; two passes at most
        stripped = _SUFFIX.sub("", text).rstrip(" -_")
        if stripped == text or not stripped:
            break
        text = stripped
    return text


def infer_families(
    codes: list[str], names: list[str | None], companies: list[str | None], types: list[str | None]
) -> tuple[np.ndarray, int]:
    """Per fund its family (the smallest fund code of the family; its own code alone), and how many
    families of two or more classes were found."""
    keys = [
        (str(c or ""), str(t or ""), base_name(n)) if n else None
        for n, c, t in zip(names, companies, types, strict=True)
    ]
    members: dict[tuple[str, str, str], list[int]] = {}
    for i, key in enumerate(keys):
        if key is not None:
            members.setdefault(key, []).append(i)
    out = np.array(codes, dtype=object)
    families = 0
    for idx in members.values():
        if len(idx) > 1:
            families += 1
            head = min(codes[i] for i in idx)
            for i in idx:
                out[i] = head
    return out, families


def with_inferred_families(meta: pd.DataFrame | None) -> tuple[pd.DataFrame | None, int]:
    """META with a ``family_code`` column inferred from names when it has none, and the number of families
    found (0: META unchanged, also when it already names families or has no fund names)."""
    if meta is None or FAMILY in meta.columns or "fund_name" not in meta.columns or meta.empty:
        return meta, 0
    codes = [str(c) for c in meta.index]

    def column(name: str) -> list[str | None]:
        if name not in meta.columns:
            return [None] * len(codes)
        return [None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in meta[name]]

    families, count = infer_families(codes, column("fund_name"), column("company"), column("type"))
    if count == 0:
        return meta, 0
    out = meta.copy()
    out[FAMILY] = families
    out[INFERRED] = True
    return out, count


def infer_classes(universe: Universe, enabled: bool = True) -> Universe:
    """The universe with share-class families inferred from its fund names when META names none (said in
    its warnings, which reach the console and ``summary.json``); unchanged when ``enabled`` is False."""
    if not enabled:
        return universe
    meta, count = with_inferred_families(universe.meta)
    if count == 0:
        return universe
    classes = int(pd.Series(meta[FAMILY]).duplicated(keep=False).sum())
    note = (
        f"META has no 대표펀드코드 (share-class family) column: {count} share-class families ({classes} classes) "
        "were inferred from fund names that differ only by a class suffix (A, C, C-e, 종류A, Class A, …); "
        "each class counts 1/k in the peer rating scale and one portfolio for its 운용사 "
        "(--no-class-inference turns this off)"
    )
    return replace(universe, meta=meta, warnings=[*universe.warnings, note])
