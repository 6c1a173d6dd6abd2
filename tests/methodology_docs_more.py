"""Firm-style methodology documents, part 2: month windows, definition tables, three-level tables, sideways
bands, HWP character spacing drawn as PDF ``Tc``, and documents that must be refused."""

from __future__ import annotations

import io

from methodology_docs import GROUPS_A
from methodology_pdfdoc import Doc, _font
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas


def months_and_definitions() -> bytes:
    """Windows in months (``36~59개월``), exclusion phrasing, a metric-definition table beside the criteria
    table, category weights written in the category cell (``수익률(30%)``), ``0~10%`` band ranges."""
    return (
        Doc("HYGothic-Medium")
        .p("펀드 평가등급 산정기준")
        .p("2024년 3월 개정")
        .p("동류 유형: 국내주식일반형, 국내주식인덱스형, 국내채권형, 해외주식형.")
        .p("설정일로부터 3년 미만인 펀드와 설정원본 200억원 미만인 펀드는 평가대상에서 제외한다.")
        .p("유형 내 평가대상 펀드가 10개 이하이면 등급을 부여하지 않는다.")
        .p("평가기간 가중치: 36~59개월 펀드는 3년 100%, 60~119개월 펀드는 3년 40%, 5년 60%, 120개월 이상 펀드는 3년 20%, 5년 30%, 10년 50%를 적용한다.")
        .h("지표의 정의")
        .table(
            [
                ["지표", "산식", "의미"],
                ["샤프지수", "(R - Rf) / σ", "총위험 한 단위당 초과수익"],
                ["소르티노", "(R - Rf) / 하방편차", "하방위험 한 단위당 초과수익"],
                ["최대낙폭", "고점 대비 최대 하락률", "최악의 손실"],
            ],
            (30, 50, 60),
        )
        .h("평가항목과 가중치")
        .table(
            [
                ["평가항목", "세부지표", "지표 내 비중"],
                ["수익률(30%)", "연환산 수익률", "100%"],
                ["위험조정성과(50%)", "샤프지수", "60%"],
                [None, "소르티노", "40%"],
                ["위험(20%)", "최대낙폭", "100%"],
            ],
            (45, 45, 35),
            spans=[(0, 2, 0, 3)],
        )
        .h("등급 구간")
        .table(
            [["등급", "상위 누적 구간"], ["1등급", "0~10%"], ["2등급", "10~30%"], ["3등급", "30~70%"], ["4등급", "70~90%"], ["5등급", "90~100%"]],
            (30, 50),
        )
        .build()
    )


def refused_unread_qualitative() -> bytes:
    """The quantitative table adds up, but 정성평가 20% lives in a table ingest cannot tie to metrics: refuse,
    never drop a fifth of the score silently."""
    return (
        Doc("HYSMyeongJo-Medium")
        .p("펀드 종합평가 방법론 (개정 2023.06)")
        .p(GROUPS_A)
        .p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
        .p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
        .p("종합점수는 정량평가 80%와 정성평가 20%로 구성한다.")
        .table([["평가지표", "가중치"], ["연환산 수익률", "40%"], ["샤프지수", "60%"]], (60, 30))
        .table([["정성 평가항목", "배점"], ["운용철학", "10"], ["운용조직", "10"]], (60, 30))
        .p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
        .build()
    )


def _basics(doc: Doc) -> Doc:
    return (
        doc.p("평가 대상 유형은 국내주식형, 채권형, 혼합형이다.")
        .p(
            "설정 후 3년이 경과하고 설정액 100억 원 이상인 펀드를 대상으로 한다. 유형별 평가대상 펀드 수가 10개 "
            "미만이면 등급을 산출하지 않는다."
        )
        .p("운용기간 3년 이상 펀드는 3년 100%를 반영한다.")
    )


def three_level_table() -> bytes:
    """대분류 (정량/정성) | 중분류 | 평가지표 | 가중치(%) | 비고 with numbers in the 비고 column, and a band table
    laid out sideways (등급 | 1등급 | 2등급 … over 비율 | 10% | …)."""
    d = _basics(Doc("HYGothic-Medium").p("B자산운용평가 펀드평가 방법론").p("2023년 12월 개정"))
    d.table(
        [
            ["대분류", "중분류", "평가지표", "가중치(%)", "비고"],
            ["정량평가", "수익성", "연환산 수익률", "20", "3년 기준"],
            [None, "위험조정성과", "샤프지수", "20", "무위험수익률 CD91일"],
            [None, None, "젠센 알파", "10", "벤치마크: KOSPI200"],
            [None, "위험", "최대손실률", "20", ""],
            ["정성평가", "운용사", "운용철학", "15", "애널리스트 평가"],
            [None, None, "운용인력 안정성", "15", ""],
            ["합계", "", "", "100", ""],
        ],
        (25, 30, 35, 20, 40),
        spans=[(0, 1, 0, 4), (1, 2, 1, 3), (0, 5, 0, 6), (1, 5, 1, 6), (0, 7, 2, 7)],
    )
    d.p("등급별 비율은 다음과 같다.")
    d.table([["등급", "1등급", "2등급", "3등급", "4등급", "5등급"], ["비율", "10%", "22.5%", "35%", "22.5%", "10%"]],
            (20, 20, 20, 20, 20, 20))
    return d.build()


def fractions_within_points() -> bytes:
    """Category points (배점 40/60) with metric shares as fractions inside each category; ``5등급 | 그 외``."""
    d = _basics(Doc("HYSMyeongJo-Medium").p("I 펀드등급 기준 (ver 2.0)"))
    d.table(
        [["구분", "배점", "지표", "지표 비중"], ["수익", "40", "연환산수익률", "1.0"], ["위험조정", "60", "샤프", "0.5"],
         [None, None, "소르티노", "0.5"]],
        (30, 20, 40, 25),
        spans=[(0, 2, 0, 3), (1, 2, 1, 3)],
    )
    d.p("등급 기준")
    d.table(
        [["등급", "기준"], ["1등급", "상위 10% 이내"], ["2등급", "상위 30% 이내"], ["3등급", "상위 70% 이내"],
         ["4등급", "상위 90% 이내"], ["5등급", "그 외"]],
        (30, 50),
    )
    return d.build()


def refused_shared_weight() -> bytes:
    """Two metrics share one category weight with no split given: ingest does not split it equally."""
    d = _basics(Doc("HYSMyeongJo-Medium").p("C사 방법론 (버전 1.2)"))
    d.table([["평가항목", "반영비율", "세부지표"], ["수익률", "30%", "연환산 수익률"], ["위험조정성과", "70%", "샤프지수, 소르티노"]],
            (40, 30, 60))
    d.p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
    return d.build()


def refused_star_ratings() -> bytes:
    """Stars (★★★★★ = best) are not 등급 (1등급 = best): refused, never turned around silently."""
    d = _basics(Doc("HYGothic-Medium").p("Star Rating Methodology 2024"))
    d.p("MRAR 100%로 순위를 매긴다. 상위 10%는 ★★★★★, 다음 22.5%는 ★★★★, 다음 35%는 ★★★, 다음 22.5%는 ★★, 하위 10%는 ★.")
    return d.build()


def hwp_char_spacing() -> bytes:
    """HWP export drawn the way HWP draws it: justified text as character spacing (PDF ``Tc``), so every
    character of prose and table cells comes out separated, and word spaces are lost."""
    font = _font("HYGothic-Medium")
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)

    def line(x: float, y: float, text: str, size: float = 10) -> None:
        t = c.beginText(x, y)
        t.setFont(font, size)
        t.setCharSpace(4)
        t.textLine(text)
        c.drawText(t)

    y = 800.0
    for text in (
        "펀드등급 산정기준서 (개정 2020.06)",
        "평가유형은 국내주식형, 해외주식형, 채권혼합형으로 구분한다.",
        "운용기간 2년 이상, 설정원본 1조원 이상인 펀드를 평가한다.",
        "동일유형 내 펀드가 20개 미만인 경우 등급을 산출하지 아니한다.",
        "운용기간 2년 이상 3년 미만인 펀드는 1년 100%, 3년 이상인 펀드는 1년 50%, 3년 50%를 반영한다.",
        "1등급 상위 10%, 2등급 다음 20%, 3등급 다음 40%, 4등급 다음 20%, 5등급 나머지 10%.",
    ):
        line(50, y, text)
        y -= 22
    rows = [["평가지표", "배점"], ["샤프지수", "40"], ["소르티노", "30"], ["칼마비율", "30"]]
    widths, height, top = (120.0, 60.0), 22.0, y - 10
    for r, row in enumerate(rows):
        x = 50.0
        for w, cell in zip(widths, row, strict=True):
            c.rect(x, top - (r + 1) * height, w, height)
            line(x + 6, top - (r + 1) * height + 7, cell, 9)
            x += w
    c.showPage()
    c.save()
    return buf.getvalue()
