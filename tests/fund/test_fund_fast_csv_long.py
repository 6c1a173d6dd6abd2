"""The long CSV fast path on the code and date spellings vendors use, and on files big enough for pandas'
parallel reader: each file read with the fast path and with it switched off must give the same matrix bit for
bit, the same row metadata, warnings and source info (or the same refusal).

The fast path lets pandas infer the code and date columns (text on the usual file, and 4× faster than asking
for text); a column inferred as numbers or booleans must be read again as text, or codes such as ``000123``
would lose their zeros. Files over 5 MB are split across threads by pandas: the rows must come back whole
and in file order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_fund_fast_csv import _assert_same, _load_both

from evaluator.domains.fund.data.fast_csv import csv_head, read_long_csv

DATES = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"]


def _file(codes: list[str], dates: list[str] = DATES, *, order: str = "fund", header: str = "기준일자,펀드코드,기준가격",
          seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    rows = [(d, c, f"{1000 * (1 + rng.normal(0, 0.02)):.{int(rng.integers(0, 5))}f}") for c in codes for d in dates]
    if order == "date":
        rows.sort(key=lambda r: dates.index(r[0]))
    elif order == "shuffled":
        rows = [rows[i] for i in rng.permutation(len(rows))]
    return header + "\n" + "".join(f"{d},{c},{p}\n" for d, c, p in rows)


FAST = {
    "digit_codes_with_leading_zeros": _file(["000123", "001234", "123456"]),
    "digit_codes_date_major": _file(["000123", "9", "07"], order="date"),
    "compact_digit_dates": _file(["KR5101", "KR5102"], dates=[d.replace("-", "") for d in DATES]),
    "digit_codes_and_digit_dates": _file(["0001", "0002"], dates=[d.replace("-", "") for d in DATES], order="date"),
    "excel_serial_dates": _file(["A1", "B2"], dates=["45293", "45294", "45295", "45296", "45299"]),
    "slash_and_dot_dates": _file(["A1", "B2"], dates=["2024/01/02", "2024.01.03", "2024-01-04", "2024/01/05", "2024.01.08"]),
    "boolean_looking_codes": _file(["TRUE", "FALSE"]),
    "float_looking_codes": _file(["1.5", "2.0", "1e3"]),
    "korean_codes": _file(["가람주식A", "가람주식C", "나래채권"], order="date", seed=3),
    "english_header_shuffled": _file(["KR1", "KR2", "KR3"], order="date", header="date,code,nav", seed=4),
}


@pytest.mark.parametrize("name", sorted(FAST))
def test_vendor_code_and_date_spellings_read_the_same(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(FAST[name], encoding="utf-8")
    assert read_long_csv(path, "DATA") is not None, "expected the fast path"
    either, general = _load_both(path, monkeypatch)
    _assert_same(either, general)
    codes = {line.split(",")[1] for line in FAST[name].splitlines()[1:]}
    assert set(either[0].columns) == codes  # no code lost its zeros or became a number


@pytest.mark.parametrize("encoding", ["utf-8", "cp949"])
def test_cp949_korean_codes_read_the_same(encoding: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "nav.csv"
    path.write_bytes(_file(["가람주식A", "나래채권", "KR3"], seed=5).encode(encoding))
    either, general = _load_both(path, monkeypatch)
    _assert_same(either, general)
    assert either[4]["encoding"] == encoding


def _big(tmp_path: Path, order: str) -> Path:
    """A long file of ~6 MB (over pandas' 5 MB threshold for a threaded read): 400 funds × 700 days, some
    funds starting later, prices with 0–4 decimals, in ``order``."""
    rng = np.random.default_rng(17)
    days = pd.bdate_range("2021-01-04", periods=700).strftime("%Y-%m-%d")
    lines = []
    for f in range(400):
        start = int(rng.integers(0, 200)) if f % 3 == 0 else 0
        prices = 1000 * np.cumprod(1 + rng.normal(0, 0.01, len(days) - start))
        decimals = rng.integers(0, 5, len(prices))
        lines += [(i + start, f, f"{days[i + start]},{f:06d},{p:.{k}f}\n")
                  for i, (p, k) in enumerate(zip(prices, decimals, strict=True))]
    if order == "date":
        lines.sort(key=lambda t: (t[0], t[1]))
    path = tmp_path / f"big_{order}.csv"
    path.write_text("기준일자,펀드코드,기준가격\n" + "".join(t[2] for t in lines), encoding="utf-8")
    assert path.stat().st_size > 5 * 2**20
    return path


@pytest.mark.parametrize("order", ["fund", "date"])
def test_a_file_read_by_several_threads_reads_the_same(order: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _big(tmp_path, order)
    assert read_long_csv(path, "DATA") is not None, "expected the fast path"
    either, general = _load_both(path, monkeypatch)
    _assert_same(either, general)
    assert either[0].shape == (700, 400) and either[4]["rows"] == int(either[0].notna().to_numpy().sum())


def test_a_repeated_row_deep_in_a_big_file_still_falls_back(tmp_path: Path) -> None:
    """The fund's date order is checked across the threads' pieces too: one repeated row at the end of the
    file sends it to the general path, which names the repeated date."""
    path = _big(tmp_path, "fund")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines, lines[-1]]), encoding="utf-8")
    assert read_long_csv(path, "DATA") is None


@pytest.mark.parametrize("gap", [" ", "  ", "\t"])
def test_spaces_after_commas_far_into_a_big_file_read_the_same(gap: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """pandas skips spaces after a comma only when asked, which slows the whole parse; it is asked only when
    the file holds a space or a tab, found however deep: here only in rows past the first 8 MiB slice."""
    body = _big(tmp_path, "fund").read_text(encoding="utf-8").splitlines(keepends=True)
    more = [line.replace(",0", ",9", 1) for line in body[1:]]  # the same funds again under other codes
    plain, path = tmp_path / "plain.csv", tmp_path / "spaced.csv"
    plain.write_text("".join(body + more), encoding="utf-8")
    more[-300:] = [line.replace(",", "," + gap) for line in more[-300:]]
    path.write_text("".join(body + more), encoding="utf-8")
    assert path.stat().st_size > 2**23 + 2**20
    assert csv_head(plain).spaced is False and csv_head(path).spaced is True
    if gap.strip(" ") == "":
        assert read_long_csv(path, "DATA") is not None, "expected the fast path"
    either, general = _load_both(path, monkeypatch)
    _assert_same(either, general)
    assert either[0].shape == (700, 800)
