"""Methodology PDF: render with reportlab, read back with pdfplumber, exactly; broken PDFs get one clear error."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pdfplumber
import pytest
from PIL import Image
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.rubric import default_rubric
from evaluator.methodology.pdf_ingest import IngestError, ingest_pdf
from evaluator.methodology.pdf_render import render_pdf, render_pdf_bytes

runner = CliRunner()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_builtin_methodology_round_trips_exactly(tmp_path: Path) -> None:
    rubric = default_rubric()
    pdf = Path(render_pdf(rubric, tmp_path / "method.pdf"))
    back = ingest_pdf(pdf)
    assert back == rubric
    assert json.dumps(back, ensure_ascii=False, indent=2) == json.dumps(rubric, ensure_ascii=False, indent=2)
    with pdfplumber.open(pdf) as doc:
        text = "".join(page.extract_text() or "" for page in doc.pages)
    assert "표준 펀드 평가 방법론" in text and "1등급이 가장 우수" in text  # Korean prose, not only tables


def test_a_different_rubric_round_trips_too(tmp_path: Path) -> None:
    r = default_rubric()
    del r["qualitative"], r["rewards"], r["description"]
    r["name"] = "R&D <테스트> 방법론"
    r["peer_groups"] = [f"유형{i:02d} 그룹" for i in range(60)]  # long table: continues over pages
    r["criteria"][0]["weight"] = 12.5
    r["criteria"][1]["weight"] = 42.5
    r["criteria"][2]["metrics"] = [
        {"metric": "max_drawdown", "weight": 70},
        {"metric": "calmar", "weight": 30},
    ]
    r["eligibility"]["min_history_years"] = 3.5  # a float where the built-in has an int
    r["grade_bands"] = [
        {"grade": g, "label": f"{g}등급 구간 설명이 조금 긴 이름", "share": s}
        for g, s in zip(range(1, 6), (5, 20, 50, 20, 5), strict=True)
    ]
    pdf = tmp_path / "other.pdf"
    pdf.write_bytes(render_pdf_bytes(r))
    with pdfplumber.open(pdf) as doc:
        assert len(doc.pages) > 2
    assert ingest_pdf(pdf) == r


def test_pdf_without_text_layer(tmp_path: Path) -> None:
    img = Image.new("RGB", (400, 200), "white")
    for x in range(50, 350):
        img.putpixel((x, 100), (0, 0, 0))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    path = tmp_path / "scan.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    c.drawImage(ImageReader(io.BytesIO(buf.getvalue())), 50, 500, width=400, height=200)
    c.rect(40, 490, 420, 220)
    c.showPage()
    c.save()
    with pytest.raises(IngestError, match="no text layer"):
        ingest_pdf(path)


def test_pdf_without_criteria_table(tmp_path: Path) -> None:
    path = tmp_path / "nocrit.pdf"  # Korean text, but none of the methodology tables
    c = canvas.Canvas(str(path), pagesize=A4)
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    pdfmetrics.registerFont(UnicodeCIDFont("HYSMyeongJo-Medium"))
    c.setFont("HYSMyeongJo-Medium", 12)
    c.drawString(50, 800, "펀드 평가 방법론: 평가 항목은 별첨을 참고한다.")
    c.showPage()
    c.save()
    with pytest.raises(IngestError) as exc:
        ingest_pdf(path)
    message = str(exc.value)
    assert "[missing] criteria: no criteria with weights found" in message
    assert "[missing] grade_bands" in message
    assert "[missing] peer_groups" not in message  # no list of 유형: the data's 유형 (recorded, not refused)
    assert "every 유형 in the data" in " ".join(exc.value.report["notes"])
    assert "[missing] eligibility.min_set_amount_krw" in message and "looked in:" in message


def test_pdf_whose_weights_do_not_add_up(tmp_path: Path) -> None:
    r = default_rubric()
    r["criteria"][0]["weight"] = 10  # criteria now add up to 90
    path = tmp_path / "bad.pdf"
    path.write_bytes(render_pdf_bytes(r, validate=False))
    with pytest.raises(IngestError, match="criteria weights add up to 90, not 100"):
        ingest_pdf(path)


def test_cli_render_and_ingest(tmp_path: Path) -> None:
    rubric_path = tmp_path / "rubric.json"
    assert runner.invoke(app, ["methodology", "export", "-o", str(rubric_path)]).exit_code == 0
    pdf = tmp_path / "method.pdf"
    result = runner.invoke(app, ["methodology", "render", str(rubric_path), "-o", str(pdf)])
    assert result.exit_code == 0, result.output
    again = runner.invoke(app, ["methodology", "render", str(rubric_path), "-o", str(pdf)])
    assert again.exit_code == 2 and "--force" in _one_line(again.output)
    out = tmp_path / "back.json"
    result = runner.invoke(app, ["methodology", "ingest", str(pdf), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(rubric_path.read_text(encoding="utf-8"))
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"this is not a pdf at all")
    result = runner.invoke(app, ["methodology", "ingest", str(garbage), "-o", str(tmp_path / "x.json")])
    said = _one_line(result.output)
    assert result.exit_code == 2 and "not a readable PDF" in said and "Traceback" not in said
    assert not (tmp_path / "x.json").exists()
