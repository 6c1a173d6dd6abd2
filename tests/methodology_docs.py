"""Firm-style methodology documents, part 1: chapters, merged cells, split tables, units, prose, HWP spacing.

Each builder returns PDF bytes; ``methodology_corpus.CORPUS`` pairs it with what it must read as.
"""

from __future__ import annotations

from methodology_pdfdoc import Doc, spaced

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
