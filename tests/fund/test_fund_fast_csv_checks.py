"""The long fast path's shortcuts against the plain checks they replace: the encoding decided from the first
line when the body is ASCII, and each fund's date order checked in place when its rows are together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluator.domains.fund.data.fast_csv import _each_fund_rising, _encoding
from evaluator.domains.fund.data.readers import DataError, decode

HEADER_UTF8 = "기준일자,펀드코드,기준가격\n".encode()
HEADER_CP949 = "기준일자,펀드코드,기준가격\n".encode("cp949")
BODY = b"2025-01-02,KR1,1000.5\r\n2025-01-03,KR1,1001\n"
RAWS = [
    HEADER_UTF8 + BODY, b"\xef\xbb\xbf" + HEADER_UTF8 + BODY, HEADER_CP949 + BODY,
    HEADER_UTF8 + "2025-01-02,한글펀드,1\n".encode(), HEADER_UTF8 + "2025-01-02,한글펀드,1\n".encode("cp949"),
    HEADER_CP949 + "2025-01-02,한글,1\n".encode(), b"\xff\xfe\xfa" + b"\n" + BODY, b"\xff\xfe\xfa" + BODY,
    HEADER_UTF8[:-1], b"", b"\n", b"date,code,nav\n" + BODY, HEADER_UTF8 + b"\x80\n", b"a\xc3\n\xa9b\n",
]


@pytest.mark.parametrize("raw", RAWS, ids=range(len(RAWS)))
def test_encoding_is_the_general_readers(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "nav.csv"
    path.write_bytes(raw)
    try:
        expected = decode(raw, "DATA x")[1]
    except DataError as exc:
        with pytest.raises(DataError) as got:
            _encoding(path, "DATA x")
        assert str(got.value) == str(exc)
    else:
        encoding, first, spaced = _encoding(path, "DATA x")
        assert encoding == expected
        assert first == raw.split(b"\n")[0]
        assert spaced == (b" " in raw or b"\t" in raw)


def test_encoding_reads_a_body_longer_than_one_slice(tmp_path: Path) -> None:
    """The body is checked slice by slice: a Korean byte in a later slice still sends the file to the
    whole-file decision."""
    body = b"2025-01-02,KR1,1000.5\n" * 400_000  # ~9 MB: more than one 8 MiB slice
    for tail, expected in ((b"", "utf-8"), ("2025-01-03,한글,1\n".encode("cp949"), "cp949")):
        path = tmp_path / "nav.csv"
        path.write_bytes(b"date,code,nav\n" + body + tail)  # an ASCII first line would say utf-8 alone
        assert _encoding(path, "DATA x")[0] == expected


def _reference(code_id: np.ndarray, day_id: np.ndarray) -> bool:
    order = np.argsort(code_id, kind="stable")
    same = code_id[order][1:] == code_id[order][:-1]
    return not (same & (day_id[order][1:] <= day_id[order][:-1])).any()


def test_fund_date_order_check_matches_the_sort_on_every_layout() -> None:
    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for trial in range(400):
        funds, days = int(rng.integers(1, 6)), int(rng.integers(1, 7))
        grid = [(f, d) for f in range(funds) for d in range(days) if rng.random() < 0.8] or [(0, 0)]
        kind = trial % 4
        if kind == 1:  # date-major, as some exports are
            grid.sort(key=lambda fd: (fd[1], fd[0]))
        elif kind == 2:  # shuffled
            grid = [grid[i] for i in rng.permutation(len(grid))]
        elif kind == 3 and len(grid) > 1:  # fund blocks with one repeated or swapped date
            i = int(rng.integers(0, len(grid) - 1))
            grid[i + 1] = (grid[i][0], grid[i][1]) if rng.random() < 0.5 else grid[i + 1]
            grid[i], grid[i + 1] = (grid[i + 1], grid[i]) if rng.random() < 0.5 else (grid[i], grid[i + 1])
        code_id = np.array([f for f, _ in grid], dtype=np.int64)
        day_id = np.array([d for _, d in grid], dtype=np.int64)
        _, code_id = np.unique(code_id, return_inverse=True)  # every category used, as pandas gives them
        expected = _reference(code_id, day_id)
        assert _each_fund_rising(code_id, day_id, int(code_id.max()) + 1) == expected, grid
        seen[expected] += 1
    assert seen[True] > 50 and seen[False] > 50  # both answers were exercised
