"""Reading analysts' files: layouts, column names, encodings, and every bad-input case."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.domains.fund.data.loaders import (
    load_benchmark,
    load_meta,
    load_navs,
    load_universe,
    parse_risk_free,
)
from evaluator.domains.fund.data.readers import DataError

DATES = pd.bdate_range("2024-01-01", periods=6)
KO_HEADER = "기준일자,펀드코드,펀드명,운용회사,유형,기준가격,설정원본"


def _long_rows() -> list[str]:
    rows = []
    for code, name, base in (
        ("KR001", "가람 코리아밸류 증권투자신탁[주식]", 1000.0),
        ("KR002", "누리 국공채 증권투자신탁[채권]", 1500.0),
    ):
        for i, d in enumerate(DATES):
            rows.append(
                f'{d:%Y-%m-%d},{code},{name},가람자산운용,국내주식형,"{base + i * 1.25:,.2f}",10000000000'
            )
    return rows


def _write(path: Path, lines: list[str], encoding: str) -> Path:
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp949"])
def test_long_korean_csv_in_each_encoding(tmp_path: Path, encoding: str) -> None:
    path = _write(tmp_path / "navs.csv", [KO_HEADER, *_long_rows()], encoding)
    navs, issues, meta, warnings, info = load_navs(path)
    assert info["encoding"] == encoding and info["layout"] == "long"
    assert issues == {} and warnings == []
    assert list(navs.columns) == ["KR001", "KR002"]
    assert navs.loc["2024-01-02", "KR002"] == pytest.approx(1501.25)  # "1,501.25" with a thousands separator
    assert meta.loc["KR001", "fund_name"] == "가람 코리아밸류 증권투자신탁[주식]"
    assert meta.loc["KR002", "type"] == "국내주식형"


def test_english_wide_and_parquet_layouts_agree(tmp_path: Path) -> None:
    long_path = _write(tmp_path / "long.csv", [KO_HEADER, *_long_rows()], "utf-8")
    reference, *_ = load_navs(long_path)
    english = tmp_path / "english.csv"
    frame = pd.read_csv(long_path, dtype=str)
    frame.columns = ["date", "fund_code", "fund_name", "company", "type", "nav", "set_amount"]
    frame.to_csv(english, index=False)
    wide = tmp_path / "wide.csv"
    w = reference.copy()
    w.index = w.index.strftime("%Y%m%d")  # compact dates
    w.rename_axis("기준일자").to_csv(wide)
    parquet = tmp_path / "long.parquet"
    pq = reference.stack().rename("nav").reset_index()
    pq.columns = ["date", "fund_code", "nav"]
    pq.to_parquet(parquet)
    for path, layout in ((english, "long"), (wide, "wide"), (parquet, "long")):
        navs, issues, _meta, _warn, info = load_navs(path)
        assert info["layout"] == layout and issues == {}
        pd.testing.assert_frame_equal(navs, reference, check_names=False, check_freq=False)


def test_per_fund_row_problems_leave_other_funds_alone(tmp_path: Path) -> None:
    rows = _long_rows()
    good = list(rows[6:])  # KR002 stays clean
    bad = [
        rows[0],
        rows[1],
        rows[1].replace('"1,001.25"', '"1,001.50"'),  # duplicate date with another NAV (a conflict)
        rows[3],
        rows[2],  # out of order
        rows[4].replace('"1,005.00"', ""),  # blank NAV
        rows[5].replace('"1,006.25"', "abc"),  # not a number
        "2024-13-45,KR001,x,y,국내주식형,1000,1",  # unreadable date
    ]
    extra = ["2024-01-03,KR003,z,y,국내주식형,1000,1", "2024-01-04,,z,y,국내주식형,1000,1"]
    path = _write(tmp_path / "navs.csv", [KO_HEADER, *bad, *good, *extra], "utf-8")
    navs, issues, _meta, warnings, _info = load_navs(path)
    text = " | ".join(issues["KR001"])
    assert (
        "중복" in text
        and "오름차순" in text
        and "비어 있습니다" not in text
        and "'abc'" in text
        and "'2024-13-45'" in text
    )
    assert set(issues) == {"KR001"}
    assert navs["KR002"].notna().sum() == 6
    assert "no fund code" in warnings[0]
    assert any("have no 기준가격" in w for w in warnings)


def test_wide_file_blank_cells_are_absence_not_errors(tmp_path: Path) -> None:
    lines = ["date,A,B", "2024-01-02,100,", "2024-01-03,101,", "2024-01-04,102,50", "2024-01-04,103,51"]
    navs, issues, *_ = load_navs(_write(tmp_path / "wide.csv", lines, "utf-8"))
    assert navs["B"].isna().sum() == 2  # B simply starts later
    assert set(issues) == {"A", "B"} and all("중복" in v[0] for v in issues.values())


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["펀드코드,기준가격", "A,1"], "no date column"),
        (["기준일자,펀드코드,펀드명", "2024-01-02,A,x"], "no NAV column"),
        (["date,nav", "2024-01-02,1"], "no fund code column"),
    ],
)
def test_missing_required_columns_fail_before_any_work(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    with pytest.raises(DataError, match=message):
        load_navs(_write(tmp_path / "navs.csv", lines, "utf-8"))


def test_undecodable_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "navs.csv"
    path.write_bytes(b"date,A\n2024-01-02,\xff\xfe\xff\n")
    with pytest.raises(DataError, match="neither UTF-8 nor CP949"):
        load_navs(path)


def test_meta_and_type_requirements(tmp_path: Path) -> None:
    data = _write(
        tmp_path / "navs.csv",
        ["date,fund_code,nav", *[f"{d:%Y-%m-%d},A,{100 + i}" for i, d in enumerate(DATES)]],
        "utf-8",
    )
    no_code = _write(tmp_path / "meta.csv", ["펀드명,유형", "x,국내주식형"], "utf-8")
    with pytest.raises(DataError, match=r"META .* no fund code"):
        load_meta(no_code)
    with pytest.raises(DataError, match="no 유형/type column"):
        load_universe(data)
    meta = _write(
        tmp_path / "meta2.csv",
        ["펀드코드,유형,운용철학", "A,국내주식형,4", "A,채권형,3", "Z,채권형,"],
        "cp949",
    )
    universe = load_universe(data, meta=meta)
    assert universe.meta.loc["A", "type"] == "채권형"  # the last row of a repeated code wins
    assert any("more than once" in w for w in universe.warnings)
    assert any("have no NAV rows" in w for w in universe.warnings)


def test_benchmark_files(tmp_path: Path) -> None:
    single = _write(
        tmp_path / "b1.csv",
        ["기준일자,KOSPI", *[f"{d:%Y.%m.%d},{2500 + i}" for i, d in enumerate(DATES)]],
        "cp949",
    )
    series, info = load_benchmark(single)
    assert isinstance(series, pd.Series) and series.iloc[-1] == 2505 and info["encoding"] == "cp949"
    per_type = _write(
        tmp_path / "b2.csv", ["date,국내주식형,채권형", "2024-01-02,1,2", "2024-01-03,1.1,2.1"], "utf-8"
    )
    frame, _ = load_benchmark(per_type)
    assert list(frame.columns) == ["국내주식형", "채권형"]
    for lines, message in (
        (["KOSPI", "1"], "no date column"),
        (["date,KOSPI", "2024-01-02,1", "2024-01-02,2"], "more than once"),
        (["date,KOSPI", "2024-01-02,0"], "non-positive"),
        (["date,KOSPI", "2024-01-02,x"], "unreadable value 'x' at line 2"),
    ):
        with pytest.raises(DataError, match=message):
            load_benchmark(_write(tmp_path / "bad.csv", lines, "utf-8"))
    data = _write(tmp_path / "navs.csv", [KO_HEADER, *_long_rows()], "utf-8")
    unrelated = _write(tmp_path / "b3.csv", ["date,S&P500,NIKKEI", "2024-01-02,1,2"], "utf-8")
    with pytest.raises(DataError, match="none is named after a 유형"):
        load_universe(data, benchmark=unrelated)


def test_risk_free_forms(tmp_path: Path) -> None:
    assert parse_risk_free("0.03")[0] == 0.03
    assert parse_risk_free("3%")[0] == pytest.approx(0.03)
    with pytest.raises(DataError, match="out of range"):
        parse_risk_free("3")
    with pytest.raises(DataError, match="neither a rate"):
        parse_risk_free("no-such-file.csv")
    path = _write(tmp_path / "rf.csv", ["기준일자,CD91", "2024-01-02,3.5", "2024-02-01,3.25"], "utf-8")
    series, info = parse_risk_free(str(path))
    assert info["read_as_percent"] is True
    assert np.allclose(series.to_numpy(), [0.035, 0.0325])
