"""The CSV fast paths (wide and long) give exactly what the general reader gives, or steps aside for it.

Each input is read twice — with the fast path, and with it switched off — and everything the loader returns
(matrix bit for bit, issues, warnings, source info) must be equal. Inputs the fast path cannot prove the
same for (typos, repeated or unordered dates, commas in numbers, a title row …) must fall back, so their
messages stay the general path's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.data import loaders
from evaluator.domains.fund.data.fast_csv import read_long_csv, read_wide_csv

DATES = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"]


def _csv(rows: list[list[str]]) -> str:
    return "\n".join(",".join(r) for r in rows) + "\n"


def _wide(header: list[str], cells: list[list[str]], dates: list[str] = DATES) -> str:
    return _csv([header, *([d, *row] for d, row in zip(dates, cells, strict=True))])


CLEAN = _wide(["기준일자", "KR5101", "KR5102", "KR5103"],
              [["1000.00", "998.5", "1010"], ["1001.25", "999", "1011.75"], ["1002.5", "1000.125", "1009"],
               ["1003", "1001", "1012.3333333"], ["1004.75", "1002", "1013"]])
FAST = {
    "clean": (CLEAN, "utf-8"),
    "bom": (CLEAN, "utf-8-sig"),
    "cp949_korean_codes": (_wide(["기준일", "가람주식형A", "가람주식형C", "나래채권"],
                                 [["1000", "990", "1005"]] * 2 + [["1001", "991", "1006"]] * 3), "cp949"),
    "blank_spellings_any_case": (_wide(["date", "A1", "B2", "C3"],
                                       [["-", "N/A", "1000"], ["#N/A", "n/a", "1001"], ["1000", "", "NULL"],
                                        ["1001", "—", "None"], ["nan", "1002", "1003"]]), "utf-8"),
    "fund_without_any_price": (_wide(["기준일자", "KR1", "KR2"],
                                     [["1000", "-"], ["1001", ""], ["1002", "N/A"], ["1003", "-"], ["1004", "#N/A"]]),
                               "utf-8"),
    "a_date_nobody_priced": (_wide(["기준일자", "KR1", "KR2"],
                                   [["1000", "500"], ["-", "-"], ["1002", "502"], ["1003", "503"], ["1004", "504"]]),
                             "utf-8"),
    "other_date_spellings": (_wide(["기준일자", "KR1"], [["1000"], ["1001"], ["1002"], ["1003"], ["1004"]],
                                   dates=["20240102", "2024/01/03", "2024.01.04", "2024-01-05", "45299"]), "utf-8"),
    "compact_digit_dates_only": (_wide(["기준일자", "KR1", "KR2"], [["1000", "7"]] * 5,
                                       dates=[d.replace("-", "") for d in DATES]), "utf-8"),
    "excel_serial_dates_only": (_wide(["date", "KR1"], [["1000"], ["1001"], ["1002"], ["1003"], ["1004"]],
                                      dates=["45293", "45294", "45295", "45296", "45299"]), "utf-8"),
    "spaces_and_unsorted_columns": (_wide([" 기준일자", " KRB", "KRA ", "KRC"],
                                          [[" 1000", "2000", "3000"]] * 5), "utf-8"),
    "scientific_and_integers": (_wide(["date", "X"], [["1e3"], ["1001"], ["1.002E3"], ["1003.0"], ["0.1004e4"]]),
                                "utf-8"),
}
GENERAL = {
    "typo_cell": _wide(["기준일자", "KR1", "KR2"], [["1000", "10o1"]] + [["1000", "1001"]] * 4),
    "thousands_separator": _wide(["기준일자", "KR1"], [['"1,000"'], ["1001"], ["1002"], ["1003"], ["1004"]]),
    "repeated_date": _wide(["기준일자", "KR1"], [["1000"], ["1001"], ["1002"], ["1003"], ["1004"]],
                           dates=["2024-01-02", "2024-01-03", "2024-01-03", "2024-01-04", "2024-01-05"]),
    "exact_duplicate_row": _wide(["기준일자", "KR1"], [["1000"], ["1001"], ["1001"], ["1003"], ["1004"]],
                                 dates=["2024-01-02", "2024-01-03", "2024-01-03", "2024-01-04", "2024-01-05"]),
    "same_day_two_spellings": _wide(["기준일자", "KR1"], [["1000"], ["1001"], ["1002"], ["1003"], ["1004"]],
                                    dates=["2024-01-02", "20240102", "2024-01-04", "2024-01-05", "2024-01-08"]),
    "dates_out_of_order": _wide(["기준일자", "KR1"], [["1000"], ["1001"], ["1002"], ["1003"], ["1004"]],
                                dates=["2024-01-02", "2024-01-04", "2024-01-03", "2024-01-05", "2024-01-08"]),
    "unreadable_date": _wide(["기준일자", "KR1"], [["1000"], ["1001"], ["1002"], ["1003"], ["1004"]],
                             dates=["2024-01-02", "어제", "2024-01-04", "2024-01-05", "2024-01-08"]),
    "blank_with_trailing_space": _wide(["기준일자", "KR1"], [["1000"], ["N/A "], ["1002"], ["1003"], ["1004"]]),
    "codes_equal_once_stripped": _wide(["기준일자", "KR1", "KR1 "], [["1000", "2000"]] * 5),
    "title_row_above_header": "펀드 기준가격 일별 조회\n" + CLEAN,
    "long_layout": _csv([["기준일자", "펀드코드", "기준가격"], ["2024-01-02", "KR1", "1000"],
                         ["2024-01-03", "KR1", "1001"]]),
    "descriptive_column": _wide(["기준일자", "유형", "KR1"], [["주식", "1000"]] * 5),
}


def _load_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple, tuple]:
    either = loaders.load_navs_with_adjustments(path)
    with monkeypatch.context() as m:
        m.setattr(loaders, "read_wide_csv", lambda *a, **k: None)
        m.setattr(loaders, "read_long_csv", lambda *a, **k: None)
        general = loaders.load_navs_with_adjustments(path)
    return either, general


def _assert_same(a: tuple, b: tuple) -> None:
    navs_a, issues_a, meta_a, warnings_a, info_a, adj_a = a
    navs_b, issues_b, meta_b, warnings_b, info_b, adj_b = b
    pd.testing.assert_frame_equal(navs_a, navs_b, check_exact=True)
    assert np.array_equal(navs_a.to_numpy().view(np.int64), navs_b.to_numpy().view(np.int64))  # bit for bit
    assert issues_a == issues_b and warnings_a == warnings_b and info_a == info_b
    pd.testing.assert_frame_equal(meta_a, meta_b, check_exact=True)
    assert adj_a is None and adj_b is None


@pytest.mark.parametrize("name", sorted(FAST))
def test_clean_wide_files_take_the_fast_path_and_read_the_same(name: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    text, encoding = FAST[name]
    path = tmp_path / f"{name}.csv"
    path.write_bytes(text.encode(encoding))
    assert read_wide_csv(path, "DATA") is not None, "expected the fast path"
    either, general = _load_both(path, monkeypatch)
    _assert_same(either, general)


@pytest.mark.parametrize("name", sorted(GENERAL))
def test_other_files_fall_back_and_keep_the_general_paths_messages(name: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(GENERAL[name], encoding="utf-8")
    assert read_wide_csv(path, "DATA") is None
    try:
        either, general = _load_both(path, monkeypatch)
    except loaders.DataError as exc:  # the same refusal either way
        with pytest.raises(loaders.DataError, match=str(exc)[:40]):
            loaders.load_navs_with_adjustments(path)
        return
    _assert_same(either, general)


def test_a_blank_fund_column_is_an_error_fund_and_the_rest_are_graded(tmp_path: Path) -> None:
    path = tmp_path / "nav.csv"
    path.write_text(FAST["fund_without_any_price"][0], encoding="utf-8")
    navs, issues, *_ = loaders.load_navs_with_adjustments(path)
    assert list(navs.columns) == ["KR1"] and list(issues) == ["KR2"]
    assert issues["KR2"] == ["기준가격이 모두 비어 있습니다 (값이 있는 기준일이 없습니다)"]


def _long(header: list[str], rows: list[list[str]]) -> str:
    return _csv([header, *rows])


LONG_ROWS = [[d, c, str(1000 + i + 7 * j)] for i, d in enumerate(DATES) for j, c in enumerate(["KR2", "KR1", "KR3"])]
FAST_LONG = {
    "plain": _long(["기준일자", "펀드코드", "기준가격"], LONG_ROWS),
    "fund_by_fund_blocks": _long(["date", "fund_code", "nav"], sorted(LONG_ROWS, key=lambda r: r[1])),
    "kofia_with_descriptive_columns": _long(
        ["기준일자", "펀드코드", "펀드명", "운용사", "유형", "설정원본(억원)", "기준가격"],
        [[d, c, f"{c} 증권투자신탁", "가람자산운용", "국내주식형", "12.5" if c == "KR1" else "", p] for d, c, p in LONG_ROWS],
    ),
    "a_fund_missing_some_days": _long(["기준일자", "펀드코드", "기준가격"], [r for r in LONG_ROWS if not (r[1] == "KR3" and r[0] == DATES[2])]),
}
GENERAL_LONG = {
    "blank_price": _long(["기준일자", "펀드코드", "기준가격"], [*LONG_ROWS[:-1], [DATES[-1], "KR3", "-"]]),
    "typo_price": _long(["기준일자", "펀드코드", "기준가격"], [*LONG_ROWS[:-1], [DATES[-1], "KR3", "1O00"]]),
    "repeated_day": _long(["기준일자", "펀드코드", "기준가격"], [*LONG_ROWS, LONG_ROWS[0]]),
    "day_out_of_order": _long(["기준일자", "펀드코드", "기준가격"], [LONG_ROWS[3], LONG_ROWS[0], *LONG_ROWS[4:]]),
    "no_code": _long(["기준일자", "펀드코드", "기준가격"], [*LONG_ROWS, [DATES[0], "", "1000"]]),
    "code_with_trailing_space": _long(["기준일자", "펀드코드", "기준가격"], [*LONG_ROWS, ["2024-01-09", "KR1 ", "1000"]]),
    "distribution_column": _long(["기준일자", "펀드코드", "기준가격", "분배금"], [[*r, "0"] for r in LONG_ROWS]),
    "unknown_column": _long(["기준일자", "펀드코드", "기준가격", "비고"], [[*r, "x"] for r in LONG_ROWS]),
}


@pytest.mark.parametrize("name", sorted(FAST_LONG))
def test_clean_long_files_take_the_fast_path_and_read_the_same(name: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(FAST_LONG[name], encoding="utf-8")
    assert read_long_csv(path, "DATA") is not None, "expected the fast path"
    either, general = _load_both(path, monkeypatch)
    _assert_same(either, general)
    assert either[4]["layout"] == "long"


@pytest.mark.parametrize("name", sorted(GENERAL_LONG))
def test_other_long_files_fall_back(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(GENERAL_LONG[name], encoding="utf-8")
    assert read_long_csv(path, "DATA") is None
    either, general = _load_both(path, monkeypatch)
    pd.testing.assert_frame_equal(either[0], general[0], check_exact=True)
    assert either[1:2] == general[1:2] and either[3:5] == general[3:5]  # issues, warnings, info
