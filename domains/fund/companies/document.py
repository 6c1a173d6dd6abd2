"""``companies.json`` (``companies.schema.json``) and one Korean report per company, from :class:`Ratings`."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from evaluator.core.schemas import load_schema
from evaluator.domains.fund.companies.funds import Funds
from evaluator.domains.fund.companies.qualitative import Qualitative
from evaluator.domains.fund.companies.rating import OK, Ratings
from evaluator.domains.fund.companies.rule import CompanyRule
from evaluator.methodology.rubric_scale import scale_of

SCHEMA_PACKAGE = "evaluator.domains.fund.companies"


def companies_schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PACKAGE, "companies.schema.json")


def _num(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _funds_of(funds: Funds, ratings: Ratings) -> dict[str, list[dict[str, Any]]]:
    f = funds.frame
    cols = {
        c: f[c].tolist()
        for c in ("fund_code", "fund_name", "company", "type", "status", "grade", "portfolio_code")
    }
    score, size = f["score"].tolist(), f["set_amount_krw"].tolist()
    provisional = f["provisional"].tolist()
    weight = ratings.fund_weight.tolist()
    out: dict[str, list[dict[str, Any]]] = {}
    for i, company in enumerate(cols["company"]):
        if company is None:
            continue
        grade = cols["grade"][i]
        out.setdefault(company, []).append(
            {
                "fund_code": cols["fund_code"][i],
                "fund_name": cols["fund_name"][i],
                "type": cols["type"][i],
                "status": cols["status"][i],
                "grade": None
                if grade is None or (isinstance(grade, float) and math.isnan(grade))
                else int(grade),
                "provisional": bool(provisional[i]),
                "score": _num(score[i]),
                "set_amount_krw": _num(size[i]),
                "portfolio_code": cols["portfolio_code"][i],
                "counted": not math.isnan(weight[i]),
                "weight": _num(weight[i]),
                "excluded_reason": ratings.excluded[i],
            }
        )
    return out


def _qualitative_block(
    name: str, rule: CompanyRule, qualitative: Qualitative | None
) -> dict[str, Any] | None:
    row = qualitative.rows.get(name) if qualitative is not None else None
    if row is None:
        return None
    return {
        "date": row.date,
        "analyst": row.analyst,
        "pillars": [
            {"id": p.id, "name": p.name, "weight": p.weight, "value": row.scores.get(p.id),
             "score": None if p.id not in row.scores else (row.scores[p.id] - 1.0) * 25.0}
            for p in rule.pillars
        ],
    }  # fmt: skip


def build_companies(
    funds: Funds, ratings: Ratings, rule: CompanyRule, qualitative: Qualitative | None, *, warnings: list[str]
) -> dict[str, Any]:
    """The whole ``companies.json``: companies sorted by grade and score (rated first), then by name."""
    by_company = _funds_of(funds, ratings)
    labels = rule.labels
    rows = []
    for i, name in enumerate(ratings.companies):
        rated = ratings.status[i] == OK
        grade = int(ratings.grade[i]) if rated else None
        rows.append(
            {
                "company": name,
                "status": ratings.status[i],
                "score": _num(ratings.score[i]),
                "quantitative_score": _num(ratings.quantitative[i]),
                "qualitative_score": _num(ratings.qualitative[i]),
                "basis": None if not rated else "blended" if np.isfinite(ratings.qualitative[i]) and rule.qualitative_weight > 0 else "quantitative_only",
                "grade": grade,
                "grade_label": labels.get(grade) if grade is not None else None,
                "top_percent": _num(ratings.top_percent[i]) if rated else None,
                "funds_rated": int(ratings.funds_rated[i]),
                "classes_rated": int(ratings.classes_rated[i]),
                "aum_krw": _num(ratings.aum[i]) if ratings.funds_rated[i] else None,
                "qualitative": _qualitative_block(name, rule, qualitative),
                "by_type": ratings.by_type.get(name, []),
                "reasons": list(ratings.reasons[i]),
                "funds": by_company.get(name, []),
            }
        )  # fmt: skip
    rows.sort(key=lambda r: (r["status"] != OK, r["grade"] or 0, -(r["score"] or 0.0), r["company"]))
    rated = [r for r in rows if r["status"] == OK]
    counts = Counter(str(r["grade"]) for r in rated)
    unassigned = int(funds.frame["company"].isna().sum())
    return {
        "schema_version": 1,
        "kind": "company_ratings",
        "as_of": funds.as_of.isoformat(),
        "rubric": funds.rubric,
        "rule": rule.as_dict(),
        "sources": {"reports": funds.source, "qualitative": qualitative.source if qualitative else None},
        "counts": {
            "companies": len(rows),
            "rated": len(rated),
            "not_rated": len(rows) - len(rated),
            "funds": len(funds.frame),
            "funds_without_company": unassigned,
        },
        "grade_distribution": {str(b["grade"]): counts.get(str(b["grade"]), 0) for b in rule.bands},
        "warnings": list(warnings) + list(funds.notes),
        "companies": rows,
    }


def _won(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e8:,.0f}억원"


def report_ko(doc: dict[str, Any], company: dict[str, Any]) -> str:
    """One company's Korean report (Markdown): grade, scores, strengths and weaknesses by 유형 and pillar."""
    name = company["company"]
    lines = [f"# {name} 운용사 평가 ({doc['as_of']} 기준)", ""]
    if company["status"] != OK:
        lines += [f"{name}은(는) 이번 평가에서 등급을 받지 않았습니다.", ""]
        lines += [f"- {r}" for r in company["reasons"]]
    else:
        total = doc["counts"]["rated"]
        lines.append(
            f"{name}은(는) 평가 대상 운용사 {total}곳 중 상위 {company['top_percent']:.1f}%로 "
            f"**{company['grade_label']}**입니다. 종합 점수는 {company['score']:.1f}점(100점 만점)입니다."
        )
        lines.append("")
        quant = (
            f"계량 점수 {company['quantitative_score']:.1f}점은 등급을 받은 펀드 {company['funds_rated']}개"
            f"(종류형 클래스 {company['classes_rated']}개를 펀드 단위로 묶음)의 점수를 설정원본 {_won(company['aum_krw'])}으로 "
            "가중 평균한 값입니다."
        )
        lines.append(quant)
        if company["qualitative_score"] is not None and company["basis"] == "blended":
            w = doc["rule"]["weights"]
            lines.append(
                f"정성 점수 {company['qualitative_score']:.1f}점을 더해 계량 {w['quantitative']:g}%, 정성 {w['qualitative']:g}%로 "
                "종합했습니다."
            )
        lines += [f"- {r}" for r in company["reasons"]]
    lines += ["", "## 유형별 강점과 약점", ""]
    lines += _types_ko(company["by_type"])
    lines += ["", "## 정성평가 항목별 강점과 약점", ""]
    lines += _pillars_ko(company["qualitative"])
    lines += [
        "",
        "## 펀드",
        "",
        "| 펀드코드 | 펀드명 | 유형 | 등급 | 점수 | 설정원본 | 반영 |",
        "|---|---|---|---|---|---|---|",
    ]
    scale = scale_of((doc.get("rubric") or {}).get("grade_scale"))  # the funds' scale, not the 운용사 bands
    for f in company["funds"]:
        grade = "-" if f["grade"] is None else (
            scale.provisional_label(f["grade"]) if f.get("provisional") else scale.label(f["grade"]))
        score = f"{f['score']:.1f}" if f["score"] is not None else "-"
        used = f"{f['weight'] * 100:.1f}%" if f["counted"] else (f["excluded_reason"] or "-")
        lines.append(
            f"| {f['fund_code']} | {f['fund_name'] or '-'} | {f['type'] or '-'} | {grade} | {score} | {_won(f['set_amount_krw'])} | {used} |"
        )
    return "\n".join(lines) + "\n"


def _types_ko(by_type: list[dict[str, Any]]) -> list[str]:
    if not by_type:
        return ["등급을 받은 펀드가 없어 유형별로 비교할 수 없습니다."]
    out = [
        f"- {t['type']}: 펀드 {t['funds']}개, 가중 점수 {t['score']:.1f}점 (유형 평균 {t['type_mean_score']:.1f}점, "
        f"{t['difference']:+.1f}점)"
        for t in by_type
    ]
    return [*out, "", *type_verdicts(by_type)]


def type_verdicts(by_type: list[dict[str, Any]]) -> list[str]:
    """The report's 강점/약점 sentences by 유형 (the 유형 furthest above and below its average); pages reuse them."""
    if not by_type:
        return []
    best = max(by_type, key=lambda t: t["difference"])
    worst = min(by_type, key=lambda t: t["difference"])
    out = []
    if best["difference"] > 0:
        out.append(f"강점: {best['type']}({best['difference']:+.1f}점)에서 유형 평균보다 성과가 좋습니다.")
    if worst["difference"] < 0:
        out.append(f"약점: {worst['type']}({worst['difference']:+.1f}점)에서 유형 평균에 못 미칩니다.")
    return out


def _pillars_ko(qual: dict[str, Any] | None) -> list[str]:
    if qual is None:
        return ["정성평가 자료가 없습니다."]
    scored = [p for p in qual["pillars"] if p["value"] is not None]
    out = [f"- {p['name']}: {p['value']:g}점 (100점 환산 {p['score']:.0f}점)" for p in scored]
    out += [f"- {p['name']}: 평가 없음" for p in qual["pillars"] if p["value"] is None]
    out.append("")
    out += pillar_verdicts(qual)
    who = ", ".join(x for x in (qual.get("analyst"), qual.get("date")) if x)
    if who:
        out.append(f"(평가: {who})")
    return out


def pillar_verdicts(qual: dict[str, Any] | None) -> list[str]:
    """The report's 강점/약점 sentence over the 정성평가 pillars (pages reuse it)."""
    scored = [p for p in (qual or {}).get("pillars", []) if p["value"] is not None]
    if len(scored) < 2:
        return []
    best = max(scored, key=lambda p: p["value"])
    worst = min(scored, key=lambda p: p["value"])
    if best["value"] > worst["value"]:
        return [f"강점은 {best['name']}({best['value']:g}점), 약점은 {worst['name']}({worst['value']:g}점)입니다."]
    return ["모든 정성평가 항목의 점수가 같습니다."]
