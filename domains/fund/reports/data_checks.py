"""Which funds a data check refused, repaired or graded as they were: named in ``summary.json`` and in one
console line, so a refused or repaired fund is never found only by opening its own report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluator.domains.fund.engine import Evaluation
from evaluator.domains.fund.types import ERROR, NOT_RATED

DATA_CODES = frozenset({"unadjusted_distribution"})
"""``not_rated`` reason codes that come from a data check (the others are eligibility rules)."""


def data_checks(evaluation: Evaluation) -> dict[str, Any]:
    """``refused``: every fund in ``error`` and every fund a data check left ``not_rated``, with its reason
    codes; ``repaired`` / ``kept``: funds whose NAV typos were read as missing or graded as they were."""
    refused = [
        {"fund_code": f.fund_code, "status": f.status, "reason_codes": list(f.reason_codes)}
        for f in evaluation.funds
        if f.status == ERROR or (f.status == NOT_RATED and DATA_CODES & set(f.reason_codes))
    ]
    outliers: Mapping[str, Any] = evaluation.inputs.get("outliers") or {}
    return {
        "refused": refused,
        "repaired": list(outliers.get("repaired") or []),
        "kept": list(outliers.get("kept") or []),
    }


def console_line(block: Mapping[str, Any], shown: int = 20) -> str | None:
    """One line naming the refused, repaired and kept funds (the first ``shown`` of each), or None."""

    def names(codes: list[str]) -> str:
        more = f" 외 {len(codes) - shown}개" if len(codes) > shown else ""
        return ", ".join(codes[:shown]) + more

    parts = []
    refused = [r["fund_code"] for r in block.get("refused", [])]
    if refused:
        parts.append(f"refused {len(refused)} ({names(refused)})")
    for what in ("repaired", "kept"):
        if block.get(what):
            parts.append(f"{what} {len(block[what])} ({names(block[what])})")
    return "data checks: " + "; ".join(parts) + " — see summary.json data_checks" if parts else None
