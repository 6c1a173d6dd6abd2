"""Fund files as analysts receive them: Excel with title rows, HTML saved as .xls, unit headers, KRX index
exports, repeated downloads, distribution columns, and the bad inputs among them.

Workbooks are written here with openpyxl (no binary fixtures). A real BIFF .xls (Excel 97–2003) cannot
be written by any maintained Python library, so the xlrd path is not exercised here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.data.loaders import load_benchmark, load_meta, load_navs, load_universe
from evaluator.domains.fund.data.readers import DataError

DATES = pd.bdate_range("2024-01-01", periods=8)
CODES = ("KR5000000001", "0012345")  # a code with leading zeros must survive every reader


def _nav(code: str, i: int) -> float:
    return (1000.0 if code.startswith("KR") else 1500.0) + 12.5 * i


def _xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        ws = book.create_sheet(name)
        for row in rows:
            ws.append(row)
    book.save(path)
    return path


def _title_rows() -> list[list[object]]:
    return [["펀드 기준가격 일별 조회"], ["조회기간: 2024.01.01 ~ 2024.01.10"], []]


def _date_forms(d: pd.Timestamp, k: int) -> object:
    """The forms Korean exports use: datetime cells, 2024.01.02, 2024/01/02, 20240102, Excel serials."""
    forms = (
        d.to_pydatetime(),
        f"{d:%Y.%m.%d}",
        f"{d:%Y/%m/%d}",
        f"{d:%Y%m%d}",
        (d - pd.Timestamp("1899-12-30")).days,
        f"{d:%Y. %m. %d.}",
    )
    return forms[k % len(forms)]


def _assert_the_export_values(navs: pd.DataFrame, meta: pd.DataFrame) -> None:
    """What every spreadsheet form of the same export must read as: dates, codes (leading zeros kept), NAVs
    and the 억원 amount in 원."""
    assert list(navs.index) == list(DATES) and set(navs.columns) == set(CODES)
    for code in CODES:
        assert navs[code].tolist() == [_nav(code, i) for i in range(len(DATES))]
    assert meta.loc["0012345", "set_amount"] == pytest.approx(125.5e8)


def test_xlsx_with_title_rows_and_mixed_date_and_number_forms(tmp_path: Path) -> None:
    rows = [*_title_rows(), ["기준일자", "펀드코드", "펀드명", "유형", "기준가격", "설정원본(억원)"]]
    for code in CODES:
        for i, d in enumerate(DATES):
            nav = _nav(code, i)
            rows.append(
                [
                    _date_forms(d, i),
                    code,
                    "가람 코리아",
                    "국내주식형",
                    f"{nav:,.2f}" if i % 2 else nav,
                    "125.5",
                ]
            )
    cover = [["이 통합문서는 예시입니다"], ["작성: 자산운용사"]]
    path = _xlsx(tmp_path / "nav.xlsx", {"표지": cover, "기준가격": rows})
    navs, issues, meta, warnings, info = load_navs(path)
    assert issues == {} and info["encoding"] == "xlsx:기준가격" and info["layout"] == "long"
    _assert_the_export_values(navs, meta)
    assert any("'설정원본(억원)' read in 억원" in w for w in warnings)
    # --sheet picks a sheet by name or number; a sheet without a header is a clear error
    assert load_navs(path, sheet="2")[0].equals(navs)
    with pytest.raises(DataError, match="no sheet '없음'; its sheets are: 표지, 기준가격"):
        load_navs(path, sheet="없음")
    with pytest.raises(DataError, match="no header row found"):
        load_navs(path, sheet="표지")
    csv_path = tmp_path / "nav.csv"
    csv_path.write_text("기준일자,펀드코드,기준가격\n2024-01-02,A,1000\n", encoding="utf-8")
    with pytest.raises(DataError, match="--sheet '1' applies to Excel files"):
        load_navs(csv_path, sheet="1")


def test_html_saved_as_xls_is_read_as_text_in_cp949(tmp_path: Path) -> None:
    cells = "".join(
        f"<tr><td>{d:%Y.%m.%d}</td><td>{code}</td><td>{_nav(code, i):,.2f}</td><td>0</td></tr>"
        for code in CODES
        for i, d in enumerate(DATES)
    )
    html = (
        "<html><head><meta charset='euc-kr'></head><body><table>"
        "<tr><td colspan='4'>기준가격 조회</td></tr>"
        f"<tr><th>기준일자</th><th>펀드코드</th><th>기준가격</th><th>분배금</th></tr>{cells}</table></body></html>"
    )
    path = tmp_path / "download.xls"
    path.write_bytes(html.encode("cp949"))
    navs, issues, _meta, _w, info = load_navs(path)
    assert info["encoding"] == "html:table1" and issues == {}
    assert sorted(navs.columns) == sorted(CODES)  # 0012345 keeps its leading zeros
    assert navs["0012345"].iloc[-1] == _nav("0012345", len(DATES) - 1)


def test_meta_and_benchmark_may_be_excel_and_units_convert_to_won(tmp_path: Path) -> None:
    meta = _xlsx(
        tmp_path / "meta.xlsx",
        {
            "펀드정보": [
                ["펀드 기본정보"],
                ["펀드코드", "펀드명", "유형", "순자산(백만원)", "설정액(원)", "모펀드코드"],
                [CODES[0], "가", "국내주식형", "52,000", "", "M1"],
                [CODES[1], "나", "채권형", "800.5", "1000000000", "M1"],
            ]
        },
    )
    frame, warnings, info = load_meta(meta)
    assert any("'순자산(백만원)' read in 백만원" in w for w in warnings)
    assert frame.loc[CODES[0], "net_assets"] == pytest.approx(52_000e6)
    assert frame.loc[CODES[1], "set_amount"] == 1e9 and info["units"] == {
        "net_assets": "백만원",
        "set_amount": "원",
    }
    assert "family_code" not in frame.columns  # 모펀드코드 is a 모자형 master fund, not a class family
    bad = _xlsx(tmp_path / "bad.xlsx", {"s": [["펀드코드", "유형", "설정원본(달러)"], ["A", "채권형", "1"]]})
    with pytest.raises(DataError, match="unit '달러' is not one of"):
        load_meta(bad)


def test_krx_index_export_newest_first_uses_its_close(tmp_path: Path) -> None:
    rows = [["일자", "종가", "대비", "등락률", "시가", "고가", "저가", "거래량", "거래대금", "상장시가총액"]]
    for i, d in enumerate(reversed(DATES)):
        close = 2600.0 - 10 * i
        rows.append(
            [
                f"{d:%Y/%m/%d}",
                f"{close:,.2f}",
                "-10.00",
                "-0.38",
                close + 5,
                close + 9,
                close - 9,
                "412,345",
                "9,876,543",
                "2,100,000,000",
            ]
        )
    path = _xlsx(tmp_path / "kospi.xlsx", {"지수": rows})
    series, info = load_benchmark(path)
    assert isinstance(series, pd.Series) and info["close_column"] == "종가"
    assert list(series.index) == list(DATES) and series.iloc[-1] == 2600.0 and series.iloc[0] == 2530.0


def _long_csv(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _rows(extra: str = "") -> list[str]:
    return [
        f"{d:%Y-%m-%d},{code},국내주식형,{_nav(code, i)}{extra}"
        for code in CODES
        for i, d in enumerate(DATES)
    ]


def test_per_type_benchmark_columns_only_where_names_match_types(tmp_path: Path) -> None:
    data = _long_csv(tmp_path / "nav.csv", "기준일자,펀드코드,유형,기준가격", _rows())
    bench = _long_csv(
        tmp_path / "b.csv",
        "date,국내주식형,채권형,거래량",
        [f"{d:%Y-%m-%d},{100 + i},{200 + i},-5" for i, d in enumerate(DATES)],
    )
    universe = load_universe(data, benchmark=bench)
    # only 국내주식형 is a 유형 of these funds: 채권형 and the (negative) 거래량 are left out
    assert list(universe.benchmark.columns) == ["국내주식형"]
    assert universe.sources["benchmark"]["used_columns"] == ["국내주식형"]


def test_exact_duplicates_are_dropped_and_conflicts_stay_errors(tmp_path: Path) -> None:
    rows = _rows()
    repeated = rows + rows[:5] * 10  # overlapping downloads concatenated
    navs, issues, _m, warnings, _i = load_navs(
        _long_csv(tmp_path / "a.csv", "기준일자,펀드코드,유형,기준가격", repeated)
    )
    assert issues == {} and any("50 exact duplicate row(s) were dropped" in w for w in warnings)
    assert navs.shape == (len(DATES), 2)
    conflict = [*rows, rows[3].rsplit(",", 1)[0] + ",999"]
    _, issues, *_ = load_navs(_long_csv(tmp_path / "b.csv", "기준일자,펀드코드,유형,기준가격", conflict))
    assert "중복" in " ".join(issues[CODES[0]])


def test_tax_base_price_is_never_a_nav(tmp_path: Path) -> None:
    rows = [f"{d:%Y-%m-%d},{CODES[0]},{900 + i},{_nav(CODES[0], i)}" for i, d in enumerate(DATES)]
    navs, *_ = load_navs(_long_csv(tmp_path / "a.csv", "기준일자,펀드코드,과표기준가격,기준가격", rows))
    assert navs[CODES[0]].iloc[0] == _nav(CODES[0], 0)
    only = [f"{d:%Y-%m-%d},{CODES[0]},{900 + i}" for i, d in enumerate(DATES)]
    with pytest.raises(DataError, match="no NAV column"):
        load_navs(_long_csv(tmp_path / "b.csv", "기준일자,펀드코드,과표기준가격", only))


def test_bad_distribution_cells_make_only_that_fund_an_error(tmp_path: Path) -> None:
    rows = []
    for code in CODES:
        for i, d in enumerate(DATES):
            cell = "0"
            if code == CODES[0] and i == 4:
                cell = "열두원"
            if code == CODES[1] and i == 5:
                cell = "-12.5"
            rows.append(f"{d:%Y-%m-%d},{code},국내주식형,{_nav(code, i)},{cell}")
    _, issues, *_ = load_navs(_long_csv(tmp_path / "d.csv", "기준일자,펀드코드,유형,기준가격,분배금", rows))
    assert "숫자가 아닌 분배금 '열두원'" in " ".join(issues[CODES[0]])
    assert "음수 분배금 -12.5" in " ".join(issues[CODES[1]])


class _Out:
    def __init__(self, result) -> None:  # rich wraps long lines; compare words
        self.exit_code, self.output = result.exit_code, " ".join(result.output.split())


def _run(*args: str) -> _Out:
    return _Out(CliRunner().invoke(app, list(args)))


def test_cli_bad_inputs_are_clear_errors_without_tracebacks(tmp_path: Path) -> None:
    headerless = _xlsx(
        tmp_path / "x.xlsx", {"s": [["조회 결과"], ["2024-01-02", "1000"], ["2024-01-03", "1001"]]}
    )
    result = _run("fund", "evaluate", str(headerless), "--out", str(tmp_path / "o1"))
    assert (
        result.exit_code == 2 and "no header row found" in result.output and "Traceback" not in result.output
    )
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not really a workbook")
    result = _run("fund", "evaluate", str(broken), "--out", str(tmp_path / "o2"))
    assert (
        result.exit_code == 2
        and "not a readable xlsx file" in result.output
        and "Traceback" not in result.output
    )


def test_cli_class_without_a_portfolio_code_is_its_own_portfolio(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    dates = pd.bdate_range(end="2025-06-30", periods=800)
    codes = [f"F{i:02d}" for i in range(12)]
    lines = [
        f"{d:%Y-%m-%d},{c},{v:.4f}"
        for j, c in enumerate(codes)
        for d, v in zip(dates, 1000 * np.cumprod(1 + rng.normal(3e-4, 0.01, len(dates))), strict=True)
    ]
    data = _long_csv(tmp_path / "nav.csv", "기준일자,펀드코드,기준가격", lines)
    meta = tmp_path / "meta.csv"
    meta.write_text(
        "펀드코드,유형,설정원본(억원),대표펀드코드\n"
        + "\n".join(
            f"{c},국내주식형,500,{'P1' if j < 3 else ('' if j == 3 else c)}" for j, c in enumerate(codes)
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = _run("fund", "evaluate", str(data), "--meta", str(meta), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "1 fund(s) have no share-class portfolio code" in result.output
    import json

    reports = {c: json.loads((out / f"{c}.json").read_text(encoding="utf-8")) for c in codes}
    assert reports["F03"]["portfolio_code"] == "F03" and reports["F03"]["portfolio_classes"] == 1
    assert all(reports[c]["portfolio_classes"] == 3 for c in codes[:3])
    assert not any("설정액 정보가 없어" in w for r in reports.values() for w in r["warnings"])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["grade_distribution_by_portfolio"]["국내주식형"]["portfolios"] == 10


def test_real_biff_xls_with_title_rows_date_cells_and_text_numbers(tmp_path: Path) -> None:
    """A genuine BIFF8 .xls (the old Excel format many Korean systems still export), written with xlwt: date
    cells with a date format, Excel serials as plain numbers, numbers stored as text with separators, a
    leading-zero code, a cover sheet; read through xlrd the same as the .xlsx path."""
    import datetime as dt

    xlwt = pytest.importorskip("xlwt")
    book = xlwt.Workbook(encoding="utf-8")
    book.add_sheet("표지").write(0, 0, "이 통합문서는 예시입니다")
    ws = book.add_sheet("기준가격")
    date_style = xlwt.easyxf(num_format_str="yyyy-mm-dd")
    rows = [*_title_rows(), ["기준일자", "펀드코드", "펀드명", "유형", "기준가격", "설정원본(억원)"]]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            ws.write(r, c, value)
    r = len(rows)
    for code in CODES:
        for i, d in enumerate(DATES):
            nav = _nav(code, i)
            if i % 3 == 0:
                ws.write(r, 0, dt.datetime(d.year, d.month, d.day), date_style)  # a real date cell
            elif i % 3 == 1:
                ws.write(r, 0, (d - pd.Timestamp("1899-12-30")).days)  # a bare serial number
            else:
                ws.write(r, 0, f"{d:%Y.%m.%d}")
            ws.write(r, 1, code)
            ws.write(r, 2, "가람 코리아")
            ws.write(r, 3, "국내주식형")
            ws.write(r, 4, f"{nav:,.2f}" if i % 2 else nav)
            ws.write(r, 5, "125.5")
            r += 1
    path = tmp_path / "nav.xls"
    book.save(str(path))
    assert path.read_bytes()[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE2/BIFF, not HTML in disguise
    navs, issues, meta, _warnings, info = load_navs(path)
    assert issues == {} and info["encoding"] == "xls:기준가격" and info["layout"] == "long"
    _assert_the_export_values(navs, meta)
    with pytest.raises(DataError, match="no header row found"):
        load_navs(path, sheet="표지")
