"""Firm-style documents with the rules firms publish beyond one 1–5 ranking: 가등급 for young funds, 유형 taken
from the data, star and 7-grade scales, and the honest refusals where such a rule is only half stated.

Each builder returns PDF bytes; ``methodology_corpus.CORPUS`` pairs it with what it must read as.
"""

from __future__ import annotations

from methodology_pdfdoc import Doc, spaced

_ELIGIBLE = (
    "평가기준일 현재 운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가대상으로 한다. "
    "동일 유형 내 평가대상 펀드가 10개 미만인 경우 해당 유형은 등급을 산출하지 아니한다."
)
_PERIODS = "운용기간 3년 이상인 펀드는 3년 100%를 반영한다."
_BANDS = "상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다."


def _criteria(doc: Doc) -> Doc:
    return doc.table([["평가지표", "가중치"], ["연환산 수익률", "40%"], ["샤프지수", "60%"]], (60, 30))


def association_types_prose() -> bytes:
    """No list of 유형: '협회 표준 분류를 따른다' (every 유형 in the data is a peer group), prose bands."""
    d = Doc("HYSMyeongJo-Medium").p("C펀드평가 등급 산정 기준 (개정 2024.06)")
    d.p("펀드 유형은 금융투자협회 표준 분류를 따른다.").p(_ELIGIBLE).p(_PERIODS)
    return _criteria(d).p(_BANDS).build()


def provisional_prose() -> bytes:
    """A Zeroin-style 가등급 rule in prose, next to the regular rules whose '3년 이상' it must not disturb."""
    d = Doc("HYSMyeongJo-Medium").p("제로펀드평가 펀드등급 방법론 (개정 2025.01)")
    d.p("평가 유형은 국내주식형, 채권형, 혼합형으로 구분한다.").p(_ELIGIBLE).p(_PERIODS)
    d.p("운용기간 1년 이상 3년 미만인 펀드는 최근 1년 성과로 동일 유형 내 순위를 매겨 가등급을 부여한다.")
    d.p("운용기간 1년 미만인 펀드는 등급을 부여하지 아니한다.")
    return _criteria(d).p(_BANDS).build()


def provisional_table_spaced() -> bytes:
    """The 가등급 rule as a table row, letter-spaced the way HWP exports justify text; 잠정등급 wording."""
    d = Doc("HYGothic-Medium").p(spaced("D평가 펀드 잠정등급 기준") + " (개정 2023.03)")
    d.p("평가 유형은 국내주식형, 채권형으로 구분한다.").p(_ELIGIBLE).p(_PERIODS)
    d.table(
        [["구분", "운용기간", "평가기간"], [spaced("잠정등급"), "1년 이상 3년 미만", "1년"]],
        (40, 60, 30),
    )
    return _criteria(d).p(_BANDS).build()


def star_table() -> bytes:
    """Morningstar-style stars in a table, 5★ best, shares from the best band down."""
    d = Doc("HYSMyeongJo-Medium").p("Star Rating Methodology 별등급 (ver. 2024.1)")
    d.p("평가 유형은 국내주식형, 채권형, 혼합형으로 구분한다.").p(_ELIGIBLE).p(_PERIODS)
    d = _criteria(d)
    d.table(
        [["등급", "비율"], ["★★★★★", "10%"], ["★★★★", "22.5%"], ["★★★", "35%"], ["★★", "22.5%"], ["★", "10%"]],
        (40, 30),
    )
    return d.build()


def seven_grades_prose() -> bytes:
    """Seven grades with 1 best, in one sentence."""
    d = Doc("HYSMyeongJo-Medium").p("E평가 7단계 등급 방법론 (개정 2022.09)")
    d.p("평가 유형은 국내주식형, 채권형으로 구분한다.").p(_ELIGIBLE).p(_PERIODS)
    d = _criteria(d)
    d.p("1등급 상위 5%, 2등급 다음 10%, 3등급 다음 15%, 4등급 다음 40%, 5등급 다음 15%, 6등급 다음 10%, 7등급 나머지 5%.")
    return d.build()


def refused_provisional_no_window() -> bytes:
    """A 가등급 range with no window it is graded on: refused, not guessed."""
    d = Doc("HYSMyeongJo-Medium").p("F평가 방법론 (개정 2024.02)")
    d.p("평가 유형은 국내주식형, 채권형으로 구분한다.").p(_ELIGIBLE).p(_PERIODS)
    d.p("운용기간 1년 이상 3년 미만인 펀드에는 가등급을 부여한다.")
    return _criteria(d).p(_BANDS).build()


_TWO_TYPES = "평가 유형은 주식형, 채권형으로 구분한다."


def weights_per_type_columns() -> bytes:
    """`평가지표 | 주식형 배점 | 채권형 배점`: bonds weighted more on risk (the table once misread as category and
    metric weights)."""
    d = Doc("HYSMyeongJo-Medium").p("G펀드평가 유형별 배점 기준 (개정 2024.09)").p(_TWO_TYPES).p(_ELIGIBLE).p(_PERIODS)
    d.table(
        [
            ["평가지표", "주식형 배점", "채권형 배점"],
            ["연환산 수익률", "40", "20"],
            ["샤프지수", "30", "20"],
            ["표준편차", "15", "35"],
            ["최대손실률", "15", "25"],
            ["합계", "100", "100"],
        ],
        (50, 30, 30),
    )
    return d.p(_BANDS).build()


def weights_per_type_categories() -> bytes:
    """`구분 | 평가지표 | 주식형(%) | 채권형(%)` with merged 구분 cells: the categories' weights differ by 유형 too."""
    d = Doc("NanumGothic").p("H평가 방법론 (개정 2023.11)").p(_TWO_TYPES).p(_ELIGIBLE).p(_PERIODS)
    d.table(
        [
            ["구분", "평가지표", "주식형(%)", "채권형(%)"],
            ["수익성", "연환산 수익률", "50", "30"],
            ["위험", "표준편차", "25", "40"],
            [None, "최대손실률", "25", "30"],
        ],
        (30, 50, 25, 25),
        spans=[(0, 2, 0, 3)],
    )
    return d.p(_BANDS).build()


def weights_per_type_tables() -> bytes:
    """One table per 유형, the 유형 named in its header, letter-spaced headers."""
    d = Doc("HYGothic-Medium").p("I평가 펀드등급 기준서 (개정 2025.03)").p(_TWO_TYPES).p(_ELIGIBLE).p(_PERIODS)
    d.table([["주식형 평가지표", spaced("가중치")], ["연환산 수익률", "60%"], ["샤프지수", "40%"]], (60, 30))
    d.table([["채권형 평가지표", spaced("가중치")], ["연환산 수익률", "30%"], ["표준편차", "70%"]], (60, 30))
    return d.p(_BANDS).build()


def refused_type_without_weights() -> bytes:
    """Weights for 주식형 and 채권형, but 혼합형 is a peer group too: refused, never given another 유형's weights."""
    d = Doc("HYSMyeongJo-Medium").p("J평가 방법론 (개정 2024.04)").p("평가 유형은 주식형, 채권형, 혼합형으로 구분한다.")
    d.p(_ELIGIBLE).p(_PERIODS)
    d.table([["평가지표", "주식형 배점", "채권형 배점"], ["연환산 수익률", "60", "30"], ["표준편차", "40", "70"]], (50, 30, 30))
    return d.p(_BANDS).build()


def english_korean_edition() -> bytes:
    """A foreign rater's Korean edition: bilingual headers, `Track record | 3Y | 5Y | 10Y` with English rows,
    English eligibility sentences with KRW billion (억원), mixed metric cells."""
    d = Doc("HYSMyeongJo-Medium").p("Global Fund Ratings 펀드 등급 방법론 (Version 2024.2)")
    d.p("Peer groups 평가 유형: 국내주식형, 해외주식형, 채권형.")
    d.p("Minimum track record: 3 years. Minimum fund size: KRW 10 billion (100억원). A peer group needs at least 5 eligible funds.")
    d.table(
        [
            ["Category 구분", "Weight", "Metric 지표", "Metric weight"],
            ["Return 수익률", "40", "Annualized return 연환산 수익률", "100"],
            ["Risk-adjusted 위험조정성과", "60", "Sharpe ratio 샤프지수", "50"],
            [None, None, "Sortino ratio 소르티노 비율", "50"],
        ],
        (45, 20, 60, 25),
        spans=[(0, 2, 0, 3), (1, 2, 1, 3)],
    )
    d.table(
        [
            ["Track record", "3Y", "5Y", "10Y"],
            ["3 years or more, under 5", "100", "-", "-"],
            ["5 years or more, under 10", "50", "50", "-"],
            ["10 years or more", "30", "30", "40"],
        ],
        (55, 20, 20, 20),
    )
    d.p("Top 10%: 1등급, next 22.5%: 2등급, next 35%: 3등급, next 22.5%: 4등급, bottom 10%: 5등급.")
    return d.build()


def english_prose_stars() -> bytes:
    """English prose only: peer groups by the association's classification, a provisional rating on 1-year
    performance, metric weights in a sentence, star bands (5★ best)."""
    d = Doc("HYSMyeongJo-Medium").p("Fund Star Rating Methodology (Version 3.1)")
    d.p("Peer groups follow the KOFIA standard fund classification.")
    d.p("Funds with a track record of at least 3 years and net assets of at least KRW 5 billion are rated.")
    d.p("Peer groups with fewer than 8 funds are not rated.")
    d.p("Funds with 1 year or more but under 3 years of track record receive a provisional rating on 1-year performance.")
    d.p("The score weights annualized return 30%, Sharpe ratio 40% and maximum drawdown 30%.")
    d.p("Funds with 3 years or more of history use the 3-year window: 3Y 100%.")
    d.p("Top 10% receive ★★★★★, next 22.5% ★★★★, next 35% ★★★, next 22.5% ★★, bottom 10% ★.")
    return d.build()


def english_korean_spaced() -> bytes:
    """Bilingual headers with letter-spaced Korean (HWP), English period table rows in months, 억원 and billion."""
    d = Doc("HYGothic-Medium").p("Asia Fund Research 평가 기준 (Rev. 2023.7)")
    d.p("평가 유형은 주식형, 채권형으로 구분한다.")
    d.p("Minimum track record: 36 months. Minimum fund size: 50억원 (KRW 5 billion).")
    d.p("Peer groups with fewer than 6 funds are not rated.")
    d.table(
        [
            ["Metric " + spaced("평가지표"), "Weight " + spaced("가중치")],
            ["Sharpe ratio 샤프지수", "50%"],
            ["Max drawdown 최대낙폭", "50%"],
        ],
        (70, 40),
    )
    d.table([["Track record", "3Y", "5Y"], ["36 months or more", "100", "-"], ["60 months or more", "40", "60"]], (50, 20, 20))
    d.p(_BANDS)
    return d.build()


def refused_mixed_cell_two_metrics() -> bytes:
    """A bilingual cell whose two names are two different metrics: reported, not one picked."""
    d = Doc("HYSMyeongJo-Medium").p("K Ratings 방법론 (Version 1.0)").p(_TWO_TYPES).p(_ELIGIBLE).p(_PERIODS)
    d.table([["Metric 지표", "Weight"], ["Sharpe ratio 표준편차", "60"], ["Annualized return 연환산 수익률", "40"]], (70, 30))
    return d.p(_BANDS).build()
