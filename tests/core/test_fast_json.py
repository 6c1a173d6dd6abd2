"""core/fast_json: the standard ``json`` module's exact text and values on varied, hostile documents."""

from __future__ import annotations

import datetime as dt
import enum
import json
from pathlib import Path

import numpy as np
import pytest

from evaluator.core import fast_json
from evaluator.core.fast_json import dumps_compact, dumps_default, dumps_indented, loads, loads_compact
from evaluator.core.outputs import dumps


class Kind(str, enum.Enum):
    A = "a"


def _floats() -> list[float]:
    rng = np.random.default_rng(5)
    return [
        *rng.normal(0, 1, 400).tolist(),
        *(10.0 ** rng.uniform(-12, 22, 600) * rng.choice([-1, 1], 600)).tolist(),
        *np.round(rng.normal(0, 100, 200), 4).tolist(),
        0.0001, 9.9e-05, 1.5e-05, 1e-07, 1e16, 1.2345e16, 9999999999999998.0, 123456789012345678.0, -0.0, 5e-324,
        1.7976931348623157e308, 0.1, 1.0, 100.0,
    ]


DOCS = [
    {"등급": 1, "x": _floats(), "empty": {}, "none": [], "n": None, "t": True, "f": False},
    {"text": "탭\t줄\n제어\x01\x1f\x7f따옴\"역\\ \u2028\u2029 é 😀", "nan": float("nan"), "inf": [float("-inf")]},
    {"np": np.float64(0.1), "np32": np.float32(0.1), "i": np.int64(7), "big": 2**70, "neg": -(10**17)},
    {1: "int key", "s": {3, 1, 2}, "d": dt.date(2025, 6, 30), "p": Path("a/b"), "tup": (1, 2.5)},
    {"e": Kind.A, "hash": "3e5a0000e1", "num_text": ": 1e5, 0.00001", "nested": [[{"a": [[]]}]]},
    {"ints": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 10**18, -(10**18)], "when": dt.datetime(2025, 1, 2, 3, 4, 5)},
    [1, "two", None, [3.5, {"k": -0.00012}]],
    "just a string",
    12.5,
]


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
def test_indented_text_is_byte_identical_to_the_standard_encoder(doc: object) -> None:
    assert dumps_indented(doc) == dumps(doc, indent=2)


def test_a_document_json_cannot_encode_is_still_refused() -> None:
    with pytest.raises(TypeError):
        dumps_indented({"x": object()})
    with pytest.raises(TypeError):
        dumps_indented({"x": {1, "a"}})  # a set json cannot sort


TEXTS = [
    json.dumps(doc, default=str) for doc in DOCS if not isinstance(doc, dict) or 1 not in doc
] + [
    '{"a": 1, "b": 2, "a": 3}',  # a repeated key: the last value, in the first key's place
    '{"big": 123456789012345678901234567890, "neg": -9999999999999999999, "edge": 18446744073709551616}',
    '{"x": NaN, "y": -Infinity, "z": 1E400}',
    '{"deep": 1e-400, "f": 1.0, "g": 10, "h": -0, "i": 0.1e1}',
    '["\\ud800 lone surrogate", "\\u00e9\\u0000"]',
    '{"k": "1234567890123456789012 inside a string"}',
    "  [1, 2]  ",
    "123456789012345678901234567890",  # a top-level integer beyond 64 bits
    "-9999999999999999999",
    "[-9223372036854775809, 9223372036854775808]",
]
BAD = ['{"a": 1,}', "{'a': 1}", '{"a": 1} x', "", "[1, 2", '{"a": tru}', "\ufeff{}"]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_values_and_compact_text_are_the_standard_modules(text: str) -> None:
    expected = json.loads(text)
    got = loads(text)
    assert repr(got) == repr(expected)  # repr: types too (an int stays an int, -0.0 stays -0.0)
    doc, compact = loads_compact(text)
    assert repr(doc) == repr(expected)
    assert compact == json.dumps(expected, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("text", BAD)
def test_bad_text_raises_the_standard_error_and_message(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    for parse in (loads, loads_compact):
        with pytest.raises(json.JSONDecodeError) as got:
            parse(text)
        assert str(got.value) == str(expected.value)


COMPACT = [
    _floats(), [1000.0, None, 1001.25, float("nan")], [float("inf"), 1.5], {"fund_code": "KR1", "days": [0, 3, 10]},
    {"x": np.float64(0.25), "y": [np.float64(1e-7)]}, "탭\t\x01\x7f 😀", [2**70, -(2**63)], {"k": (1, 2.5)},
]


@pytest.mark.parametrize("doc", COMPACT, ids=range(len(COMPACT)))
def test_compact_text_is_byte_identical_to_the_standard_encoder(doc: object) -> None:
    assert dumps_compact(doc) == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def test_compact_refuses_what_json_refuses() -> None:
    for doc in ({"d": dt.date(2025, 1, 1)}, {1: object()}, [np.int64(3)]):
        with pytest.raises(TypeError):
            json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        with pytest.raises(TypeError):
            dumps_compact(doc)


def _spread_floats(n: int) -> list[float]:
    """Floats of every magnitude: random bit patterns (all exponents), decimals of 1-17 digits, tiny values
    around orjson's switch from digits to an exponent, and values near the 1e16 and 1e-4 borders."""
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64)
    out = [float(x) for x in bits if np.isfinite(x)]
    out += [float(f"{m}e{e}") for m, e in zip(rng.integers(1, 10**17, n), rng.integers(-30, 30, n), strict=True)]
    out += (rng.uniform(1, 10, n) * 10.0 ** rng.integers(-9, -3, n)).tolist()
    out += [np.nextafter(b, d) for b in (1e16, 1e-4, 1e-5) for d in (0.0, np.inf)]
    return out + [-x for x in out[:n]]


def test_every_float_is_spelled_as_json_spells_it() -> None:
    floats = _spread_floats(20_000)
    for chunk in range(0, len(floats), 500):
        part = floats[chunk : chunk + 500]
        assert dumps_compact(part) == json.dumps(part, ensure_ascii=False, separators=(",", ":"))
        assert dumps_indented({"v": part}) == dumps({"v": part}, indent=2)
        text = json.dumps({"v": part})
        doc, compact = loads_compact(text)
        assert repr(doc) == repr(json.loads(text))
        assert compact == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        assert compact == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


NUMBERS_IN_TEXT = [
    {"note": 'a "quoted" 0.00003 and 1e-07, then 3e-05', "v": 3e-05, "w": [1e-07, "0.0000", 2.5e-06]},
    {"k\\0.00001": 1e-05, "path": "C:\\\\1e-5\\\\", "esc": "\\\"0.00009\\\"", "v": 9e-05},
    {"한글 0.00001e-5": -7.334318694639588e-06, "e-": "e+", "0.0000": [0.0001, 0.00009999]},
]


@pytest.mark.parametrize("doc", NUMBERS_IN_TEXT, ids=range(len(NUMBERS_IN_TEXT)))
def test_numbers_inside_strings_are_never_respelled(doc: object) -> None:
    assert dumps_indented(doc) == dumps(doc, indent=2)
    assert dumps_compact(doc) == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    text = json.dumps(doc, ensure_ascii=False)
    assert loads_compact(text) == (json.loads(text), json.dumps(doc, ensure_ascii=False, separators=(",", ":")))


def test_the_installed_orjson_takes_the_fast_path() -> None:
    """The speed this module exists for: floats differ only where the marks show (else every text is respelled)."""
    assert fast_json._MARKED


def test_an_orjson_that_spells_otherwise_still_gives_json_s_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_json, "_MARKED", False)
    test_every_float_is_spelled_as_json_spells_it()
    for doc in DOCS:
        assert dumps_indented(doc) == dumps(doc, indent=2)
    for text in TEXTS:
        assert repr(loads(text)) == repr(json.loads(text))
        doc, compact = loads_compact(text)
        assert repr(doc) == repr(json.loads(text))
        assert compact == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


DEFAULT_DOCS = [
    *DOCS[:3], *DOCS[5:], *NUMBERS_IN_TEXT, *COMPACT,
    {"1y": {"annualized_return": -0.026761489992844334, "beta": 1.0, "alpha": 3e-05, "n": 250}, "10y": None},
    {"1y": {"x": float("nan")}, "10y": None}, {"x": [None, float("inf")]}, {"nullable": 1.5},
    {"a,b": 1, "c": "d:e"}, {"k": "plain", "l": ["x", "y"]}, {"k": "é"}, {"k": "tab\t"}, {"k": 'q"uote'},
    {"np": np.float64(0.5)}, {"big": 2**70}, {1: "int key"}, {"t": (1, 2.5e-07)}, {"b": [True, False, None]},
    [], {}, "a:b", None, 1e-07, 2**63 - 1, {"nested": [[{"a": [[]]}]], "e-": "e+"},
]


@pytest.mark.parametrize("doc", DEFAULT_DOCS, ids=range(len(DEFAULT_DOCS)))
def test_default_text_is_byte_identical_to_json_dumps(doc: object) -> None:
    try:
        expected = json.dumps(doc)
    except TypeError:
        with pytest.raises(TypeError):
            dumps_default(doc)
        return
    assert dumps_default(doc) == expected


def test_default_text_of_every_float_is_json_s() -> None:
    floats = _spread_floats(5_000)
    for chunk in range(0, len(floats), 250):
        part = {"v": floats[chunk : chunk + 250], "gap": None}
        assert dumps_default(part) == json.dumps(part)


def test_the_database_stores_json_columns_with_this_serialiser(tmp_path: Path) -> None:
    from sqlalchemy import JSON, Column, Integer, MetaData, Table, insert, select, text

    from evaluator.app.storage.database import make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'j.db'}")
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("doc", JSON))
    table.metadata.create_all(engine)
    docs = [{"1y": {"r": 3e-05, "s": -0.0267}, "10y": None}, {"x": float("nan")}, {"k": "한글, 값: 1"}]
    with engine.begin() as conn:
        conn.execute(insert(table), [{"doc": d} for d in docs])
        stored = [row[0] for row in conn.execute(text("SELECT doc FROM t ORDER BY id"))]
        assert conn.execute(select(table.c.doc).where(table.c.id == 1)).scalar() == docs[0]
    assert stored == [json.dumps(d) for d in docs]
    engine.dispose()
