"""The standard ``json`` module's exact text and values, at orjson's speed where the two provably agree.

A batch of 15,000 reports is written as indented JSON and stored as compact JSON; Python's ``json``
encodes indented text in pure Python (most of the time of writing a batch) and parses at a fraction of
orjson's speed. orjson writes the same bytes except for how it spells some floats (below 1e-4: ``3e-05`` as
``0.00003``, ``1e-07`` as ``1e-7``) and some types, and parses the same values except integers of 19+ digits
beyond 64 bits (it returns a float) and the literals ``NaN``/``Infinity`` (it refuses them). So orjson's
text is used where it cannot differ; a text holding such a float has its floats respelled as ``json``
spells them (``repr`` of the same float: orjson writes the shortest digits that read back exactly), and the
standard module decides everything else: the text on disk and in the database is byte for byte what
``json`` writes (only a document ``json`` cannot encode at all, such as a plain ``Enum`` or a ``UUID``, may
be encoded instead of refused).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from evaluator.core.outputs import _json_default, dumps

_MARKS = (b"e-", b"e+", b"0.0000")
"""Where orjson can spell a float unlike Python's ``repr``: an exponent (``1e-7`` for ``1e-07``) and a value
below 1e-4 written out (``0.00003`` for ``3e-05``); elsewhere both write the same shortest digits."""
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*', re.DOTALL)
"""A JSON string (skipped whole, so digits inside text are never touched) or a number."""
_NUMBER_BYTES = frozenset(b"0123456789.eE+-")
"""The bytes a JSON number is made of."""


def _python_spelling(match: re.Match[bytes]) -> bytes:
    token = match.group()
    if token[0] == 0x22 or not (b"." in token or b"e" in token or b"E" in token):
        return token  # a string, or an integer (both modules write integers alike)
    return repr(float(token)).encode()  # orjson writes the shortest text of the float: float() is exact


def _respelled(out: bytes) -> bytes:
    """orjson's text with every float as ``json`` spells it (``float.__repr__``), strings untouched."""
    return _TOKEN.sub(_python_spelling, out)


def _marked_respelled(out: bytes) -> bytes:
    """:func:`_respelled` for a text whose only floats spelled otherwise hold a mark: each mark is found by a
    plain search and its number respelled in place (any float respelled is ``json``'s spelling, so one that
    needed none loses nothing). A mark is inside a string when an odd number of quotes stands before it (each
    ``\\"`` in a string is an escaped quote, unless a string holds an escaped backslash: such a text is
    tokenised whole instead)."""
    if b"\\\\" in out:
        return _respelled(out)
    spans: set[tuple[int, int]] = set()
    for mark in _MARKS:
        at = out.find(mark)
        while at >= 0:
            start, end = at, at + len(mark)
            while start and out[start - 1] in _NUMBER_BYTES:
                start -= 1
            while end < len(out) and out[end] in _NUMBER_BYTES:
                end += 1
            if not (out.count(b'"', 0, start) - out.count(b'\\"', 0, start)) % 2:  # not inside a string
                spans.add((start, end))
            at = out.find(mark, end)
    if not spans:
        return out
    parts: list[bytes] = []
    done = 0
    for start, end in sorted(spans):
        parts += (out[done:start], repr(float(out[start:end])).encode())
        done = end
    return b"".join([*parts, out[done:]])


def _marks_suffice() -> bool:
    """Whether this orjson spells floats unlike Python only where :data:`_MARKS` show, and every float of
    1e16 or more with ``e+`` (how :func:`_orjson_read` sees an integer beyond 64 bits that orjson read as a
    float). Checked once on import; any other orjson has every text respelled and read by ``json`` (slower,
    the same bytes and values)."""
    probes = [1e16, 1.2345e17, 9.3e18, 1.8446744073709552e19, 1.2345678901234568e29, 1e300, 1.7976931348623157e308,
              9999999999999998.0, 1e15, 123.456, 0.1, 0.0001, 9.99e-05, 3.9577073885828e-05, 1e-05, 1.5e-07, 5e-324]
    for x in probes + [-x for x in probes]:
        out = orjson.dumps(x)
        if (abs(x) >= 1e16 and b"e+" not in out) or (out != repr(x).encode() and not any(m in out for m in _MARKS)):
            return False
    return True


_MARKED = _marks_suffice()


def _as_python(out: bytes) -> bytes:
    if not _MARKED:
        return _respelled(out)
    if b"e-" in out or b"e+" in out or b"0.0000" in out:  # _MARKS, without a generator's cost per text
        return _marked_respelled(out)
    return out


_ENCODE = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def _orjson(doc: Any, option: int) -> bytes | None:
    try:
        out = orjson.dumps(doc, option=option, default=_json_default)
    except (TypeError, ValueError):
        return None
    return _as_python(out)


def dumps_indented(doc: Any) -> str:
    """:func:`~evaluator.core.outputs.dumps` ``(doc, indent=2)``, byte for byte (non-finite floats as null)."""
    out = _orjson(doc, _ENCODE | orjson.OPT_INDENT_2)
    return dumps(doc, indent=2) if out is None else out.decode("utf-8")


def _orjson_read(text: str) -> tuple[Any, bytes] | None:
    """orjson's parse of ``text`` and its compact text of it, where that parse is ``json``'s own; None where
    the standard reader must decide: orjson refuses the text (NaN, a lone surrogate, a syntax error: ``json``
    decides and words them), a float of 1e16 or more came out (``e+`` in orjson's text: perhaps an integer
    beyond 64 bits read as a float), or this orjson spells floats otherwise than checked on import."""
    if not _MARKED:
        return None
    try:
        doc = orjson.loads(text)
        out = orjson.dumps(doc)
    except (orjson.JSONDecodeError, TypeError):
        return None
    return None if b"e+" in out else (doc, out)


def loads(text: str) -> Any:
    """``json.loads(text)``: the same values, errors included (orjson only where it reads the same)."""
    read = _orjson_read(text)
    return json.loads(text) if read is None else read[0]


def loads_compact(text: str) -> tuple[Any, str]:
    """``(json.loads(text), json.dumps(that, ensure_ascii=False, separators=(",", ":")))``: a stored
    report's parsed value and the compact text the database keeps, both exactly as ``json`` gives them."""
    read = _orjson_read(text)
    if read is not None:
        return read[0], _as_python(read[1]).decode("utf-8")
    doc = json.loads(text)
    return doc, json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def dumps_compact(doc: Any) -> str:
    """``json.dumps(doc, ensure_ascii=False, separators=(",", ":"))``, byte for byte (``NaN`` stays ``NaN``:
    orjson writes null for it, so any text of orjson's that holds a null is the standard encoder's to write)."""
    try:
        out = orjson.dumps(doc, option=_ENCODE)
    except TypeError:
        out = None
    if out is None or b"null" in out:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return _as_python(out).decode("utf-8")


_SEPARATORS_AND_QUOTES = bytes(b for b in range(256) if b not in b'",:')


def _separator_in_a_string(out: bytes) -> bool:
    """Whether a ``,`` or ``:`` stands inside a string of ``out`` (a text without escapes): with everything
    but quotes and separators deleted, a string without one is ``""`` (two strings always have a
    separator between them), so any quote left after removing those pairs belongs to one that has."""
    return b'"' in out.translate(None, _SEPARATORS_AND_QUOTES).replace(b'""', b"")


def dumps_default(doc: Any) -> str:
    """``json.dumps(doc)`` (ASCII, ``", "`` and ``": "``), byte for byte: the text of a database JSON column
    (SQLAlchemy's serialiser; 15,000 funds' metrics a batch). orjson's compact text where it is plain
    ASCII, escapes nothing and has no separator inside a string, with the spaces put in; where it holds a
    ``null``, only if it reads back as the document (a NaN or an infinity, which orjson writes as ``null``,
    does not); the standard encoder otherwise (which also raises what ``json`` raises)."""
    try:
        out = orjson.dumps(doc, option=_ENCODE)
    except TypeError:
        out = None
    if (
        out is None
        or not out.isascii()
        or b"\\" in out
        or _separator_in_a_string(out)
        or (b"null" in out and orjson.loads(out) != doc)
    ):
        return json.dumps(doc)
    return _as_python(out).replace(b",", b", ").replace(b":", b": ").decode("ascii")
