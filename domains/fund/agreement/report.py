"""The agreement document (``agreement.json``): engine and model against the analysts, and analysts together.

Pairs are (fund, analyst): with several analysts, the engine is compared with each of them and the
pooled figures treat it as one more analyst; the analysts' agreement with each other (every two analysts
who graded the same fund) on the same funds is the ceiling. Bootstrap CIs resample funds. Funds on one
side only are counted and listed, never dropped silently. Schema: ``agreement.schema.json``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import combinations
from typing import Any

from evaluator.core.schemas import load_schema
from evaluator.domains.fund.agreement.io import Experts
from evaluator.domains.fund.agreement.reports import Batch, fund_details
from evaluator.domains.fund.agreement.stats import Pairs, compare

TOP_DISAGREEMENTS = 20
NO_TYPE = "(유형 없음)"
EXPERTS = "experts"


def agreement_schema() -> dict[str, Any]:
    return load_schema(__package__, "agreement.schema.json")


def _rater(analyst: str | None) -> str:
    return analyst if analyst is not None else EXPERTS


class _Builder:
    def __init__(self, experts: Experts, batch: Batch, k: int, resamples: int, seed: int) -> None:
        self.batch, self.k, self.resamples, self.seed = batch, k, resamples, seed
        self.by_fund: dict[str, dict[str, int]] = defaultdict(dict)
        for g in experts.grades:
            self.by_fund[g.fund_code][_rater(g.analyst)] = g.grade
        self._details: dict[str, dict[str, Any]] = {}

    def compare(self, rows: list[tuple[str, int, int]]) -> dict[str, Any]:
        pairs = Pairs([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
        return compare(pairs, self.k, resamples=self.resamples, seed=self.seed)

    def other(self, code: str, side: str) -> int | None:
        fund = self.batch.funds[code]
        return fund.grade if side == "engine" else fund.model_grade

    def side(self, codes: list[str], side: str) -> dict[str, Any]:
        rows = [
            (c, rater, g, other)
            for c in codes
            if (other := self.other(c, side)) is not None
            for rater, g in self.by_fund[c].items()
        ]
        block = self.compare([(c, g, o) for c, _, g, o in rows])
        raters = sorted({r for _, r, _, _ in rows})
        block["by_analyst"] = (
            {r: self.compare([(c, g, o) for c, who, g, o in rows if who == r]) for r in raters}
            if len(raters) > 1
            else None
        )
        return block

    def inter_analyst(self, codes: list[str]) -> dict[str, Any] | None:
        ordered = []  # every two analysts of a fund, in both directions (neither is the reference)
        for c in codes:
            for (_, x), (_, y) in combinations(sorted(self.by_fund[c].items()), 2):
                ordered += [(c, x, y), (c, y, x)]
        if not ordered:
            return None
        block = self.compare(ordered)
        block["pairs"] //= 2
        block["exact"]["count"] //= 2
        block["within_one"]["count"] //= 2
        raters = sorted({r for c in codes for r in self.by_fund[c]})
        block["analyst_pairs"] = []
        for a, b in combinations(raters, 2):
            both = [
                (c, self.by_fund[c][a], self.by_fund[c][b]) for c in codes if {a, b} <= set(self.by_fund[c])
            ]
            if both:
                block["analyst_pairs"].append({"analysts": [a, b], **_brief(self.compare(both))})
        return block

    def details(self, code: str) -> dict[str, Any]:
        if code not in self._details:
            self._details[code] = fund_details(self.batch, self.batch.funds[code])
        return self._details[code]

    def disagreements(self, codes: list[str], side: str) -> list[dict[str, Any]]:
        scored = []
        for c in codes:
            other = self.other(c, side)
            if other is None:
                continue
            grades = self.by_fund[c]
            mean = sum(grades.values()) / len(grades)
            if other != mean:
                scored.append((-abs(other - mean), c, mean, other))
        out = []
        for _, c, mean, other in sorted(scored)[:TOP_DISAGREEMENTS]:
            fund = self.batch.funds[c]
            out.append(
                {
                    "fund_code": c,
                    "fund_name": fund.fund_name,
                    "type": fund.type,
                    "expert_grades": [{"analyst": r, "grade": g} for r, g in sorted(self.by_fund[c].items())],
                    "expert_mean": mean,
                    "engine_grade": fund.grade,
                    "model_grade": fund.model_grade if self.batch.has_model else None,
                    "difference": other - mean,
                    "score": fund.score,
                    "peer_percentile": fund.peer_percentile,
                    **self.details(c),
                }
            )
        return out

    def scope(self, codes: list[str]) -> dict[str, Any]:
        model = self.batch.has_model
        return {
            "funds_matched": len(codes),
            "engine": self.side(codes, "engine"),
            "model": self.side(codes, "model") if model else None,
            "inter_analyst": self.inter_analyst(codes),
            "largest_disagreements": {
                "engine": self.disagreements(codes, "engine"),
                "model": self.disagreements(codes, "model") if model else None,
            },
        }


def _brief(block: dict[str, Any]) -> dict[str, Any]:
    keep = ("pairs", "funds", "kappa", "kappa_ci95")
    return {
        **{k: block[k] for k in keep},
        "exact_rate": block["exact"]["rate"],
        "within_one_rate": block["within_one"]["rate"],
    }


def build_agreement(
    experts: Experts,
    batch: Batch,
    labels: list[str],
    *,
    by_type: bool = False,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The whole ``agreement.json`` document (grades 1…len(labels), labels from the rubric's bands)."""
    k = len(labels)
    b = _Builder(experts, batch, k, resamples, seed)
    funds = batch.funds
    matched = sorted(c for c in b.by_fund if c in funds and funds[c].grade is not None)
    expert_only = [
        {
            "fund_code": c,
            "reason": "no_report" if c not in funds else funds[c].status,
            "rows": sorted(g.row for g in experts.grades if g.fund_code == c),
        }
        for c in sorted(b.by_fund)
        if c not in matched
    ]
    engine_only = [
        {"fund_code": c, "type": f.type, "engine_grade": f.grade}
        for c, f in sorted(funds.items())
        if f.grade is not None and c not in b.by_fund
    ]
    model_missing = (
        [{"fund_code": c, "type": funds[c].type} for c in matched if funds[c].model_grade is None]
        if batch.has_model
        else []
    )
    groups: dict[str, list[str]] = defaultdict(list)
    for c in matched:
        groups[funds[c].type or NO_TYPE].append(c)
    missing = {
        "expert_only": expert_only,
        "engine_only": engine_only,
        "model_missing": model_missing,
        "blank_grades": experts.blank_grades,
        "repeated": experts.repeated,
        "other_dates": experts.other_dates,
    }
    doc: dict[str, Any] = {
        "schema_version": 1,
        "reports": {
            "folder": str(batch.folder),
            "as_of": batch.as_of,
            "rubric": batch.rubric,
            "model": batch.model,
        },
        "experts": {**experts.source, "analysts": experts.analysts, "funds": len(b.by_fund)},
        "grades": {"count": k, "labels": labels},
        "by": "type" if by_type else None,
        "bootstrap": {
            "resamples": resamples,
            "seed": seed,
            "method": "percentile 95% interval; funds resampled with replacement (all of a fund's pairs together)",
        },
        "counts": {
            "expert_grades": len(experts.grades),
            "expert_funds": len(b.by_fund),
            "engine_rated": sum(f.grade is not None for f in funds.values()),
            "matched_funds": len(matched),
            **{key: len(value) for key, value in missing.items()},
        },
        "missing": missing,
        "notes": [*experts.notes, *_code_notes(expert_only, funds, len(matched))],
        "overall": b.scope(matched),
        "by_type": {t: b.scope(codes) for t, codes in sorted(groups.items())} if by_type else None,
    }
    doc["summary_ko"] = summary_ko(doc)
    return doc


def _code_notes(expert_only: list[dict[str, Any]], funds: dict[str, Any], matched: int) -> list[str]:
    """Hints for the usual reasons codes do not meet (Excel dropped leading zeros, letter case); never a guess."""
    notes = []
    lengths = {len(c) for c in funds}
    padded = [
        (e["fund_code"], e["fund_code"].zfill(n))
        for e in expert_only
        if e["reason"] == "no_report" and e["fund_code"].isdigit()
        for n in lengths
        if n > len(e["fund_code"]) and e["fund_code"].zfill(n) in funds
    ]
    if padded:
        code, full = padded[0]
        notes.append(
            f"펀드코드 {len(padded)}개는 앞자리 0이 빠진 것으로 보입니다(예: {code} → {full}); "
            "엑셀에서 펀드코드 열을 텍스트로 저장하세요"
        )
    upper = {c.upper(): c for c in funds}
    cased = [
        e["fund_code"] for e in expert_only if e["reason"] == "no_report" and e["fund_code"].upper() in upper
    ]
    if cased:
        notes.append(
            f"펀드코드 {len(cased)}개는 대소문자만 다릅니다(예: {cased[0]} → {upper[cased[0].upper()]}); "
            "펀드코드는 글자 그대로 비교합니다"
        )
    if not matched:
        notes.append("전문가 등급과 엔진 등급을 함께 가진 펀드가 없습니다; 펀드코드와 평가 폴더를 확인하세요")
    return notes


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.1f}%"


def _kappa(block: dict[str, Any]) -> str:
    if block["kappa"] is None:
        return "가중 카파 계산 불가"
    ci = block["kappa_ci95"]
    return f"가중 카파 {block['kappa']:.3f}" + (f" (95% CI {ci[0]:.3f}~{ci[1]:.3f})" if ci else "")


def summary_ko(doc: dict[str, Any]) -> str:
    """One Korean line for the console: engine (and model) against the analysts, ceiling, missing funds."""
    overall, counts = doc["overall"], doc["counts"]
    eng = overall["engine"]
    parts = [
        f"전문가 평가 {counts['matched_funds']}개 펀드 비교: 엔진 일치 {_pct(eng['exact']['rate'])}, "
        f"±1등급 이내 {_pct(eng['within_one']['rate'])}, {_kappa(eng)}"
    ]
    if overall["model"] is not None:
        mod = overall["model"]
        parts.append(f"모델 일치 {_pct(mod['exact']['rate'])}, {_kappa(mod)}")
    if overall["inter_analyst"] is not None:
        parts.append(f"전문가 간 {_kappa(overall['inter_analyst'])}")
    parts.append(f"전문가만 평가 {counts['expert_only']}개, 엔진만 평가 {counts['engine_only']}개")
    if counts["model_missing"]:
        parts.append(f"모델 등급 없음 {counts['model_missing']}개")
    return " · ".join(parts)


def _row(scope: str, comparison: str, analyst: str | None, block: dict[str, Any]) -> dict[str, Any]:
    ci = block["kappa_ci95"] or [None, None]
    return {
        "scope": scope,
        "comparison": comparison,
        "analyst": analyst or "",
        "pairs": block["pairs"],
        "funds": block["funds"],
        "exact_rate": block["exact"]["rate"] if "exact" in block else block["exact_rate"],
        "within_one_rate": block["within_one"]["rate"] if "within_one" in block else block["within_one_rate"],
        "kappa": block["kappa"],
        "kappa_ci_low": ci[0],
        "kappa_ci_high": ci[1],
    }


def csv_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for ``agreement.csv``: one per scope (전체, each 유형) × comparison (× analyst)."""
    scopes: Iterable[tuple[str, dict[str, Any]]] = [("전체", doc["overall"]), *(doc["by_type"] or {}).items()]
    rows: list[dict[str, Any]] = []
    for name, scope in scopes:
        for side in ("engine", "model"):
            block = scope[side]
            if block is None:
                continue
            rows.append(_row(name, f"{side}_vs_experts", None, block))
            for analyst, sub in (block["by_analyst"] or {}).items():
                rows.append(_row(name, f"{side}_vs_experts", analyst, sub))
        inter = scope["inter_analyst"]
        if inter is not None:
            rows.append(_row(name, "inter_analyst", None, inter))
            for pair in inter["analyst_pairs"]:
                rows.append(_row(name, "inter_analyst", " / ".join(pair["analysts"]), pair))
    return rows


def fund_rows(doc: dict[str, Any], experts: Experts, batch: Batch) -> list[dict[str, Any]]:
    """Rows for ``agreement_funds.csv``: every (fund, analyst) grade and every engine-only fund."""
    fmt: Callable[[int | None], Any] = lambda g: "" if g is None else g  # noqa: E731
    rows = []
    for g in sorted(experts.grades, key=lambda g: (g.fund_code, _rater(g.analyst))):
        fund = batch.funds.get(g.fund_code)
        engine = fund.grade if fund else None
        model = fund.model_grade if fund and batch.has_model else None
        rows.append(
            {
                "fund_code": g.fund_code,
                "fund_name": fund.fund_name if fund else "",
                "type": (fund.type if fund else "") or "",
                "analyst": _rater(g.analyst),
                "expert_grade": g.grade,
                "engine_status": fund.status if fund else "no_report",
                "engine_grade": fmt(engine),
                "engine_difference": fmt(None if engine is None else engine - g.grade),
                "model_grade": fmt(model),
                "model_difference": fmt(None if model is None else model - g.grade),
            }
        )
    for item in doc["missing"]["engine_only"]:
        fund = batch.funds[item["fund_code"]]
        rows.append(
            {
                "fund_code": fund.fund_code,
                "fund_name": fund.fund_name or "",
                "type": fund.type or "",
                "analyst": "",
                "expert_grade": "",
                "engine_status": fund.status,
                "engine_grade": fund.grade,
                "engine_difference": "",
                "model_grade": fmt(fund.model_grade if batch.has_model else None),
                "model_difference": "",
            }
        )
    return rows
