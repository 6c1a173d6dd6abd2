"""Reading analysts' grade files: encodings, Korean/English headers, title rows, Excel, and honest refusals."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from evaluator.domains.fund.agreement.io import UNNAMED_ANALYST, parse_grade, read_experts
from evaluator.domains.fund.data.readers import DataError


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding) if encoding != "utf-8-sig" else b"\xef\xbb\xbf" + text.encode())
    return path


def _grades(experts) -> dict[tuple[str, str | None], int]:
    return {(g.fund_code, g.analyst): g.grade for g in experts.grades}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp949"])
def test_korean_headers_in_every_encoding(tmp_path: Path, encoding: str) -> None:
    text = "펀드코드,펀드명,등급\nKR5230100000,하늘 성장주 증권투자신탁[주식] C-e,1등급\nKR5230107919,바른 국공채,3\n"
    experts = read_experts(_write(tmp_path / "e.csv", text, encoding), 5)
    assert _grades(experts) == {("KR5230100000", None): 1, ("KR5230107919", None): 3}
    assert experts.source["encoding"] == encoding and not experts.has_analyst


def test_english_headers_tab_separated_with_spelling_variants(tmp_path: Path) -> None:
    text = "Fund Code\tFund Name\tGRADE\tAnalyst\tAs Of\nA001\tAlpha, Inc fund\t2\tKim\t2025/06/30\nA002\tBeta\t5.0\tLee\t20250630\n"
    experts = read_experts(_write(tmp_path / "e.tsv", text), 5, "2025-06-30")
    assert _grades(experts) == {("A001", "Kim"): 2, ("A002", "Lee"): 5}
    assert {g.as_of for g in experts.grades} == {"2025-06-30"} and experts.notes == []


def test_title_rows_semicolons_full_width_digits_and_spaced_headers(tmp_path: Path) -> None:
    text = (
        "2025년 상반기 펀드 평가 결과;;\n"
        "작성: 리서치본부;;\n"
        ";;\n"
        "펀드 코드;평가등급;평가자\n"
        "KR1;２등급;김 분석\n"
        "KR2; 4 등급 ;\n"
        "KR3;;김 분석\n"
    )
    experts = read_experts(_write(tmp_path / "e.csv", text, "cp949"), 5)
    assert experts.source["header_row"] == 4
    assert _grades(experts) == {("KR1", "김 분석"): 2, ("KR2", UNNAMED_ANALYST): 4}
    assert experts.blank_grades == [{"fund_code": "KR3", "analyst": "김 분석", "row": 7}]


def test_excel_with_a_cover_sheet_title_rows_numbers_and_dates(tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    cover = book.active
    cover.title = "표지"
    cover.append(["펀드 평가 보고서"])
    sheet = book.create_sheet("등급")
    sheet.append(["2025년 6월말 전문가 등급"])
    sheet.append([])
    sheet.append(["펀드코드", "펀드명", "등급", "평가자", "기준일자"])
    sheet.append(["KR5230100000", "하늘", 1, "김분석", dt.datetime(2025, 6, 30)])
    sheet.append(["KR5230107919", "바른", 3.0, "이평가", dt.date(2025, 6, 30)])
    sheet.append([12345, "숫자코드", "2등급", "김분석", "2025-06-30"])
    sheet.append([None, None, None, None, None])
    path = tmp_path / "experts.xlsx"
    book.save(path)
    experts = read_experts(path, 5, "2025-06-30")
    assert experts.source == {
        "path": str(path), "format": "xlsx", "sheet": "등급", "header_row": 3, "rows_used": 3,
    }  # fmt: skip
    assert _grades(experts) == {
        ("KR5230100000", "김분석"): 1,
        ("KR5230107919", "이평가"): 3,
        ("12345", "김분석"): 2,
    }
    assert experts.analysts == ["김분석", "이평가"]


@pytest.mark.parametrize(
    ("cell", "grade"),
    [(1, 1), (5.0, 5), ("3등급", 3), (" 2 등급 ", 2), ("４", 4), ("1.0", 1), ("2급", 2), ("", None), ("-", None),
     (None, None)],
)  # fmt: skip
def test_parse_grade_accepts(cell: object, grade: int | None) -> None:
    assert parse_grade(cell, 5) == grade


@pytest.mark.parametrize("cell", [0, 6, "6등급", "0등급", 2.5, "2.5", "A", "1-2", "최우수", True, "1등급2"])
def test_parse_grade_refuses(cell: object) -> None:
    with pytest.raises(ValueError):
        parse_grade(cell, 5)


def test_rubric_with_fewer_grades_narrows_the_range(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"row 3: grade '4' is outside the rubric's 1…3"):
        read_experts(_write(tmp_path / "e.csv", "fund_code,grade\nA,3\nB,4\n"), 3)


def test_file_without_a_grade_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "e.csv", "펀드코드,펀드명,점수\nKR1,가,80\n")
    with pytest.raises(
        DataError, match=r"has no grade column \(등급/grade\); columns found: '펀드코드', '펀드명', '점수'"
    ):
        read_experts(path, 5)


def test_file_without_a_fund_code_column(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no fund code column"):
        read_experts(_write(tmp_path / "e.csv", "펀드명,등급\n가,1\n"), 5)


def test_grades_outside_the_rubric_are_all_listed(tmp_path: Path) -> None:
    text = "펀드코드,등급\nKR1,1\nKR2,6등급\nKR3,0\nKR4,A+\n"
    with pytest.raises(DataError) as info:
        read_experts(_write(tmp_path / "e.csv", text), 5)
    message = str(info.value)
    assert "row 3: grade '6등급' is outside the rubric's 1…5" in message
    assert "row 4: grade '0' is outside" in message and "row 5: 'A+' is not a grade" in message


def test_duplicate_codes_with_different_grades_are_refused(tmp_path: Path) -> None:
    text = "펀드코드,등급\nKR1,1\nKR2,2\nKR1,3\n"
    with pytest.raises(DataError, match=r"different grades.*KR1: 1 \(row 2\), 3 \(row 4\)") as info:
        read_experts(_write(tmp_path / "e.csv", text), 5)
    assert "평가자/analyst" in str(info.value)  # the hint when no analyst column says who graded what


def test_same_analyst_twice_with_different_grades_is_refused_but_two_analysts_are_fine(
    tmp_path: Path,
) -> None:
    ok = read_experts(_write(tmp_path / "a.csv", "펀드코드,등급,평가자\nKR1,1,김\nKR1,3,이\n"), 5)
    assert _grades(ok) == {("KR1", "김"): 1, ("KR1", "이"): 3}
    with pytest.raises(DataError, match="KR1 by 김: 1 \\(row 2\\), 3 \\(row 3\\)"):
        read_experts(_write(tmp_path / "b.csv", "펀드코드,등급,평가자\nKR1,1,김\nKR1,3,김\n"), 5)


def test_same_code_same_grade_counts_once_and_is_reported(tmp_path: Path) -> None:
    experts = read_experts(_write(tmp_path / "e.csv", "펀드코드,등급\nKR1,2\nKR2,4\nKR1,2등급\n"), 5)
    assert _grades(experts) == {("KR1", None): 2, ("KR2", None): 4}
    assert experts.repeated == [{"fund_code": "KR1", "analyst": None, "grade": 2, "rows": [2, 4]}]


def test_several_dates_keep_the_reports_day_only(tmp_path: Path) -> None:
    text = "펀드코드,등급,기준일자\nKR1,1,2024-12-31\nKR1,2,2025-06-30\nKR2,3,2025.06.30\nKR3,4,\n"
    experts = read_experts(_write(tmp_path / "e.csv", text), 5, "2025-06-30")
    assert _grades(experts) == {("KR1", None): 2, ("KR2", None): 3, ("KR3", None): 4}
    assert experts.other_dates == [{"fund_code": "KR1", "analyst": None, "as_of": "2024-12-31", "row": 2}]
    assert any("기준일자가 비어 있는 1개 행" in n for n in experts.notes)
    with pytest.raises(
        DataError, match=r"several dates \(2024-12-31, 2025-06-30\) and none is the reports' as_of 2025-03-31"
    ):
        read_experts(tmp_path / "e.csv", 5, "2025-03-31")


def test_one_other_date_is_compared_with_a_note(tmp_path: Path) -> None:
    experts = read_experts(
        _write(tmp_path / "e.csv", "펀드코드,등급,기준일자\nKR1,1,2025-06-27\n"), 5, "2025-06-30"
    )
    assert experts.notes == ["전문가 기준일자 2025-06-27와 엔진 기준일자 2025-06-30가 다릅니다"]


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        (
            "e.csv",
            "펀드코드,등급,기준일자\nKR1,1,2025-13-45\n",
            r"row 2: 기준일자 '2025-13-45' is not a date",
        ),
        ("e.csv", "펀드코드,등급\n,3\n", "row 2 has grade 3 but no fund code"),
        ("e.csv", "펀드코드,등급,평가등급\nKR1,1,2\n", "two grade columns"),
        ("e.csv", "펀드코드,등급\nKR1,\n", "no graded fund"),
        ("e.csv", "", "no fund code column"),
        ("e.xls", "x", r"old \.xls workbook; save it as \.xlsx or CSV"),
        ("e.json", "{}", r"must be \.csv, \.tsv, \.txt or \.xlsx"),
        ("e.xlsx", "not a zip file", "not a readable Excel workbook"),
    ],
)
def test_unusable_files_get_a_clear_error(tmp_path: Path, name: str, content: str, match: str) -> None:
    with pytest.raises(DataError, match=match):
        read_experts(_write(tmp_path / name, content), 5)


def test_binary_garbage_and_missing_file(tmp_path: Path) -> None:
    garbage = tmp_path / "e.csv"
    garbage.write_bytes(bytes(range(128, 256)) * 4)
    with pytest.raises(DataError, match="neither UTF-8 nor CP949"):
        read_experts(garbage, 5)
    with pytest.raises(DataError, match="does not exist"):
        read_experts(tmp_path / "nope.csv", 5)


def test_names_holding_other_delimiters_do_not_split_columns(tmp_path: Path) -> None:
    text = "펀드코드,펀드명,등급\nA1,가;나;다|라;마,1\nA2,바;사;아|자;차,2\nA3,카;타;파|하;거,3\n"
    experts = read_experts(_write(tmp_path / "e.csv", text), 5)
    assert _grades(experts) == {("A1", None): 1, ("A2", None): 2, ("A3", None): 3}


def test_semicolon_and_pipe_files_with_one_row(tmp_path: Path) -> None:
    for sep in (";", "|", "\t"):
        experts = read_experts(_write(tmp_path / "e.csv", f"펀드코드{sep}등급\nA1{sep}4등급\n", "cp949"), 5)
        assert _grades(experts) == {("A1", None): 4}, sep


def test_excel_analyst_names_merged_down_their_block(tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["전문가 펀드 등급 (2025.06)", None, None])
    sheet.merge_cells("A1:C1")  # a title across columns stays a title
    sheet.append(["평가자", "펀드코드", "등급"])
    for row in (
        ["김분석", "KR1", 1],
        [None, "KR2", 2],
        [None, "KR3", "3등급"],
        ["이평가", "KR1", 2],
        [None, "KR2", 2],
    ):
        sheet.append(row)
    sheet.merge_cells("A3:A5")
    sheet.merge_cells("A6:A7")
    book.save(tmp_path / "e.xlsx")
    experts = read_experts(tmp_path / "e.xlsx", 5)
    assert _grades(experts) == {
        ("KR1", "김분석"): 1, ("KR2", "김분석"): 2, ("KR3", "김분석"): 3, ("KR1", "이평가"): 2, ("KR2", "이평가"): 2,
    }  # fmt: skip


def test_missing_grade_column_names_the_header_row_not_the_title(tmp_path: Path) -> None:
    text = "2025년 펀드 평가,,\n\n펀드코드,펀드명,투자위험등급\nKR1,가,1\n"
    with pytest.raises(
        DataError,
        match=r"no grade column \(등급/grade\); columns found: '펀드코드', '펀드명', '투자위험등급'",
    ):
        read_experts(_write(tmp_path / "e.csv", text), 5)
