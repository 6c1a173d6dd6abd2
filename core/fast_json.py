"""The standard ``json`` module's exact text and values, at orjson's speed where the two provably agree.

A batch of 15,000 reports is written as indented JSON and stored as compact JSON; Python's ``json``
encodes indented text in pure Python (most of the time of writing a batch) and parses at a fraction of
orjson's speed. orjson writes the same bytes except for how it spells some floats (an exponent, a value
below 1e-4, 17+ integer digits) and some types, and parses the same values except integers of 19+ digits beyond 64 bits
(it returns a float) and the literals ``NaN``/``Infinity`` (it refuses them). So every function here uses
orjson only where its result cannot differ, checked on its output or input, and the standard module
otherwise: the text on disk and in the database is byte for byte what ``json`` writes (only a document
``json`` cannot encode at all, such as a plain ``Enum`` or a ``UUID``, may be encoded instead of refused).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from evaluator.core.outputs import _json_default, dumps


def _table() -> bytes:
    table = bytearray(b"x" * 256)  # any other byte
    for c in b"0123456789":
        table[c] = ord("0")
    for c in b" \t\r\n:,[-":  # what can stand before a number's digits
        table[c] = ord(" ")
    table[ord(".")] = ord(".")
    table[ord("e")] = table[ord("E")] = ord("e")
    return bytes(table)


_SHAPE = _table()
"""Each byte as its class (digit 0, separator space, dot, exponent e, other x): one C pass over the text
makes the number checks plain substring searches (a regular expression took seconds a batch)."""
_RISKY = (b"0e", b" " + b"0" * 17)
"""Numbers orjson spells unlike Python's ``json``: an exponent, 17+ integer digits (and, in the text
itself, ``0.0000``: a value below 1e-4)."""
_LONG_INTEGER = b" " + b"0" * 19
"""An integer of 19+ digits: maybe beyond 64 bits (or below -2**63), which orjson reads as a float."""


def _risky(out: bytes) -> bool:
    if b"0.0000" in out:
        return True
    shape = out.translate(_SHAPE)
    return _RISKY[0] in shape or _RISKY[1] in shape


def _plain(text: str) -> bytes | None:
    """``text`` as UTF-8 for orjson, or None when it may hold an integer orjson reads unlike json."""
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate: orjson refuses it, json decides
    shape = data.translate(_SHAPE)
    return None if _LONG_INTEGER in shape or shape.startswith(_LONG_INTEGER[1:]) else data


_ENCODE = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def _orjson(doc: Any, option: int) -> bytes | None:
    try:
        out = orjson.dumps(doc, option=option, default=_json_default)
    except (TypeError, ValueError):
        return None
    return None if _risky(out) else out


def dumps_indented(doc: Any) -> str:
    """:func:`~evaluator.core.outputs.dumps` ``(doc, indent=2)``, byte for byte (non-finite floats as null)."""
    out = _orjson(doc, _ENCODE | orjson.OPT_INDENT_2)
    return dumps(doc, indent=2) if out is None else out.decode("utf-8")


def loads(text: str) -> Any:
    """``json.loads(text)``: the same values, errors included (orjson only where it reads the same)."""
    data = _plain(text)
    if data is not None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # NaN, a lone surrogate, a syntax error: the standard reader decides and words it
    return json.loads(text)


def loads_compact(text: str) -> tuple[Any, str]:
    """``(json.loads(text), json.dumps(that, ensure_ascii=False, separators=(",", ":")))``: a stored
    report's parsed value and the compact text the database keeps, both exactly as ``json`` gives them."""
    data = _plain(text)
    if data is not None:
        try:
            doc = orjson.loads(data)  # parsed by orjson: no NaN/infinity, no 65-bit integers, str keys
        except orjson.JSONDecodeError:
            pass
        else:
            out = _orjson(doc, 0)
            if out is not None:
                return doc, out.decode("utf-8")
            return doc, json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    doc = json.loads(text)
    return doc, json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def dumps_compact(doc: Any) -> str:
    """``json.dumps(doc, ensure_ascii=False, separators=(",", ":"))``, byte for byte (``NaN`` stays ``NaN``:
    orjson writes null for it, so any text of orjson's that holds a null is the standard encoder's to write)."""
    try:
        out = orjson.dumps(doc, option=orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                           | orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:
        out = None
    if out is None or b"null" in out or _risky(out):
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return out.decode("utf-8")
