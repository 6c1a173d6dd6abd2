"""Firm-style methodology PDFs → rubric: a varied reportlab corpus, provenance, honest refusals, the CLI."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from methodology_corpus import CORPUS, Case, Doc, mismatches
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.schemas import load_schema, schema_problems
from evaluator.methodology.ingest_lexicon import is_total, metric_id
from evaluator.methodology.ingest_text import clean, compact, find_amounts, parse_weight, unreadable_share
from evaluator.methodology.pdf_blocks import font_path
from evaluator.methodology.pdf_ingest import IngestError, ingest_pdf, ingest_with_report

runner = CliRunner()
REPORT_SCHEMA = load_schema("evaluator.methodology", "ingest_report.schema.json")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus_document_reads_exactly_or_is_refused_honestly(case: Case, tmp_path: Path) -> None:
    path = _write(tmp_path, case.name, case.build())
    if case.refusal:
        with pytest.raises(IngestError) as exc:
            ingest_with_report(path)
        message = str(exc.value)
        for words in case.refusal:
            assert words in message
        assert exc.value.report is not None and exc.value.report["status"] == "incomplete"
        assert schema_problems(exc.value.report, REPORT_SCHEMA) == []
        return
    rubric, report = ingest_with_report(path)
    assert mismatches(case, rubric) == []
    assert report["status"] == "ok" and report["layout"] == "firm"
    assert schema_problems(report, REPORT_SCHEMA) == []
    fields = {v["field"] for v in report["values"]}
    assert {"peer_groups", "grade_bands[1].share", "eligibility.min_set_amount_krw"} <= fields
    assert all(v["where"] and (v["page"] is None or v["page"] >= 1) for v in report["values"])


def test_corpus_is_varied() -> None:
    assert len(CORPUS) >= 8 and sum(1 for c in CORPUS if c.refusal) >= 2


def test_provenance_names_page_and_cell(tmp_path: Path) -> None:
    path = _write(tmp_path, "kofr", CORPUS[0].build())
    rubric, report = ingest_with_report(path)
    by_field = {v["field"]: v for v in report["values"]}
    sharpe = by_field["criteria[risk_adjusted].metrics[sharpe].weight"]
    assert sharpe["value"] == pytest.approx(20 / 45 * 100) and sharpe["page"] == 1  # 20 of the 45 points
    assert sharpe["where"] == "table 1 on p.1 (구분 | 평가지표 | 배점), row 2, column '배점' = '20'"
    assert sharpe["text"] == "샤프지수"
    group = by_field["criteria[risk_adjusted].weight"]
    assert group["value"] == pytest.approx(45) and "(20 + 15 + 10) out of 100" in group["where"]
    amount = by_field["eligibility.min_set_amount_krw"]
    assert amount["value"] == 10_000_000_000 and "설정원본 100억원 이상" in amount["text"]
    assert not amount["text"].startswith("제2장")  # the heading is not part of the sentence
    assert by_field["version"]["value"] == "2024.03"
    roles = {t["role"] for t in report["tables"]}
    assert {"criteria", "grade bands"} <= roles
    # the 합계 row is not a criterion, and the merged 구분 cells were filled down
    assert [c["name"] for c in rubric["criteria"]] == ["수익률", "위험조정성과", "위험"]


@pytest.mark.parametrize("repeat_header", [True, False])
def test_table_split_over_pages_is_one_table(tmp_path: Path, repeat_header: bool) -> None:
    from methodology_corpus import percent_split_tables

    rubric, report = ingest_with_report(_write(tmp_path, "split", percent_split_tables(repeat_header)))
    criteria = [t for t in report["tables"] if t["role"] == "criteria"]
    assert len(criteria) == 1 and criteria[0]["pages"] == [1, 2] and criteria[0]["rows"] == 6
    assert mismatches(CORPUS[1], rubric) == []


@pytest.mark.parametrize(
    ("name", "metric"),
    [
        ("연환산 수익률", "annualized_return"),
        ("Annualized return", "annualized_return"),
        ("변동성", "annualized_volatility"),
        ("표준편차", "annualized_volatility"),
        ("Volatility", "annualized_volatility"),
        ("최대손실률", "max_drawdown"),
        ("MDD", "max_drawdown"),
        ("최대낙폭(MDD)", "max_drawdown"),
        ("샤프지수", "sharpe"),
        ("Sharpe", "sharpe"),
        ("소르티노", "sortino"),
        ("정보비율", "information_ratio"),
        ("IR", "information_ratio"),
        ("추적오차", "tracking_error"),
        ("TE", "tracking_error"),
        ("젠센 알파", "jensen_alpha"),
        ("Jensen's alpha", "jensen_alpha"),
        ("MRAR", "mrar"),
        ("모닝스타 위험조정수익률", "mrar"),
        ("베 타", "beta"),
        ("칼마", "calmar"),
    ],
)
def test_metric_lexicon(name: str, metric: str) -> None:
    assert metric_id(name) == (metric, None)


@pytest.mark.parametrize("name", ["위험조정수익률", "위험 조정 수익률", "Risk-adjusted return"])
def test_bare_risk_adjusted_return_is_ambiguous_never_mrar(name: str) -> None:
    mid, why = metric_id(name)
    assert mid is None and "family" in (why or "")


def test_units_and_text() -> None:
    assert parse_weight("30") == (30.0, "") and parse_weight("30 %") == (30.0, "%")
    assert parse_weight("0.3") == (0.3, "") and parse_weight("25점") == (25.0, "점")
    assert parse_weight("-") is None and parse_weight("") is None
    with pytest.raises(ValueError, match="not a weight"):
        parse_weight("높음")
    amounts = [v for v, _ in find_amounts("설정원본 100억원, 1조 5,000억원, KRW 10 billion, 200억 이상, 5,000,000,000원")]
    assert amounts == [10_000_000_000, 1_500_000_000_000, 10_000_000_000, 20_000_000_000, 5_000_000_000]
    assert [v for v, _ in find_amounts("KRW 50bn or more; 2 trillion won")] == [50_000_000_000, 2_000_000_000_000]
    article = [v for v, _ in find_amounts("제3조(대상) 설정원본 200억원 이상, 제 5 조, 50억 이상")]
    assert article == [20_000_000_000, 5_000_000_000]  # 제3조 is an article, not 3조원
    assert clean("평 가 지 표 와 배 점") == "평가지표와배점" and clean("위 험") == "위험"
    assert clean("이 방법론은 펀드를 평가한다") == "이 방법론은 펀드를 평가한다"
    assert compact("Sharpe Ratio") == "sharperatio"
    assert is_total("합 계") and is_total("Total") and not is_total("합계수익률 상위")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "운용기간 3년 이상, 설정원본 100억원(채권형은 300억원) 이상인 펀드를 평가한다.",
            {"min_history_years": 3, "min_set_amount_krw": 10_000_000_000,
             "overrides": {"채권형": {"min_set_amount_krw": 30_000_000_000}}},
        ),
        (
            "설정일로부터 3년 미만인 펀드와 설정원본 100억원 미만인 펀드는 평가대상에서 제외한다.",
            {"min_history_years": 3, "min_set_amount_krw": 10_000_000_000},
        ),
        (
            "설정 후 36개월이 경과하고 순자산 KRW 5 billion 이상. 단, 채권형 펀드는 운용기간 5년 이상이어야 한다.",
            {"min_history_years": 3, "min_set_amount_krw": 5_000_000_000,
             "overrides": {"채권형": {"min_history_years": 5}}},
        ),
    ],
)
def test_eligibility_sentences(text: str, expected: dict) -> None:
    from evaluator.methodology.ingest_findings import Findings
    from evaluator.methodology.ingest_rules import read_eligibility
    from evaluator.methodology.ingest_tables import Sentence
    from evaluator.methodology.ingest_text import split_sentences

    f = Findings("test")
    sentences = [Sentence(s, 1, "text") for s in split_sentences(clean(text))]
    sentences.append(Sentence("동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다", 1, "text"))
    got = read_eligibility(sentences, ["주식형", "채권형", "혼합형"], f)
    assert got == {**expected, "min_peer_group_size": 5}, f.problems


def _weights_doc(rows: list[list[str | None]], **extra: str) -> bytes:
    doc = Doc("HYSMyeongJo-Medium").p("테스트 평가방법론 (개정 2024.01)")
    doc.p("평가 유형은 국내주식형, 채권형으로 구분한다.")
    doc.p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
    doc.p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
    doc.table(rows, (50, 50, 30)[: len(rows[0])])
    doc.p(extra.get("bands", "상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다."))
    return doc.build()


def test_ambiguous_metric_is_reported_not_mapped_to_mrar(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "amb", _weights_doc([["평가지표", "가중치"], ["연환산 수익률", "50%"], ["위험조정수익률", "50%"]])
    )
    with pytest.raises(IngestError) as exc:
        ingest_pdf(path)
    message = str(exc.value)
    assert "[ambiguous] criteria: metric '위험조정수익률'" in message and "row 2" in message
    assert "mrar" not in json.dumps(exc.value.draft)


def test_weights_that_do_not_add_up_show_the_numbers(tmp_path: Path) -> None:
    rows = [["평가지표", "배점"], ["연환산 수익률", "30"], ["샤프지수", "30"], ["표준편차", "30"]]
    with pytest.raises(IngestError) as exc:
        ingest_pdf(_write(tmp_path, "sum90", _weights_doc(rows)))
    assert "30 + 30 + 30 = 90" in str(exc.value) and "neither 100, 1, nor a total" in str(exc.value)
    # the same points with a stated total of 90 are fine: 1/3 each
    rows.append(["합계", "90"])
    rubric = ingest_pdf(_write(tmp_path, "sum90ok", _weights_doc(rows)))
    assert [c["weight"] for c in rubric["criteria"]] == pytest.approx([100 / 3] * 3, abs=1e-9)


def test_groups_weighted_quantitative_and_qualitative(tmp_path: Path) -> None:
    rows = [
        ["구분", "평가지표", "가중치"],
        ["정량평가(80%)", "샤프지수", "60"],
        [None, "변동성", "40"],
        ["정성평가(20%)", "운용철학", "50"],
        [None, "운용조직", "50"],
    ]
    doc = _weights_doc(rows)
    rubric = ingest_pdf(_write(tmp_path, "groups", doc))
    assert [(m["metric"], m["weight"]) for c in rubric["criteria"] for m in c["metrics"]] == [
        ("sharpe", 100),
        ("annualized_volatility", 100),
    ]
    assert [c["weight"] for c in rubric["criteria"]] == [60, 40]
    assert rubric["qualitative"]["weight"] == 20
    assert [(c["name"], c["weight"]) for c in rubric["qualitative"]["criteria"]] == [("운용철학", 50), ("운용조직", 50)]


def test_band_forms_that_do_not_reach_the_next_band_are_reported(tmp_path: Path) -> None:
    bands = "1등급: 상위 10% 이내, 2등급: 상위 20% 초과 30% 이내, 3등급: 상위 30% 초과 70% 이내, 4등급: 상위 70% 초과 90% 이내, 5등급: 상위 90% 초과."
    rows = [["평가지표", "가중치"], ["샤프지수", "100%"]]
    with pytest.raises(IngestError, match="2등급 starts at 상위 20% but the band above ends at 10%"):
        ingest_pdf(_write(tmp_path, "gap", _weights_doc(rows, bands=bands)))


def test_unreadable_cid_text_layer_is_refused(tmp_path: Path) -> None:
    if "NanumGothic" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("NanumGothic", str(font_path())))
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    c.setFont("NanumGothic", 11)
    lines = ["펀드 평가 방법론", "운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다.", "샤프지수 40%, 연환산 수익률 60%."]
    for i, line in enumerate(lines * 4):
        c.drawString(50, 800 - 20 * i, line)
    c.save()
    good = buf.getvalue()
    assert good.count(b"/ToUnicode") == 1
    # the same PDF without its ToUnicode map (as some HWP exports are): glyph codes with no meaning
    bad = _write(tmp_path, "cid", good.replace(b"/ToUnicode", b"/ToUnicodX"))
    with pytest.raises(IngestError, match="the PDF's text layer is unreadable") as exc:
        ingest_with_report(bad)
    assert exc.value.report is not None and exc.value.report["status"] == "refused"
    assert unreadable_share("(cid:12)(cid:13) (cid:14)") == 1.0 and unreadable_share("운용기간 3년 이상") == 0.0


def test_cli_report_draft_and_fill(tmp_path: Path) -> None:
    refused = next(c for c in CORPUS if c.name == "refused_no_weights")
    pdf = _write(tmp_path, "noweights", refused.build())
    out, report, draft = tmp_path / "rubric.json", tmp_path / "ingest.json", tmp_path / "draft.json"
    args = ["methodology", "ingest", str(pdf), "-o", str(out), "--report", str(report), "--draft", str(draft)]
    result = runner.invoke(app, args)
    said = _one_line(result.output)
    assert result.exit_code == 1 and "Traceback" not in said
    assert "have no weights" in said and "looked in" in said and "출처" in said
    assert not out.exists()
    rep = json.loads(report.read_text(encoding="utf-8"))
    assert rep["status"] == "incomplete" and schema_problems(rep, REPORT_SCHEMA) == []
    assert [p["field"] for p in rep["problems"]] == ["criteria weights"]
    found = json.loads(draft.read_text(encoding="utf-8"))
    assert "criteria" not in found and found["eligibility"]["min_set_amount_krw"] == 10_000_000_000
    # the analyst supplies the weights the document lacks
    partial = tmp_path / "partial.json"
    criteria = [
        {"id": "return", "name": "수익률", "weight": 40, "metrics": [{"metric": "annualized_return", "weight": 100}]},
        {"id": "risk_adjusted", "name": "위험조정성과", "weight": 60,
         "metrics": [{"metric": "sharpe", "weight": 50}, {"metric": "sortino", "weight": 50}]},
    ]
    partial.write_text(json.dumps({"criteria": criteria}, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, [*args, "--fill", str(partial), "--force"])
    assert result.exit_code == 0, result.output
    rubric = json.loads(out.read_text(encoding="utf-8"))
    assert rubric["criteria"] == criteria and rubric["eligibility"]["min_peer_group_size"] == 5
    rep = json.loads(report.read_text(encoding="utf-8"))
    assert rep["status"] == "ok" and any(v["where"] == "the analyst's --fill JSON" for v in rep["values"])
    # existing outputs are never overwritten without --force
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "--force" in _one_line(again.output)


def test_cli_bad_fill_is_a_clear_error(tmp_path: Path) -> None:
    pdf = _write(tmp_path, "doc", CORPUS[0].build())
    bad = tmp_path / "partial.json"
    bad.write_text("[1, 2", encoding="utf-8")
    result = runner.invoke(app, ["methodology", "ingest", str(pdf), "-o", str(tmp_path / "r.json"), "--fill", str(bad)])
    assert result.exit_code == 2 and "not readable JSON" in _one_line(result.output)


def test_seven_grades_are_read_and_a_band_table_shorter_than_the_text_is_refused(tmp_path: Path) -> None:
    bands = "1등급 상위 5%, 2등급 다음 10%, 3등급 다음 15%, 4등급 다음 40%, 5등급 다음 15%, 6등급 다음 10%, 7등급 나머지 5%."
    rows = [["평가지표", "가중치"], ["샤프지수", "100%"]]
    rubric = ingest_pdf(_write(tmp_path, "seven", _weights_doc(rows, bands=bands)))
    assert rubric["grade_scale"] == {"grades": 7, "best": "low", "style": "number"}
    assert [b["grade"] for b in rubric["grade_bands"]] == [1, 2, 3, 4, 5, 6, 7]
    five = "상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다. 7등급 펀드는 별도로 관리한다."
    with pytest.raises(IngestError, match=r"bands for 5 grades but the text names 7등급"):
        ingest_pdf(_write(tmp_path, "short", _weights_doc(rows, bands=five)))


def test_two_tables_refusal_shows_both_weightings(tmp_path: Path) -> None:
    case = next(c for c in CORPUS if c.name == "refused_two_tables")
    with pytest.raises(IngestError) as exc:
        ingest_pdf(_write(tmp_path, "two", case.build()))
    said = str(exc.value)
    assert "table 1 on p.1 gives annualized_return 50%, sharpe 50%" in said
    assert "table 2 on p.1 gives annualized_return 40%, sharpe 60%" in said


def test_group_labels_that_contradict_the_points_are_refused(tmp_path: Path) -> None:
    rows = [
        ["구분", "평가지표", "배점"],
        ["정량평가(70%)", "샤프지수", "60"],
        [None, "변동성", "20"],
        ["정성평가(30%)", "운용철학", "10"],
        [None, "운용조직", "10"],
    ]
    with pytest.raises(IngestError, match="group labels give the qualitative part 30% but its criteria add up to 20%"):
        ingest_pdf(_write(tmp_path, "contradiction", _weights_doc(rows)))


def test_period_weights_in_a_long_table_with_merged_history_cells(tmp_path: Path) -> None:
    doc = Doc("HYGothic-Medium").p("기간 가중치 방법론 (개정 2024.01)")
    doc.p("평가 유형은 국내주식형, 채권형으로 구분한다.")
    doc.p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
    doc.table(
        [
            ["운용기간", "평가기간", "가중치(%)"],
            ["3년 이상 5년 미만", "3년", "100"],
            ["5년 이상 10년 미만", "3년", "40"],
            [None, "5년", "60"],
            ["10년 이상", "3년", "20"],
            [None, "5년", "30"],
            [None, "10년", "50"],
        ],
        (50, 30, 30),
        spans=[(0, 2, 0, 3), (0, 4, 0, 6)],
    )
    doc.table([["평가지표", "가중치"], ["샤프지수", "100%"]], (50, 30))
    doc.p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
    rubric, report = ingest_with_report(_write(tmp_path, "long", doc.build()))
    assert rubric["period_weights"] == [
        {"min_history_years": 3, "weights": {"3y": 100}},
        {"min_history_years": 5, "weights": {"3y": 40, "5y": 60}},
        {"min_history_years": 10, "weights": {"3y": 20, "5y": 30, "10y": 50}},
    ]
    assert any(t["role"] == "period weights" for t in report["tables"])


def test_firm_reader_on_a_rendered_methodology_agrees_with_the_exact_reader() -> None:
    """The lexicon reader, pointed at a PDF it was not written for (the project's own layout), reads the same
    quantitative rubric, and reports the qualitative table it cannot tie to metrics instead of dropping it."""
    import pdfplumber

    from evaluator.domains.fund.rubric import default_rubric
    from evaluator.methodology.ingest_findings import Findings
    from evaluator.methodology.ingest_firm import read_firm_pdf
    from evaluator.methodology.pdf_render import render_pdf_bytes

    rubric = default_rubric()
    f = Findings("rendered")
    with pdfplumber.open(io.BytesIO(render_pdf_bytes(rubric))) as pdf:
        draft = read_firm_pdf(pdf, f)
    for key in ("peer_groups", "eligibility", "period_weights", "criteria", "grade_bands", "company_rating"):
        assert draft[key] == rubric[key], key
    assert [(p["kind"], p["field"]) for p in f.problems] == [("missing", "qualitative")]
    assert "정성항목 ID" in f.problems[0]["message"]


def test_a_weighted_qualitative_part_stated_only_in_prose_is_not_dropped(tmp_path: Path) -> None:
    rows = [["평가지표", "가중치"], ["연환산 수익률", "40%"], ["샤프지수", "60%"]]
    doc = _weights_doc(rows, bands="종합점수는 정량평가 80%와 정성평가 20%로 구성한다. 상위 10%는 1등급, 다음 22.5%는 2등급, "
                       "다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
    with pytest.raises(IngestError) as exc:
        ingest_pdf(_write(tmp_path, "qualprose", doc))
    assert "[missing] qualitative" in str(exc.value) and "정성평가 20%" in str(exc.value)


def test_subtotal_rows_and_a_cumulative_top_column_without_the_word_누적(tmp_path: Path) -> None:
    rows = [
        ["구분", "평가지표", "배점"],
        ["수익률", "연환산 수익률", "40"],
        ["소계", "", "40"],
        ["위험", "표준편차", "30"],
        [None, "최대낙폭", "30"],
        ["소계", "", "60"],
        ["합계", "", "100"],
    ]
    doc = Doc("HYSMyeongJo-Medium").p("소계 방법론 (개정 2024.01)")
    doc.p("평가 유형은 국내주식형, 채권형으로 구분한다.")
    doc.p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
    doc.p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
    doc.table(rows, (40, 50, 30), spans=[(0, 3, 0, 4)])
    doc.p("등급 기준표")
    doc.table([["등급", "상위 비율(%)"], ["1", "10"], ["2", "30"], ["3", "70"], ["4", "90"], ["5", "100"]], (30, 40))
    rubric = ingest_pdf(_write(tmp_path, "subtotal", doc.build()))
    assert [(c["name"], c["weight"]) for c in rubric["criteria"]] == [("수익률", 40), ("위험", 60)]
    assert [b["share"] for b in rubric["grade_bands"]] == [10, 20, 40, 20, 10]


@pytest.mark.parametrize("unit", ["%", ""])
def test_table_without_ruling_lines(tmp_path: Path, unit: str) -> None:
    """pdfplumber finds no table without lines; rows then read as sentences: with a unit the weights are
    still found (each metric its own criterion), without one the document is refused, never guessed."""
    from reportlab.platypus import Paragraph, Table

    doc = Doc("HYGothic-Medium").p("선 없는 표 (버전 1.0)").p("평가 유형은 국내주식형, 채권형으로 구분한다.")
    doc.p("운용기간 3년 이상, 설정원본 100억원 이상인 펀드를 평가한다. 동일 유형 펀드가 5개 미만이면 등급을 산출하지 아니한다.")
    doc.p("운용기간 3년 이상인 펀드는 3년 100%를 반영한다.")
    cells = [["구분", "평가지표", "배점"], ["수익률", "연환산 수익률", "30"], ["위험조정성과", "샤프지수", "40"], ["", "소르티노", "30"]]
    rows = [[Paragraph(c + (unit if c.isdigit() else ""), doc.c_style) if c else "" for c in row] for row in cells]
    doc.story.append(Table(rows))
    doc.p("상위 10%는 1등급, 다음 22.5%는 2등급, 다음 35%는 3등급, 다음 22.5%는 4등급, 나머지 10%는 5등급으로 한다.")
    path = _write(tmp_path, "borderless", doc.build())
    if unit:
        rubric = ingest_pdf(path)
        assert [(c["metrics"][0]["metric"], c["weight"]) for c in rubric["criteria"]] == [
            ("annualized_return", 30), ("sharpe", 40), ("sortino", 30)
        ]
    else:
        with pytest.raises(IngestError, match=r"\[missing\] criteria: no criteria with weights found"):
            ingest_pdf(path)
