"""Share-class families inferred from fund names when META has no 대표펀드코드: classes of one fund group,
distinct funds stay apart, the groups reach the peer weights and the 운용사 rating, the count is said, and
`--no-class-inference` turns it off (then `fund companies` warns that the reports carry no family)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.domains.fund.data.class_families import base_name, infer_families

runner = CliRunner()

SAME = [
    ["미래에셋코어테크증권자투자신탁(주식)종류A", "미래에셋코어테크증권자투자신탁(주식)종류C-e", "미래에셋코어테크증권자투자신탁(주식)"],
    ["KB글로벌헬스케어증권투자신탁[주식] A", "KB글로벌헬스케어증권투자신탁[주식] C", "KB글로벌헬스케어증권투자신탁[주식] C-e"],
    ["삼성한국형TDF2045증권투자신탁H[주식혼합-재간접형]Ce", "삼성한국형TDF2045증권투자신탁H[주식혼합-재간접형]C-P2e",
     "삼성한국형TDF2045증권투자신탁H[주식혼합-재간접형]A"],
    ["한국투자네비게이터증권투자신탁1(주식)(A)", "한국투자네비게이터증권투자신탁1(주식)(C-e)", "한국투자네비게이터증권투자신탁1(주식)(S-P)"],
    ["신한베트남증권자투자신탁[주식] Class A", "신한베트남증권자투자신탁[주식] Class C-Pe", "신한베트남증권자투자신탁[주식] ClassI"],
    ["메리츠코리아증권투자신탁[주식]종류I", "메리츠코리아증권투자신탁[주식]종류W", "메리츠코리아증권투자신탁[주식] 종류 F"],
    ["NH-Amundi하나로TDF2030증권투자신탁[주식혼합-재간접형] Ae", "NH-Amundi하나로TDF2030증권투자신탁[주식혼합-재간접형] C-Pe"],
    ["이스트스프링차이나펀드증권자투자신탁(주식-재간접형)클래스F", "이스트스프링차이나펀드증권자투자신탁(주식-재간접형)클래스A"],
    ["우리중소형고배당증권자투자신탁1[주식]ClassC-P2", "우리중소형고배당증권자투자신탁1[주식]ClassA"],
    ["피델리티아시아증권자투자신탁(주식-재간접형)S-P", "피델리티아시아증권자투자신탁(주식-재간접형)S"],
    ["ＫＢ스타코리아증권투자신탁(주식) Ａ", "KB스타코리아증권투자신탁(주식) C"],  # fullwidth letters
    ["교보악사파워인덱스증권자투자신탁1호(주식-파생형)C-W", "교보악사파워인덱스증권자투자신탁1호(주식-파생형)C-I"],
]  # fmt: skip
APART = [
    ("교보악사파워인덱스증권자투자신탁1호(주식-파생형)ClassA", "교보악사파워인덱스증권자투자신탁2호(주식-파생형)ClassA"),
    ("한화글로벌헬스케어증권자투자신탁(주식)(H)", "한화글로벌헬스케어증권자투자신탁(주식)(UH)"),
    ("한국투자네비게이터증권투자신탁1(주식)(A)", "한국투자네비게이터증권투자신탁2(주식)(A)"),
    ("KB글로벌증권투자신탁[주식] A", "KB글로벌증권투자신탁[채권] A"),
    ("키움글로벌TDF2045 A", "키움글로벌TDF2050 A"),
    ("삼성코스피200인덱스증권투자신탁 A", "삼성코스피200인덱스증권투자신탁(H) A"),
]  # fmt: skip


@pytest.mark.parametrize("names", SAME)
def test_classes_of_one_fund_share_a_base_name(names: list[str]) -> None:
    assert len({base_name(n) for n in names}) == 1, [base_name(n) for n in names]
    assert "[주식" in base_name(names[0]) or "(주식" in base_name(names[0])  # the 유형 bracket is kept


@pytest.mark.parametrize(("a", "b"), APART)
def test_distinct_funds_stay_apart(a: str, b: str) -> None:
    assert base_name(a) != base_name(b)


def test_families_need_the_same_company_and_type() -> None:
    codes = ["K1", "K2", "K3", "K4", "K5"]
    names = [
        "X증권투자신탁[주식] A",
        "X증권투자신탁[주식] C",
        "X증권투자신탁[주식] C-e",
        "X증권투자신탁[주식] A",
        "X증권투자신탁[주식] C",
    ]
    companies = ["갑운용", "갑운용", "갑운용", "을운용", "갑운용"]
    types = ["국내주식형"] * 4 + ["해외주식형"]
    families, count = infer_families(codes, names, companies, types)
    assert families.tolist() == ["K1", "K1", "K1", "K4", "K5"] and count == 1


def _files(tmp: Path) -> tuple[Path, Path]:
    """16 funds of three 운용사; 소형운용 has one fund in three classes (A, C, C-e) and one other fund."""
    rng = np.random.default_rng(31)
    dates = pd.bdate_range(end="2025-06-30", periods=252 * 4)
    rows, meta = [], []
    funds = [("대형운용", f"대형{i}증권투자신탁[주식] A") for i in range(7)]
    funds += [("중형운용", f"중형{i}증권투자신탁[주식]종류A") for i in range(5)]
    funds += [("소형운용", f"소형알파증권투자신탁[주식] {c}") for c in ("A", "C", "C-e")]
    funds += [("소형운용", "소형베타증권투자신탁[주식] A")]
    base = rng.normal(3e-4, 0.01, len(dates))
    for k, (company, name) in enumerate(funds):
        r = base + rng.normal(0, 0.004, len(dates))
        if name.startswith("소형알파"):  # classes: the same portfolio, fees apart
            r = base + np.random.default_rng(99).normal(0, 0.004, len(dates)) - 0.00002 * k
        nav = 1000 * np.cumprod(1 + r)
        code = f"KR{k:03d}"
        rows.append(pd.DataFrame({"기준일자": dates, "펀드코드": code, "기준가격": nav}))
        meta.append(
            {"펀드코드": code, "펀드명": name, "운용사": company, "유형": "국내주식형", "설정원본": 1e11}
        )
    pd.concat(rows).to_csv(tmp / "navs.csv", index=False)
    pd.DataFrame(meta).to_csv(tmp / "meta.csv", index=False)
    return tmp / "navs.csv", tmp / "meta.csv"


def _companies(tmp: Path, name: str, *extra: str) -> tuple[dict, str, dict]:
    navs, meta = _files(tmp)
    out = tmp / name
    result = runner.invoke(app, ["fund", "evaluate", str(navs), "--meta", str(meta), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    comp = runner.invoke(app, ["fund", "companies", str(out), "-o", str(tmp / f"{name}_c")])
    assert comp.exit_code == 0, comp.output
    doc = json.loads((tmp / f"{name}_c" / "companies.json").read_text(encoding="utf-8"))
    return summary, result.output + comp.output, {c["company"]: c for c in doc["companies"]}


def test_a_company_with_one_fund_in_three_classes_is_not_rated_without_a_family_column(
    tmp_path: Path,
) -> None:
    summary, output, companies = _companies(tmp_path, "inferred")
    assert summary["share_classes"]["grouped"] and summary["share_classes"]["inferred_families"] == 1
    assert "1 share-class families (3 classes) were inferred" in " ".join(output.split())
    assert any("inferred from fund names" in w for w in summary["warnings"])
    small = companies["소형운용"]
    assert small["status"] == "not_rated", small
    codes = {f["fund_code"]: f for f in summary["funds"]}
    assert {codes[c].get("portfolio_code") for c in ("KR012", "KR013", "KR014")} == {"KR012"}
    assert codes["KR015"].get("portfolio_code") == "KR015"
    # off: every class counts alone, and `fund companies` says the reports carry no family
    summary, output, companies = _companies(tmp_path, "off", "--no-class-inference")
    assert not summary["share_classes"]["grouped"]
    assert companies["소형운용"]["status"] != "not_rated"
    assert "no share-class family" in " ".join(output.split())
