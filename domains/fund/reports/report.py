"""Report documents: one fund's JSON report (with a Korean narrative built from its numbers) and the batch summary.

Pure functions from engine results to plain dicts; writing them is :mod:`evaluator.domains.fund.reports.batch`'s
job. Schemas: ``report.schema.json`` and ``summary.schema.json`` in this package.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.core.schemas import load_schema
from evaluator.domains.fund.engine import Evaluation, FundResult
from evaluator.domains.fund.reports.data_checks import data_checks
from evaluator.domains.fund.types import ERROR, NOT_RATED, OK
from evaluator.domains.fund.wording import PERIOD_KO, main_period, standing_ko, years_ko
from evaluator.methodology.rubric import PERIODS, criteria_for
from evaluator.methodology.rubric_scale import grade_scale

SCHEMA_PACKAGE = __package__


def report_schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PACKAGE, "report.schema.json")


def summary_schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PACKAGE, "summary.schema.json")


def _pct(x: float | None, sign: bool = False) -> str:
    if x is None:
        return "-"
    return f"{x * 100:+.2f}%" if sign else f"{x * 100:.2f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _who(result: FundResult) -> str:
    return f"{result.fund_name}({result.fund_code})" if result.fund_name else result.fund_code


def narrative_ko(result: FundResult, rubric: Mapping[str, Any]) -> str:
    """A short Korean evaluation generated only from the result's numbers (so it is verifiable)."""
    who = _who(result)
    if result.status == ERROR:
        return f"{who}은(는) 데이터 오류로 평가하지 못했습니다: {'; '.join(result.errors)}."
    period = main_period(result)
    m = result.metrics.get(period) if period else None
    if result.status == NOT_RATED:
        text = f"{who}은(는) 평가 대상이 아닙니다: {'; '.join(result.errors)}."
        if m:
            text += f" 참고로 최근 {PERIOD_KO[period]} 연환산 수익률은 {_pct(m['annualized_return'], True)}입니다."
        return text
    assert period is not None and m is not None
    weights = ", ".join(f"{PERIOD_KO[p]} {w:g}%" for p, w in result.period_weights.items())
    standing = standing_ko(
        float(result.peer_percentile or 0.0), int(result.peer_group_size or 0), result.peer_bottom_percent
    )
    parts = [
        f"{who}은(는) {result.type} 동류그룹 {result.peer_group_size}개 펀드 중 {standing}로 "
        f"{result.grade_label}입니다.",
    ]
    if result.provisional:
        parts[0] = (
            f"{who}은(는) 운용기간 {years_ko(result.history_years or 0)}년으로 정규 등급 대상이 아니어서, "
            f"{PERIOD_KO[period]} 성과로 {result.type} 펀드 {result.peer_group_size}개와 비교해 {standing}의 "
            f"가등급(잠정 등급) {result.grade_label}을 받았습니다."
        )
    parts += [
        f"종합 점수는 {result.score:.1f}점(100점 만점)이며 기간 가중치는 {weights}입니다.",
        f"최근 {PERIOD_KO[period]} 연환산 수익률 {_pct(m['annualized_return'], True)}, 변동성 {_pct(m['annualized_volatility'])}, "
        f"샤프지수 {_num(m['sharpe'])}, 최대낙폭 {_pct(m['max_drawdown'])}입니다.",
    ]
    if m.get("information_ratio") is not None:
        parts.append(
            f"벤치마크 대비 정보비율은 {_num(m['information_ratio'])}, 젠센 알파는 {_pct(m['jensen_alpha'], True)}입니다."
        )
    names = {c["id"]: c["name"] for c in criteria_for(rubric, result.type)}
    scored = {k: v for k, v in result.criterion_scores.items() if v is not None}
    if len(scored) >= 2:
        best = max(scored, key=lambda k: scored[k])
        worst = min(scored, key=lambda k: scored[k])
        parts.append(
            f"항목별로는 {names.get(best, best)}({scored[best]:.0f}점)이 가장 높고 "
            f"{names.get(worst, worst)}({scored[worst]:.0f}점)이 가장 낮습니다."
        )
    if result.qualitative_scores:
        parts.append("애널리스트 정성평가 점수가 반영되었습니다.")
    return " ".join(parts)


def build_report(result: FundResult, rubric: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document for one fund (see ``report.schema.json``)."""
    return {
        "schema_version": 1,
        "fund_code": result.fund_code,
        "fund_name": result.fund_name,
        "company": result.company,
        "type": result.type,
        "status": result.status,
        "errors": list(result.errors),
        "warnings": list(result.warnings),
        "reason_codes": list(result.reason_codes),
        "return_basis": result.return_basis,
        "portfolio_code": result.portfolio_code,
        "portfolio_classes": result.portfolio_classes,
        "set_amount_krw": result.set_amount_krw,
        "as_of": result.as_of.isoformat(),
        "first_date": result.first_date,
        "history_years": result.history_years,
        "metrics": {p: result.metrics.get(p) for p in PERIODS},
        "period_weights": dict(result.period_weights),
        "criterion_scores": dict(result.criterion_scores),
        "qualitative_scores": result.qualitative_scores,
        "quantitative_score": result.quantitative_score,
        "score": result.score,
        "peer_group_size": result.peer_group_size,
        "peer_percentile": result.peer_percentile,
        "grade": result.grade,
        "grade_label": result.grade_label,
        **({"provisional": True} if result.provisional else {}),
        **({"criteria_weights": criteria_weights(rubric, result.type)} if rubric.get("criteria_by_type") else {}),
        "rubric": {"name": str(rubric["name"]), "version": str(rubric["version"])},
        "summary_ko": narrative_ko(result, rubric),
    }


def criteria_weights(rubric: Mapping[str, Any], fund_type: str | None) -> dict[str, Any]:
    """The criteria and metric weights that scored a fund of ``fund_type`` (per-유형 weights)."""
    return {
        c["id"]: {
            "name": c["name"],
            "weight": float(c["weight"]),
            "metrics": {m["metric"]: float(m["weight"]) for m in c["metrics"]},
        }
        for c in criteria_for(rubric, fund_type)
    }


def scale_problems(document: Mapping[str, Any], rubric: Mapping[str, Any]) -> list[str]:
    """The run-time half of the report/summary schemas: every grade in ``document`` is on the rubric's scale."""
    scale = grade_scale(rubric)
    problems: list[str] = []
    rows = [document, *document.get("funds", ())]
    for row in rows:
        grade = row.get("grade") if isinstance(row, Mapping) else None
        if grade is not None and not scale.contains(grade):
            problems.append(f"{row.get('fund_code', 'document')}: grade {grade} is not on the rubric's 1–{scale.grades} scale")
    for fund_type, counts in (document.get("grade_distribution") or {}).items():
        for key in counts:
            g = key.removeprefix("p")
            if g.isdigit() and not scale.contains(int(g)):
                problems.append(f"grade_distribution[{fund_type}] has a column {key!r} off the rubric's scale")
    return problems


def grade_distribution(
    funds: Sequence[FundResult], rubric: Mapping[str, Any] | None = None
) -> dict[str, dict[str, int]]:
    """Per 유형 (``"(none)"`` when unknown): how many funds got each grade (the scale's, best first), were not
    rated, or had errors; provisional grades (가등급) count apart as ``p1``… and only when there are any."""
    table: dict[str, Counter[str]] = {}
    for f in funds:
        key = f.type or "(none)"
        row = table.setdefault(key, Counter())
        row[("p" if f.provisional else "") + str(f.grade) if f.status == OK else f.status] += 1
    grades = [str(g) for g in grade_scale(rubric).best_first()]
    provisional = [f"p{g}" for g in grades] if any(f.provisional for f in funds) else []
    columns = [*grades, *provisional, NOT_RATED, ERROR]
    out = {t: {c: int(row.get(c, 0)) for c in columns} for t, row in sorted(table.items())}
    for row in out.values():
        row["total"] = sum(row[c] for c in columns)
    return out


def grade_distribution_by_portfolio(
    funds: Sequence[FundResult], rubric: Mapping[str, Any] | None = None
) -> dict[str, dict[str, float | int]] | None:
    """Per 유형: grade counts where each rated class weighs 1/k, so every portfolio counts once (None if
    classes were not grouped)."""
    rated = [f for f in funds if f.status == OK and f.grade is not None and not f.provisional]
    if not any(f.portfolio_code is not None for f in funds):
        return None
    scale = grade_scale(rubric).best_first()
    table: dict[str, dict[str, float | int]] = {}
    portfolios: dict[str, set[str]] = {}
    for f in rated:
        key = f.type or "(none)"
        row = table.setdefault(key, {str(g): 0.0 for g in scale})
        row[str(f.grade)] = float(row[str(f.grade)]) + 1.0 / max(f.portfolio_classes or 1, 1)
        portfolios.setdefault(key, set()).add(f.portfolio_code or f.fund_code)
    for key, row in table.items():
        for g in scale:
            row[str(g)] = round(float(row[str(g)]), 6)
        row["portfolios"] = len(portfolios[key])
    return dict(sorted(table.items()))


def share_classes_block(evaluation: Evaluation, grouped: bool) -> dict[str, Any]:
    """How share classes were grouped: by 대표펀드코드, by families inferred from names, or not at all."""
    info = evaluation.inputs.get("share_classes") or {}
    inferred = bool(info.get("inferred_from_names"))
    if not grouped:
        note = (
            "classes were not grouped (no 대표펀드코드 / 종류형대표코드 / family_code column in META, and no fund "
            "names differing only by a class suffix, or --no-class-inference): every fund counts as its own portfolio"
        )
    elif inferred:
        note = (
            f"share classes were grouped into {info.get('families', 0)} families inferred from fund names (no "
            "대표펀드코드 column in META): each class counts 1/k in the peer rating scale"
        )
    else:
        note = "share classes were grouped by 대표펀드코드: each class counts 1/k in the peer rating scale"
    return {
        "grouped": grouped,
        "note": note,
        **({"inferred_families": int(info.get("families", 0))} if grouped and inferred else {}),
    }


def build_summary(
    evaluation: Evaluation,
    files: Mapping[str, str],
    *,
    warnings: Sequence[str] = (),
    failures: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The batch summary (see ``summary.schema.json``); ``files`` maps fund code → report file name."""
    failures = failures or {}
    status = Counter(f.status for f in evaluation.funds)
    by_portfolio = grade_distribution_by_portfolio(evaluation.funds, evaluation.rubric)
    provisional = sum(f.status == OK and f.provisional for f in evaluation.funds)
    return {
        "schema_version": 1,
        "as_of": evaluation.as_of.isoformat(),
        "rubric": evaluation.inputs.get(
            "rubric", {"name": evaluation.rubric["name"], "version": evaluation.rubric["version"]}
        ),
        "inputs": {k: v for k, v in evaluation.inputs.items() if k != "rubric"},
        **({"grade_scale": dict(evaluation.rubric["grade_scale"])} if evaluation.rubric.get("grade_scale") else {}),
        "funds_total": len(evaluation.funds),
        "status_counts": {  # disjoint: they add up to funds_total
            OK: int(status.get(OK, 0)) - provisional,
            **({"provisional": provisional} if provisional else {}),
            **{s: int(status.get(s, 0)) for s in (NOT_RATED, ERROR)},
        },
        "grade_distribution": grade_distribution(evaluation.funds, evaluation.rubric),
        "grade_distribution_by_portfolio": by_portfolio,
        "share_classes": share_classes_block(evaluation, by_portfolio is not None),
        "peer_context": evaluation.peers,
        "warnings": list(dict.fromkeys([*warnings, *(evaluation.inputs.get("calendar") or {}).get("notes", [])])),
        "data_checks": data_checks(evaluation),
        "funds": [
            {
                "fund_code": f.fund_code,
                "file": files.get(f.fund_code),
                "fund_name": f.fund_name,
                "company": f.company,
                "type": f.type,
                "status": f.status,
                "set_amount_krw": f.set_amount_krw,
                "grade": f.grade,
                "score": f.score,
                "peer_percentile": f.peer_percentile,
                **({"portfolio_code": f.portfolio_code} if f.portfolio_code is not None else {}),
                **({"provisional": True} if f.provisional else {}),
                **({"write_error": failures[f.fund_code]} if f.fund_code in failures else {}),
            }
            for f in evaluation.funds
        ],
    }


def distribution_csv_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows for ``summary.csv``: one per 유형 plus a total row."""
    rows = [
        {"type": t, **{(f"grade_{k}" if k.isdigit() else k): v for k, v in row.items()}}
        for t, row in summary["grade_distribution"].items()
    ]
    if rows:
        total = {"type": "(all)"}
        for key in rows[0]:
            if key != "type":
                total[key] = sum(r[key] for r in rows)
        rows.append(total)
    return rows
