"""Render a rubric as a Korean methodology PDF: explanatory text, then every value in a table.

The PDF is what analysts circulate and sign off; :mod:`evaluator.methodology.pdf_ingest` reads it back to
the identical rubric. Font: a subset of NanumGothic (from the ``koreanize-matplotlib`` package) is embedded,
so the Korean text shows on machines without Korean fonts (a reportlab CID font is not embedded).
"""

from __future__ import annotations

import importlib.util
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

from evaluator.core.outputs import ensure_new_file
from evaluator.methodology import pdf_layout as L
from evaluator.methodology.rubric import METRICS, grade_cutoffs, validate_rubric

_STYLES: dict[str, ParagraphStyle] = {}
PERIOD_KO = {"1y": "1년", "3y": "3년", "5y": "5년", "10y": "10년"}

METRIC_DEFINITIONS = (
    "일간 수익률 r = 기준가격(t) / 기준가격(t-1) - 1, 일간 무위험수익률 rf = (1 + 연 무위험이자율)^(1/252) - 1, n = 기간 내 수익률 개수.",
    "연환산 수익률 = Π(1 + r)^(252/n) - 1. 연환산 변동성 = 표준편차(r, 표본) × √252.",
    "샤프지수 = 평균(r - rf) / 표준편차(r - rf) × √252. 소르티노 비율 = 평균(r - rf) × 252 / (√평균(min(r - rf, 0)²) × √252).",
    "최대낙폭 = 기간 시작을 1로 한 누적 자산의 직전 고점 대비 최저 하락률(음수). 칼마 비율 = 연환산 수익률 / |최대낙폭|.",
    "베타 = 공분산(r - rf, b - rf) / 분산(b - rf). 젠센 알파 = (평균(r - rf) - 베타 × 평균(b - rf)) × 252. b는 벤치마크 일간 수익률.",
    "추적오차 = 표준편차(r - b) × √252. 정보비율 = 평균(r - b) × 252 / 추적오차.",
    "MRAR(γ=2) = (평균((1 + ER)^(-2)))^(-6) - 1, ER = (1 + 월간 수익률) / (1 + 월간 무위험수익률) - 1, 월말 기준가격 사용.",
)


def font_path() -> Path:
    """NanumGothic.ttf inside the installed ``koreanize-matplotlib`` (found without importing it, which would
    reconfigure matplotlib)."""
    spec = importlib.util.find_spec("koreanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the koreanize-matplotlib package (which ships the NanumGothic font) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / L.FONT_FILE
    if not path.is_file():
        raise RuntimeError(f"{path} is missing; reinstall koreanize-matplotlib")
    return path


def _style(name: str) -> ParagraphStyle:
    if not _STYLES:
        if L.FONT not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(L.FONT, str(font_path())))
        _STYLES["title"] = ParagraphStyle("title", fontName=L.FONT, fontSize=16, leading=22, spaceAfter=8)
        _STYLES["h"] = ParagraphStyle(
            "h", fontName=L.FONT, fontSize=12, leading=17, spaceBefore=10, spaceAfter=4
        )
        _STYLES["p"] = ParagraphStyle("p", fontName=L.FONT, fontSize=9.5, leading=14, spaceAfter=4)
        _STYLES["cell"] = ParagraphStyle("cell", fontName=L.FONT, fontSize=8.5, leading=11)
    return _STYLES[name]


def _p(text: str, style: str = "p") -> Paragraph:
    return Paragraph(escape(text), _style(style))


_CELL_PADDING = 6.0  # reportlab's default left/right cell padding, in points
_MIN_FONT = 4.0


def _cell(text: str, width_pt: float) -> Paragraph:
    """A table cell whose every word fits on one line: the cell's font shrinks rather than split a word,
    because ingest must tell a wrap (at a space) from the text itself."""
    base = _style("cell")
    room = width_pt - 2 * _CELL_PADDING
    widest = max((pdfmetrics.stringWidth(w, L.FONT, base.fontSize) for w in text.split()), default=0.0)
    if widest <= room:
        return Paragraph(escape(text), base)
    size = base.fontSize * room / widest * 0.98
    if size < _MIN_FONT:
        raise ValueError(f"the word {max(text.split(), key=len)!r} is too long for a methodology table cell")
    key = f"cell{size:.2f}"
    if key not in _STYLES:
        _STYLES[key] = ParagraphStyle(key, parent=base, fontSize=size, leading=size * 1.3)
    return Paragraph(escape(text), _STYLES[key])


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[float]) -> Table:
    cells = [
        [_cell(str(c), w * mm) for c, w in zip(row, widths, strict=True)] for row in [list(header), *rows]
    ]
    table = Table(cells, colWidths=[w * mm for w in widths], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8eef7")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def _n(value: Any) -> str:
    return L.format_number(value)


def _story(rubric: Mapping[str, Any]) -> list[Any]:
    r = rubric
    elig = r["eligibility"]
    story: list[Any] = [_p(f"{r['name']} (버전 {r['version']})", "title")]
    story += [_p("1. 개요", "h")]
    if r.get("description"):
        story.append(_p(str(r["description"])))
    story.append(
        _p(
            "이 방법론은 같은 유형(동류그룹)의 펀드끼리 상대 비교하여 등급을 부여한다. 1등급이 가장 우수하고 5등급이 가장 "
            "낮은 평가이며, 1등급이 가장 위험한 등급을 뜻하는 투자위험등급과는 방향이 반대이다. 모든 값은 아래 표가 기준이다."
        )
    )
    doc_rows = [
        [L.DOC_KEYS["domain"], r["domain"]],
        [L.DOC_KEYS["name"], r["name"]],
        [L.DOC_KEYS["version"], r["version"]],
    ]
    if "description" in r:
        doc_rows.append([L.DOC_KEYS["description"], r["description"]])
    if "default_style" in r:
        doc_rows.append([L.DOC_KEYS["default_style"], r["default_style"]])
    if "qualitative" in r:
        doc_rows.append([L.DOC_KEYS["qualitative_weight"], _n(r["qualitative"]["weight"])])
    story.append(_table(L.DOC_TABLE, doc_rows, (45, 125)))

    story += [
        _p("2. 평가 대상", "h"),
        _p(
            f"평가기준일 현재 운용기간이 {_n(elig['min_history_years'])}년 이상이고 설정액이 {_n(elig['min_set_amount_krw'])}원 "
            f"이상인 펀드를 평가한다. 동류그룹의 평가 대상 펀드가 {_n(elig['min_peer_group_size'])}개 미만이면 그 그룹은 등급을 "
            "부여하지 않는다. 기준가격에 중복일자, 누락, 0 이하 값이 있는 펀드는 데이터 오류로 분류한다."
        ),
        _table(
            L.ELIGIBILITY_TABLE, [[L.ELIGIBILITY_KEYS[k], _n(elig[k])] for k in L.ELIGIBILITY_KEYS], (80, 90)
        ),
    ]
    overrides = elig.get("overrides") or {}
    if overrides:
        story += [
            _p(
                "다만 아래 유형은 해당 기준을 아래 표의 값으로 대신한다: "
                + ", ".join(
                    f"{g} {L.ELIGIBILITY_KEYS[k]} {_n(v)}" for g, rules in overrides.items() for k, v in rules.items()
                )
                + "."
            ),
            _table(
                L.OVERRIDE_TABLE,
                [[g, L.ELIGIBILITY_KEYS[k], _n(v)] for g, rules in overrides.items() for k, v in rules.items()],
                (45, 80, 45),
            ),
        ]
    story += [
        _p("3. 동류그룹", "h"),
        _p("펀드는 유형별 동류그룹 안에서만 비교한다. 아래 표에 없는 유형의 펀드는 평가하지 않는다."),
        _table(L.PEER_TABLE, [[str(i), g] for i, g in enumerate(r["peer_groups"], 1)], (20, 150)),
        _p("4. 평가 기간과 가중치", "h"),
        _p(
            "평가 기간은 평가기준일로 끝나는 달력 기간(1년, 3년, 5년, 10년)이다. 펀드의 운용기간에 따라 아래 표에서 해당하는 "
            "가장 긴 최소 운용기간의 가중치를 적용한다. 예를 들어 5년 미만은 3년 성과만, 5년 이상 10년 미만은 5년 60%와 3년 "
            "40%를 반영한다."
        ),
        _table(
            L.PERIOD_TABLE,
            [
                [_n(rule["min_history_years"]), PERIOD_KO.get(p, p) + f" ({p})", _n(w)]
                for rule in r["period_weights"]
                for p, w in rule["weights"].items()
            ],
            (55, 60, 55),
        ),
    ]
    story += _criteria_section(r)
    story += _bands_and_rewards(r)
    story += [_p("9. 계산 규칙", "h")] + [_p(text) for text in METRIC_DEFINITIONS]
    return story


def _criteria_section(r: Mapping[str, Any]) -> list[Any]:
    story: list[Any] = [
        _p("5. 정량 평가 항목", "h"),
        _p(
            "각 지표는 동류그룹 안에서 백분위 점수(0~100, 높을수록 우수)로 환산한다. 변동성과 추적오차는 낮을수록, 최대낙폭은 "
            "0에 가까울수록 우수하다. 지표 점수를 지표 가중치로 합산해 항목 점수를, 항목 점수를 항목 가중치로 합산해 정량 점수를 구한다."
        ),
        _table(
            L.CRITERIA_TABLE,
            [
                [
                    c["id"],
                    c["name"],
                    _n(c["weight"]),
                    m["metric"],
                    METRICS[m["metric"]].label_ko if m["metric"] in METRICS else "-",
                    _n(m["weight"]),
                ]
                for c in r["criteria"]
                for m in c["metrics"]
            ],
            (25, 30, 22, 40, 30, 23),
        ),
    ]
    qual = r.get("qualitative")
    if qual:
        story += [
            _p("6. 정성 평가", "h"),
            _p(
                f"애널리스트가 각 항목을 1~5점으로 평가한다(5점이 가장 우수). 정성 점수가 있는 펀드는 최종 점수의 "
                f"{_n(qual['weight'])}%를 정성 점수로 반영한다."
            ),
            _table(
                L.QUALITATIVE_TABLE,
                [
                    [c["id"], c["name"], _n(c["weight"]), lv, text]
                    for c in qual["criteria"]
                    for lv, text in (c.get("levels") or {L.NO_LEVEL: L.NO_LEVEL}).items()
                ],
                (25, 25, 22, 12, 86),
            ),
        ]
    return story


def _bands_and_rewards(r: Mapping[str, Any]) -> list[Any]:
    try:
        cumulative = dict(grade_cutoffs(r))
    except (KeyError, TypeError, ValueError):
        cumulative = {}
    story: list[Any] = [
        _p("7. 등급 부여", "h"),
        _p(
            "최종 점수의 동류그룹 내 순위를 상위 백분율로 나타내고, 아래 구간에 따라 등급을 부여한다. 동점인 펀드는 같은 순위를 받는다."
        ),
        _table(
            L.BANDS_TABLE,
            [
                [str(b["grade"]), b["label"], _n(b["share"]), f"{cumulative.get(b['grade'], 0):g}"]
                for b in r["grade_bands"]
            ],
            (25, 45, 45, 55),
        ),
    ]
    if r.get("rewards"):
        story += [
            _p("8. 평가문 작성 모델 학습 보상", "h"),
            _p("평가문을 쓰는 언어모델을 GRPO로 학습할 때 아래 보상과 기본 가중치를 사용한다."),
            _table(
                L.REWARDS_TABLE,
                [
                    [name, _n(spec["weight"]), spec["description"], spec["description_ko"]]
                    for name, spec in r["rewards"].items()
                ],
                (32, 20, 60, 58),
            ),
        ]
    return story


def _strings(doc: Any) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, Mapping):
        return [s for k, v in doc.items() for s in _strings(k) + _strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


def _missing_glyphs(rubric: Mapping[str, Any]) -> list[str]:
    """Characters the embedded font cannot draw (they would print as empty boxes)."""
    _style("p")
    glyphs = pdfmetrics.getFont(L.FONT).face.charToGlyph
    return sorted({ch for text in _strings(rubric) for ch in text if not ch.isspace() and ord(ch) not in glyphs})


def render_pdf_bytes(rubric: Mapping[str, Any], *, validate: bool = True) -> bytes:
    """The methodology PDF for ``rubric`` as bytes (``validate=False`` renders even a broken rubric)."""
    if validate:
        validate_rubric(rubric)
    missing = _missing_glyphs(rubric)
    if missing:
        raise ValueError(
            f"the embedded font ({L.FONT}) has no glyph for {' '.join(missing)}; the PDF would show empty boxes "
            "there, so replace those characters in the rubric"
        )
    buf = io.BytesIO()
    doc = SimpleDocTemplate(
        buf,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=18 * mm,
        bottomMargin=18 * mm,
        title=str(rubric.get("name", "methodology")),
        author="evaluator",
    )
    doc.build(_story(rubric))
    return buf.getvalue()


def render_pdf(
    rubric: Mapping[str, Any], path: str | os.PathLike[str], *, force: bool = False, validate: bool = True
) -> str:
    """Write the methodology PDF atomically; refuse to overwrite unless ``force``."""
    target = ensure_new_file(path, force=force)
    data = render_pdf_bytes(rubric, validate=validate)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return str(target)
