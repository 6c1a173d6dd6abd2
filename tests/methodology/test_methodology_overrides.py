"""Per-유형 eligibility overrides (schema, plain-word validation, engine, render↔ingest) and the embedded font."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pdfplumber
import pytest
from pdfminer.pdftypes import resolve1
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.engine.engine import NOT_RATED, OK, evaluate_universe
from evaluator.domains.fund.rubric import default_rubric
from evaluator.methodology.pdf_ingest import ingest_with_report
from evaluator.methodology.pdf_render import render_pdf_bytes
from evaluator.methodology.rubric import eligibility_for, rubric_problems

runner = CliRunner()


def _with_override(**rules: float) -> dict:
    r = default_rubric()
    r["eligibility"]["overrides"] = {"채권형": dict(rules)}
    return r


def test_valid_override_and_the_thresholds_it_gives() -> None:
    r = _with_override(min_set_amount_krw=30_000_000_000)
    assert rubric_problems(r) == []
    assert eligibility_for(r, "채권형") == {"min_history_years": 3.0, "min_set_amount_krw": 3e10}
    assert eligibility_for(r, "국내주식형") == {"min_history_years": 3.0, "min_set_amount_krw": 5e9}
    assert eligibility_for(r, None)["min_set_amount_krw"] == 5e9


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"채권": {"min_set_amount_krw": 3e10}}, "유형 '채권' names a 유형 that is not one of the peer groups"),
        ({"채권": {"min_set_amount_krw": 3e10}}, "Did you mean '채권형'?"),
        ({"채권형": {"min_peer_group_size": 3}}, "the minimum number of funds is one rule for every peer group"),
        ({"채권형": {"min_amount": 3e10}}, "sets 'min_amount', which is not an eligibility threshold"),
        ({"채권형": {}}, "sets no threshold"),
        ({"채권형": {"min_set_amount_krw": 5_000_000_000}}, "the same as the general rule"),
        ({"채권형": {"min_history_years": 1}}, "admits funds from 1 years of history, but the first period-weight rule"),
        ({"채권형": {"min_set_amount_krw": -1}}, "eligibility/overrides/채권형/min_set_amount_krw"),
    ],
)
def test_bad_override_is_explained(overrides: dict, expected: str) -> None:
    r = default_rubric()
    r["eligibility"]["overrides"] = overrides
    assert any(expected in p for p in rubric_problems(r)), rubric_problems(r)


def test_validate_cli_explains_a_bad_override(tmp_path: Path) -> None:
    r = default_rubric()
    r["eligibility"]["overrides"] = {"채권": {"min_set_amount_krw": 3e10}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(r, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, ["methodology", "validate", str(path)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "not one of the peer groups" in said and "Did you mean '채권형'?" in said


def _navs(funds: int, years: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(end="2025-06-30", periods=int(252 * years))
    r = rng.normal(3e-4, 0.01, (len(dates), funds))
    return pd.DataFrame(1000 * np.cumprod(1 + r, axis=0), index=dates, columns=[f"F{i:03d}" for i in range(funds)])


def test_engine_applies_the_override_to_its_유형_only() -> None:
    navs = _navs(12, 4)
    codes = list(navs.columns)
    meta = pd.DataFrame(
        {"fund_name": codes, "type": ["채권형"] * 6 + ["국내주식형"] * 6, "set_amount": 2e10}, index=codes
    )
    meta.loc["F000", "set_amount"] = 4e10  # the only bond fund above 300억
    plain = evaluate_universe(navs, meta, default_rubric())
    assert all(f.status == OK for f in plain.funds)  # 200억 ≥ 50억 everywhere
    ev = evaluate_universe(navs, meta, _with_override(min_set_amount_krw=30_000_000_000))
    status = {f.fund_code: f.status for f in ev.funds}
    assert all(status[c] == OK for c in codes[6:])
    assert all(status[c] == NOT_RATED for c in codes[:6])  # five fail the 300억 rule; F000 is left alone
    reasons = {f.fund_code: " ".join(f.errors) for f in ev.funds}
    assert "최소 300.0억원" in reasons["F001"]
    assert "300.0억원" not in reasons["F000"] and "최소 5개" in reasons["F000"]


def test_engine_override_of_history() -> None:
    navs = _navs(12, 6)
    codes = list(navs.columns)
    navs.iloc[: len(navs) - 252 * 4, :6] = np.nan  # bond funds: four years of history
    meta = pd.DataFrame(
        {"fund_name": codes, "type": ["채권형"] * 6 + ["국내주식형"] * 6, "set_amount": 1e11}, index=codes
    )
    r = _with_override(min_history_years=5)
    r["period_weights"] = [{"min_history_years": 3, "weights": {"3y": 100}}]
    ev = evaluate_universe(navs, meta, r)
    reasons = {f.fund_code: " ".join(f.errors) for f in ev.funds}
    assert all(f.status == NOT_RATED and "최소 5년" in reasons[f.fund_code] for f in ev.funds[:6])
    assert all(f.status == OK for f in ev.funds[6:])


def test_override_and_levelless_qualitative_round_trip(tmp_path: Path) -> None:
    r = _with_override(min_set_amount_krw=30_000_000_000, min_history_years=5)
    r["eligibility"]["overrides"]["혼합형"] = {"min_set_amount_krw": 10_000_000_000}
    del r["qualitative"]["criteria"][1]["levels"]  # a scale without descriptions is allowed
    assert rubric_problems(r) == []
    path = tmp_path / "m.pdf"
    path.write_bytes(render_pdf_bytes(r))
    back, report = ingest_with_report(path)
    assert back == r and report["layout"] == "evaluator"
    broken = copy.deepcopy(r)
    broken["qualitative"]["criteria"][0]["levels"].pop("3")
    assert any("no description for level(s) 3" in p for p in rubric_problems(broken))


def test_rendered_pdf_embeds_a_hangul_truetype_subset(tmp_path: Path) -> None:
    path = tmp_path / "m.pdf"
    path.write_bytes(render_pdf_bytes(default_rubric()))
    fonts = {}
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            for name, ref in resolve1(page.page_obj.resources["Font"]).items():
                font = resolve1(ref)
                descriptor = resolve1(font.get("FontDescriptor"))
                fonts[name] = (str(font["BaseFont"]), bool(descriptor and "FontFile2" in descriptor))
        assert "1등급이 가장 우수" in "".join(page.extract_text() for page in pdf.pages)
        used = {c["fontname"] for page in pdf.pages for c in page.chars}
    # every font a character is drawn in is a NanumGothic subset (XXXXXX+Name) with its file embedded,
    # which `pdffonts` shows as "emb yes"; reportlab's unused default Helvetica draws nothing
    assert used and all(f.endswith("+NanumGothic") for f in used)
    drawn = [(base, embedded) for base, embedded in fonts.values() if base.strip("/'") in used]
    assert len(drawn) == len(used) and all(embedded for _, embedded in drawn)


def test_render_refuses_characters_the_font_cannot_draw(tmp_path: Path) -> None:
    r = default_rubric()
    r["name"] = "펀드 평가 방법론 \U0001F600"
    with pytest.raises(ValueError, match="has no glyph for \U0001F600"):
        render_pdf_bytes(r)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(r, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, ["methodology", "render", str(path), "-o", str(tmp_path / "m.pdf")])
    assert result.exit_code == 2 and "empty boxes" in " ".join(result.output.split())
    assert not (tmp_path / "m.pdf").exists()
