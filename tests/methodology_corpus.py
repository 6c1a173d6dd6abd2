"""A corpus of firm-style methodology PDFs, built with reportlab at test time (no binary fixtures).

Each document differs in font, header words, units, merged cells, split tables, English/Korean mix and
prose-only rules, the way documents written by different firms' staff do. ``CORPUS`` pairs each builder
with the rubric it must read as (effective metric weights, period weights, band shares, eligibility) or
with the words its honest refusal must contain. Used by the tests and by ``benchmarks/methodology_ingest.py``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from evaluator.methodology.pdf_render import font_path

EOK = 100_000_000


def _font(name: str) -> str:
    if name not in pdfmetrics.getRegisteredFontNames():
        if name == "NanumGothic":
            pdfmetrics.registerFont(TTFont(name, str(font_path())))
        else:
            pdfmetrics.registerFont(UnicodeCIDFont(name))
    return name


class Doc:
    """A few lines of platypus: headings, paragraphs and grid tables with spans, in one font."""

    def __init__(self, font: str, size: float = 10) -> None:
        self.font = _font(font)
        self.story: list[Any] = []
        self.p_style = ParagraphStyle("p", fontName=self.font, fontSize=size, leading=size * 1.5, spaceAfter=4)
        self.h_style = ParagraphStyle("h", fontName=self.font, fontSize=size + 3, leading=(size + 3) * 1.5, spaceBefore=6)
        self.c_style = ParagraphStyle("c", fontName=self.font, fontSize=size - 1, leading=(size - 1) * 1.3)

    def h(self, text: str) -> Doc:
        self.story.append(Paragraph(text, self.h_style))
        return self

    def p(self, text: str) -> Doc:
        self.story.append(Paragraph(text, self.p_style))
        return self

    def space(self, height_mm: float) -> Doc:
        self.story.append(Spacer(1, height_mm * mm))
        return self

    def table(
        self,
        rows: Sequence[Sequence[str | None]],
        widths: Sequence[float],
        spans: Sequence[tuple[int, int, int, int]] = (),
        repeat_header: bool = True,
    ) -> Doc:
        data = [[Paragraph(c, self.c_style) if c else "" for c in row] for row in rows]
        style = [("GRID", (0, 0), (-1, -1), 0.5, colors.black), ("VALIGN", (0, 0), (-1, -1), "MIDDLE")]
        style += [("SPAN", (c0, r0), (c1, r1)) for c0, r0, c1, r1 in spans]
        self.story.append(
            Table(data, colWidths=[w * mm for w in widths], style=TableStyle(style), repeatRows=1 if repeat_header else 0)
        )
        return self

    def build(self) -> bytes:
        buf = io.BytesIO()
        SimpleDocTemplate(buf, pagesize=A4, topMargin=20 * mm, bottomMargin=20 * mm).build(self.story)
        return buf.getvalue()


def spaced(text: str) -> str:
    """HWP-style justified text: every character of every word spaced out."""
    return " ".join(ch for ch in text if ch != " ")


@dataclass
class Case:
    name: str
    build: Callable[[], bytes]
    effective: dict[str, float] = field(default_factory=dict)
    qualitative_weight: float | None = None
    periods: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    bands: list[float] = field(default_factory=list)
    eligibility: dict[str, Any] = field(default_factory=dict)
    peer_groups: list[str] = field(default_factory=list)
    refusal: tuple[str, ...] = ()


GROUPS_A = "펀드 유형은 국내주식형, 해외주식형, 국내채권형, 혼합형으로 구분하여 동일 유형 내에서 상대 평가한다."


def kofr_points_merged() -> bytes:
    """Chapters, `구분 | 평가지표 | 배점` with merged 구분 cells and a 합계 row, cumulative band ranges."""
    return (
        Doc("HYSMyeongJo-Medium")
        .p("한국펀드평가 펀드등급 평가방법론 (개정 2024.03)")
        .h("제1장 총칙")
        .p("이 방법론은 공모펀드의 과거 성과를 계량적으로 평가하여 등급을 부여하는 기준을 정한다.")
        .p(GROUPS_A)
        .h("제2장 평가대상")
        .p("평가기준일 현재 운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가대상으로 한다.")
        .p("동일 유형 내 평가대상 펀드가 10개 미만인 경우 해당 유형은 등급을 산출하지 아니한다.")
        .h("제3장 평가지표 및 배점")
        .table(
            [
                ["구분", "평가지표", "배점"],
                ["수익률", "연환산 수익률", "25"],
                ["위험조정성과", "샤프지수", "20"],
                [None, "소르티노 비율", "15"],
                [None, "MRAR", "10"],
                ["위험", "표준편차", "15"],
                [None, "최대손실률(MDD)", "15"],
                ["합계", "", "100"],
            ],
            (40, 60, 30),
            spans=[(0, 2, 0, 4), (0, 5, 0, 6), (0, 7, 1, 7)],
        )
        .h("제4장 평가기간")
        .p("운용기간 3년 이상 5년 미만인 펀드는 3년 100%를 반영한다.")
        .p("5년 이상 10년 미만인 펀드는 3년 50%, 5년 50%를 반영한다.")
        .p("10년 이상인 펀드는 3년 30%, 5년 30%, 10년 40%를 반영한다.")
        .h("제5장 등급 부여")
        .table(
            [
                ["등급", "구간"],
                ["1등급", "상위 10% 이내"],
                ["2등급", "상위 10% 초과 30% 이내"],
                ["3등급", "상위 30% 초과 70% 이내"],
                ["4등급", "상위 70% 초과 90% 이내"],
                ["5등급", "상위 90% 초과"],
            ],
            (30, 80),
        )
        .build()
    )


def percent_split_tables(repeat_header: bool = True) -> bytes:
    """Two weight columns (항목 and 지표), merged category cells, a table split over two pages with its header
    repeated, a share table for bands, a wide period table, a 채권형 override, NanumGothic (TrueType)."""
    doc = Doc("NanumGothic").p("K자산평가 펀드 평가 기준서").p("시행일: 2025-01-01")
    doc.h("1. 평가 대상").p(
        "평가대상은 운용기간이 3년 이상이고 설정액이 50억원 이상인 공모펀드로 한다. 다만, 채권형 펀드는 설정액 300억원 이상인 "
        "펀드만 평가한다. 동일 유형의 펀드 수가 5개 이하인 경우 등급을 부여하지 않는다."
    )
    doc.table([["순번", "펀드유형"], ["1", "주식형"], ["2", "채권형"], ["3", "혼합형"]], (20, 60))
    doc.h("2. 평가 기간")
    doc.table(
        [
            ["운용기간", "3년", "5년", "10년"],
            ["3년 이상 5년 미만", "100", "-", "-"],
            ["5년 이상 10년 미만", "40", "60", "-"],
            ["10년 이상", "20", "30", "50"],
        ],
        (50, 25, 25, 25),
    )
    doc.h("3. 평가 항목")
    for _ in range(4):
        doc.p("각 지표는 동일 유형 내 백분위 순위로 환산하며, 항목 점수는 지표 점수의 가중 평균이다. " * 3)
    doc.space(60)
    doc.table(
        [
            ["평가항목", "항목 가중치(%)", "세부지표", "지표 가중치(%)"],
            ["수익성", "30", "연환산 수익률", "100"],
            ["위험조정성과", "40", "샤프지수", "40"],
            [None, None, "소르티노", "30"],
            [None, None, "MRAR", "30"],
            ["위험관리", "30", "변동성", "50"],
            [None, None, "최대낙폭", "50"],
        ],
        (35, 30, 45, 30),
        spans=[(0, 2, 0, 4), (1, 2, 1, 4), (0, 5, 0, 6), (1, 5, 1, 6)],
        repeat_header=repeat_header,
    )
    doc.h("4. 등급")
    doc.table(
        [["등급", "비중(%)"], ["1", "10"], ["2", "22.5"], ["3", "35"], ["4", "22.5"], ["5", "10"]], (30, 30)
    )
    return doc.build()


def english_fractions() -> bytes:
    """English headers and metric names (abbreviations), fractional weights, English sentences, KRW billion."""
    return (
        Doc("HYGothic-Medium")
        .p("Fund Rating Methodology (Version 3.1)")
        .p("Peer groups (유형): 국내주식형, 해외주식형, 채권형.")
        .p(
            "Funds with at least 3 years of history and a fund size of KRW 10 billion or more are eligible. "
            "A peer group with fewer than 8 funds is not rated."
        )
        .p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
        .table(
            [
                ["Category", "Metric", "Weight"],
                ["Return", "Annualized return", "0.2"],
                ["Risk-adjusted", "Sharpe ratio", "0.3"],
                ["Benchmark", "Information Ratio (IR)", "0.2"],
                [None, "TE", "0.1"],
                ["Risk", "MDD", "0.2"],
            ],
            (40, 60, 30),
            spans=[(0, 3, 0, 4)],
        )
        .p(
            "Grades: Grade 1 top 10%, Grade 2 next 22.5%, Grade 3 next 35%, Grade 4 next 22.5%, Grade 5 bottom 10%."
        )
        .build()
    )


def incell_lists() -> bytes:
    """Metric lists inside one cell with their weights, a cumulative top-% column, an eligibility table."""
    return (
        Doc("HYSMyeongJo-Medium", 9)
        .p("펀드 평가등급 산정 방법 (버전 2023.2)")
        .p("평가 유형은 국내주식형, 국내채권형, 해외주식형으로 분류한다.")
        .table(
            [
                ["구분", "기준"],
                ["운용기간", "3년 이상"],
                ["설정원본", "1조 5,000억원 이상"],
                ["동일 유형 펀드 수", "10개 미만이면 해당 유형 등급 미산출"],
            ],
            (40, 80),
        )
        .p("운용기간이 5년 미만인 펀드는 3년 100%, 5년 이상인 펀드는 3년 40%, 5년 60%를 반영한다.")
        .table(
            [
                ["평가부문", "비중", "세부지표(가중치)"],
                ["위험조정성과", "40%", "샤프지수(50%), 소르티노(30%), 칼마(20%)"],
                ["수익성", "30%", "연환산수익률"],
                ["안정성", "30%", "표준편차(50%), 최대낙폭(50%)"],
            ],
            (35, 20, 90),
        )
        .table(
            [["등급", "누적 상위(%)"], ["1등급", "10"], ["2등급", "30"], ["3등급", "70"], ["4등급", "90"], ["5등급", "100"]],
            (30, 40),
        )
        .build()
    )


def quant_qual_points() -> bytes:
    """Quantitative 80 + qualitative 20 points in one table with a 구분 column, bands in a sentence."""
    return (
        Doc("NanumGothic")
        .p("OO투자증권 펀드 추천등급 평가방법론")
        .p("개정일자: 2024.07")
        .p("대상 유형은 국내주식형, 해외주식형, 혼합형으로 나눈다.")
        .p("운용기간 1년 이상, 설정액 30억원 이상인 펀드를 평가한다. 같은 유형의 펀드가 5개 미만이면 등급을 부여하지 아니한다.")
        .p("운용기간 1년 이상 3년 미만인 펀드는 1년 100%, 3년 이상인 펀드는 1년 30%, 3년 70%를 반영한다.")
        .table(
            [
                ["구분", "평가항목", "세부지표", "배점"],
                ["정량평가", "수익률", "연환산 수익률", "30"],
                [None, "위험조정수익률", "샤프지수", "30"],
                [None, "위험", "변동성", "20"],
                ["정성평가", "운용역량", "운용철학", "10"],
                [None, None, "운용조직", "10"],
                ["합계", "", "", "100"],
            ],
            (30, 40, 40, 20),
            spans=[(0, 1, 0, 3), (0, 4, 0, 5), (1, 4, 1, 5), (0, 6, 2, 6)],
        )
        .p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
        .build()
    )


def prose_only() -> bytes:
    """No table at all: every rule is a sentence, including a per-유형 override and cumulative bands."""
    return (
        Doc("HYGothic-Medium")
        .p("펀드 성과평가 규정")
        .p("제1조(버전) 이 규정은 2022.1 판이다.")
        .p("제2조(유형) 평가 유형은 주식형, 채권형, 혼합형으로 구분한다.")
        .p(
            "제3조(대상) 운용기간 2년 이상, 설정원본 200억원 이상인 펀드를 대상으로 한다. 단, 혼합형 펀드는 설정원본 "
            "100억원 이상이면 평가한다."
        )
        .p("제4조(최소 펀드 수) 동일 유형 내 평가대상 펀드가 7개 미만인 경우 등급을 산출하지 아니한다.")
        .p("제5조(지표) 평가지표와 가중치는 연환산 수익률 30%, 샤프지수 40%, 최대손실률 30%로 한다.")
        .p("제6조(기간) 운용기간 2년 이상 3년 미만인 펀드는 1년 100%를 반영한다. 3년 이상인 펀드는 1년 40%, 3년 60%를 반영한다.")
        .p(
            "제7조(등급) 1등급: 상위 10% 이내, 2등급: 상위 10% 초과 30% 이내, 3등급: 상위 30% 초과 70% 이내, "
            "4등급: 상위 70% 초과 90% 이내, 5등급: 상위 90% 초과."
        )
        .build()
    )


def hwp_letter_spaced() -> bytes:
    """HWP export: justified headings, headers and cells come out letter-spaced (평 가 지 표)."""
    s = spaced
    return (
        Doc("HYSMyeongJo-Medium")
        .p(s("펀드평가방법론") + " (개정 2021.12)")
        .p(s("평가유형은") + " " + s("국내주식형,") + " " + s("해외주식형,") + " " + s("채권형으로") + " " + s("구분한다."))
        .p(s("운용기간") + " 3 " + s("년이상,") + " " + s("설정원본") + " 50 " + s("억원이상인펀드를평가한다."))
        .p(s("동일유형의펀드가") + " 6 " + s("개미만인경우등급을산출하지아니한다."))
        .p(s("운용기간3년이상인펀드는3년100%를반영한다."))
        .table(
            [
                [s("평가항목"), s("평가지표"), s("가중치")],
                [s("수익률"), s("연환산수익률"), s("20%")],
                [s("위험조정성과"), s("샤프지수"), s("30%")],
                [None, s("정보비율"), s("20%")],
                [s("위험"), s("표준편차"), s("30%")],
                [s("합계"), "", s("100%")],
            ],
            (40, 50, 30),
            spans=[(0, 2, 0, 3), (0, 5, 1, 5)],
        )
        .p(s("등급부여기준"))
        .table(
            [
                [s("등급"), s("비율")],
                [s("1등급"), s("10%")],
                [s("2등급"), s("20%")],
                [s("3등급"), s("40%")],
                [s("4등급"), s("20%")],
                [s("5등급"), s("10%")],
            ],
            (30, 30),
        )
        .build()
    )


def stated_total_50() -> bytes:
    """Points out of a stated total of 50 (합계 row), months for history, 억 without 원, band shares in a sentence."""
    return (
        Doc("HYGothic-Medium")
        .p("글로벌펀드평가 등급 산정 기준 ver 4.0")
        .p("유형 구분: 해외주식형, 해외채권형, 글로벌자산배분형.")
        .p("설정 후 36개월 이상 경과하고 설정원본 200억 이상인 펀드를 평가한다. 동류그룹 펀드가 10개 이하인 경우 등급을 산출하지 않는다.")
        .p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
        .table(
            [
                ["평가요소", "지표", "점수"],
                ["초과성과", "정보비율(IR)", "20"],
                [None, "젠센 알파", "10"],
                ["위험", "추적오차(TE)", "10"],
                [None, "베타", "-"],
                ["안정성", "칼마 비율", "10"],
                ["합계", "", "50"],
            ],
            (40, 50, 30),
            spans=[(0, 1, 0, 2), (0, 3, 0, 4), (0, 6, 1, 6)],
        )
        .p("등급 비율은 1등급 10%, 2등급 20%, 3등급 40%, 4등급 20%, 5등급 10%로 한다.")
        .build()
    )


def refused_no_weights() -> bytes:
    """Metrics are listed, but the document never says how much each counts."""
    return (
        Doc("HYSMyeongJo-Medium")
        .p("펀드 평가 안내서 (개정 2020.01)")
        .p(GROUPS_A)
        .p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
        .p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
        .table([["평가항목", "평가지표"], ["수익률", "연환산 수익률"], ["위험조정성과", "샤프지수"], [None, "소르티노"]], (50, 60),
               spans=[(0, 2, 0, 3)])
        .p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
        .build()
    )


def refused_two_tables() -> bytes:
    """Two criteria tables that disagree (an old and a new weighting left in one document)."""
    doc = (
        Doc("HYSMyeongJo-Medium")
        .p("펀드 평가 방법론 (개정 2024.01)")
        .p(GROUPS_A)
        .p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
        .p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
    )
    doc.p("가. 평가지표(2023년까지)").table(
        [["평가지표", "가중치"], ["연환산 수익률", "50%"], ["샤프지수", "50%"]], (60, 30)
    )
    doc.p("나. 평가지표(2024년부터)").table(
        [["평가지표", "가중치"], ["연환산 수익률", "40%"], ["샤프지수", "60%"]], (60, 30)
    )
    doc.p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
    return doc.build()


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


STANDARD_BANDS = [10.0, 22.5, 35.0, 22.5, 10.0]
RANGE_BANDS = [10.0, 20.0, 40.0, 20.0, 10.0]

CORPUS: list[Case] = [
    Case(
        "kofr_points_merged", kofr_points_merged,
        effective={"annualized_return": 0.25, "sharpe": 0.20, "sortino": 0.15, "mrar": 0.10,
                   "annualized_volatility": 0.15, "max_drawdown": 0.15},
        periods=[(3, {"3y": 100}), (5, {"3y": 50, "5y": 50}), (10, {"3y": 30, "5y": 30, "10y": 40})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "해외주식형", "국내채권형", "혼합형"],
    ),
    Case(
        "percent_split_tables", percent_split_tables,
        effective={"annualized_return": 0.30, "sharpe": 0.16, "sortino": 0.12, "mrar": 0.12,
                   "annualized_volatility": 0.15, "max_drawdown": 0.15},
        periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60}), (10, {"3y": 20, "5y": 30, "10y": 50})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 50 * EOK, "min_peer_group_size": 6,
                     "overrides": {"채권형": {"min_set_amount_krw": 300 * EOK}}},
        peer_groups=["주식형", "채권형", "혼합형"],
    ),
    Case(
        "english_fractions", english_fractions,
        effective={"annualized_return": 0.2, "sharpe": 0.3, "information_ratio": 0.2, "tracking_error": 0.1,
                   "max_drawdown": 0.2},
        periods=[(3, {"3y": 100})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 10_000_000_000, "min_peer_group_size": 8},
        peer_groups=["국내주식형", "해외주식형", "채권형"],
    ),
    Case(
        "incell_lists", incell_lists,
        effective={"sharpe": 0.20, "sortino": 0.12, "calmar": 0.08, "annualized_return": 0.30,
                   "annualized_volatility": 0.15, "max_drawdown": 0.15},
        periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 15_000 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "국내채권형", "해외주식형"],
    ),
    Case(
        "quant_qual_points", quant_qual_points,
        effective={"annualized_return": 0.375, "sharpe": 0.375, "annualized_volatility": 0.25},
        qualitative_weight=20.0,
        periods=[(1, {"1y": 100}), (3, {"1y": 30, "3y": 70})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 1, "min_set_amount_krw": 30 * EOK, "min_peer_group_size": 5},
        peer_groups=["국내주식형", "해외주식형", "혼합형"],
    ),
    Case(
        "prose_only", prose_only,
        effective={"annualized_return": 0.3, "sharpe": 0.4, "max_drawdown": 0.3},
        periods=[(2, {"1y": 100}), (3, {"1y": 40, "3y": 60})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 2, "min_set_amount_krw": 200 * EOK, "min_peer_group_size": 7,
                     "overrides": {"혼합형": {"min_set_amount_krw": 100 * EOK}}},
        peer_groups=["주식형", "채권형", "혼합형"],
    ),
    Case(
        "hwp_letter_spaced", hwp_letter_spaced,
        effective={"annualized_return": 0.2, "sharpe": 0.3, "information_ratio": 0.2, "annualized_volatility": 0.3},
        periods=[(3, {"3y": 100})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 50 * EOK, "min_peer_group_size": 6},
        peer_groups=["국내주식형", "해외주식형", "채권형"],
    ),
    Case(
        "stated_total_50", stated_total_50,
        effective={"information_ratio": 0.4, "jensen_alpha": 0.2, "tracking_error": 0.2, "calmar": 0.2},
        periods=[(3, {"3y": 100})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 200 * EOK, "min_peer_group_size": 11},
        peer_groups=["해외주식형", "해외채권형", "글로벌자산배분형"],
    ),
    Case(
        "months_and_definitions", months_and_definitions,
        effective={"annualized_return": 0.3, "sharpe": 0.3, "sortino": 0.2, "max_drawdown": 0.2},
        periods=[(3, {"3y": 100}), (5, {"3y": 40, "5y": 60}), (10, {"3y": 20, "5y": 30, "10y": 50})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 200 * EOK, "min_peer_group_size": 11},
        peer_groups=["국내주식일반형", "국내주식인덱스형", "국내채권형", "해외주식형"],
    ),
    Case(
        "three_level_table", three_level_table,
        effective={"annualized_return": 2 / 7, "sharpe": 2 / 7, "jensen_alpha": 1 / 7, "max_drawdown": 2 / 7},
        qualitative_weight=30.0,
        periods=[(3, {"3y": 100})],
        bands=STANDARD_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "채권형", "혼합형"],
    ),
    Case(
        "fractions_within_points", fractions_within_points,
        effective={"annualized_return": 0.4, "sharpe": 0.3, "sortino": 0.3},
        periods=[(3, {"3y": 100})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 3, "min_set_amount_krw": 100 * EOK, "min_peer_group_size": 10},
        peer_groups=["국내주식형", "채권형", "혼합형"],
    ),
    Case(
        "hwp_char_spacing", hwp_char_spacing,
        effective={"sharpe": 0.4, "sortino": 0.3, "calmar": 0.3},
        periods=[(2, {"1y": 100}), (3, {"1y": 50, "3y": 50})],
        bands=RANGE_BANDS,
        eligibility={"min_history_years": 2, "min_set_amount_krw": 1_000_000_000_000, "min_peer_group_size": 20},
        peer_groups=["국내주식형", "해외주식형", "채권혼합형"],
    ),
    Case("refused_no_weights", refused_no_weights, refusal=("have no weights", "ingest does not guess")),
    Case(
        "refused_shared_weight", refused_shared_weight,
        refusal=("lists 샤프지수, 소르티노 without weights", "does not split"),
    ),
    Case("refused_star_ratings", refused_star_ratings, refusal=("[missing] grade_bands", "star ratings (★")),
    Case(
        "refused_unread_qualitative", refused_unread_qualitative,
        refusal=("[missing] qualitative", "정성평가 20%", "--fill"),
    ),
    Case(
        "refused_two_tables", refused_two_tables,
        refusal=("two candidate criteria tables that disagree", "table 1 on p.1", "table 2 on p.1"),
    ),
]


def summary(rubric: dict[str, Any]) -> dict[str, Any]:
    """What a case checks: effective metric weights (share of the quantitative score), periods, bands, eligibility."""
    effective: dict[str, float] = {}
    for c in rubric["criteria"]:
        for m in c["metrics"]:
            effective[m["metric"]] = effective.get(m["metric"], 0.0) + c["weight"] / 100 * m["weight"] / 100
    qual = rubric.get("qualitative")
    return {
        "effective": effective,
        "qualitative_weight": qual["weight"] if qual else None,
        "periods": [(r["min_history_years"], r["weights"]) for r in rubric["period_weights"]],
        "bands": [b["share"] for b in rubric["grade_bands"]],
        "eligibility": rubric["eligibility"],
        "peer_groups": rubric["peer_groups"],
    }


def mismatches(case: Case, rubric: dict[str, Any]) -> list[str]:
    """Every way ``rubric`` differs from what ``case`` expects (weights to 1e-9); empty when read exactly."""
    got = summary(rubric)
    out: list[str] = []
    if set(got["effective"]) != set(case.effective) or any(
        abs(got["effective"][k] - v) > 1e-9 for k, v in case.effective.items()
    ):
        out.append(f"effective weights {got['effective']} != {case.effective}")
    if (got["qualitative_weight"] is None) != (case.qualitative_weight is None) or (
        case.qualitative_weight is not None and abs(got["qualitative_weight"] - case.qualitative_weight) > 1e-9
    ):
        out.append(f"qualitative weight {got['qualitative_weight']} != {case.qualitative_weight}")
    want_periods = [(float(y), {k: float(v) for k, v in w.items()}) for y, w in case.periods]
    have_periods = [(float(y), {k: float(v) for k, v in w.items()}) for y, w in got["periods"]]
    if have_periods != want_periods:
        out.append(f"periods {have_periods} != {want_periods}")
    if len(got["bands"]) != 5 or any(abs(a - b) > 1e-9 for a, b in zip(got["bands"], case.bands, strict=True)):
        out.append(f"bands {got['bands']} != {case.bands}")
    if got["eligibility"] != case.eligibility:
        out.append(f"eligibility {got['eligibility']} != {case.eligibility}")
    if got["peer_groups"] != case.peer_groups:
        out.append(f"peer groups {got['peer_groups']} != {case.peer_groups}")
    return out
