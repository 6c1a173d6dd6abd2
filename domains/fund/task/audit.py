"""Why a fund reward gave 0: the rule that zeroed a completion, and per-step tallies of a GRPO run.

Training moves whatever the rewards pay for; a rise in reward is only learning when the completions earn it
the honest way. This reads every completion a run wrote (``completions.jsonl`` with
``completions_per_log`` = the step's completions) and says, step by step, the mean of each reward, how
many groups had no reward spread (no signal for GRPO), and what share of completions each reward's rules
zeroed, by rule: prose around the JSON (``not_strict``), text addressing the grader (``injection``),
non-Korean text, copied prompt text (``copying``), overlong rationales (``length``), figure dumps
(``figure_dump``), or simply no correct figure / a grade two bands off (not anti-gaming, but named).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluator.domains.fund.task.answer import read_answer
from evaluator.domains.fund.task.dataset import load_rows
from evaluator.domains.fund.task.reasoning import ZERO_FIGURES, reasoning_breakdown
from evaluator.domains.fund.task.rewards import REWARD_NAMES, load_facts

ANTI_GAMING = ("not_strict", "injection", "not_korean", "copying", "length", "figure_dump")
"""Rules that exist to refuse a way around a reward (the other reasons are plain wrong answers)."""


def _reasoning_zero(text: str, facts: Mapping[str, Any], facts_text: str) -> str:
    answer = read_answer(text)
    if answer.framing != "strict":
        return "not_strict" if answer.obj is not None else "no_json"
    found = reasoning_breakdown(answer.strict, dict(facts), facts_text)
    if found.get("injection"):
        return "injection"
    reason = str(found.get("reason") or "")
    if "not Korean" in reason:
        return "not_korean"
    if "rationale_ko" in reason:
        return "no_rationale"
    parts = found.get("parts", {})
    for rule in ("copying", "length"):
        if parts.get(rule, 1.0) == 0:
            return rule
    if parts.get("figures", 1.0) == 0:
        counted = found.get("figures_correct", 0) + found.get("figures_context", 0)
        counted += len(found.get("figures_wrong", [])) + found.get("figures_unattributed", 0)
        return "figure_dump" if counted >= ZERO_FIGURES else "no_correct_figure"
    return "other"


def zero_reason(name: str, text: str, row: Mapping[str, Any]) -> str:
    """The rule that gave ``text`` a 0 for reward ``name`` (call it only for a 0)."""
    answer = read_answer(text)
    if answer.obj is None:
        return "no_json"
    if name == "json_format":
        return "other"
    if answer.framing != "strict":
        return "not_strict"
    if name == "grade_accuracy":
        return "no_grade" if answer.grade("strict") is None else "two_bands_off"
    if name == "reasoning_quality":
        return _reasoning_zero(text, load_facts(row["facts"]), row["facts"])
    return "other"


def fund_code_of(prompt: str, codes: Iterable[str]) -> str | None:
    """The fund a prompt is about: the code in its first line (``펀드: 이름 (CODE)``)."""
    first = prompt.split("\n", 1)[0]
    found = [c for c in codes if f"({c})" in first]
    return found[0] if len(found) == 1 else None


def audit_rows(records: list[Mapping[str, Any]], rows_by_code: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One summary per step of ``completions.jsonl`` records (see the module docstring)."""
    by_step: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for rec in records:
        by_step[int(rec["step"])].append(rec)
    out = []
    for step, recs in sorted(by_step.items()):
        means = {}
        zeroed: dict[str, dict[str, float]] = {}
        for name in REWARD_NAMES:
            values = [r["rewards"].get(name) for r in recs if r["rewards"].get(name) is not None]
            means[name] = round(sum(values) / len(values), 4) if values else None
            reasons: Counter[str] = Counter()
            for rec in recs:
                if rec["rewards"].get(name) == 0:
                    row = rows_by_code.get(fund_code_of(str(rec["prompt"]), rows_by_code) or "")
                    reasons[zero_reason(name, str(rec["completion"]), row) if row else "unknown_fund"] += 1
            zeroed[name] = {k: round(v / len(recs), 4) for k, v in sorted(reasons.items())}
        groups: dict[str, list[float]] = defaultdict(list)
        for rec in recs:
            groups[str(rec["prompt"])].append(float(rec.get("advantage") or 0.0))
        flat = sum(1 for adv in groups.values() if all(abs(a) < 1e-9 for a in adv))
        out.append(
            {
                "step": step,
                "completions": len(recs),
                "reward_means": means,
                "zeroed_share": zeroed,
                "anti_gaming_share": {
                    n: round(sum(v for k, v in zeroed[n].items() if k in ANTI_GAMING), 4) for n in REWARD_NAMES
                },
                "groups": len(groups),
                "groups_without_signal": flat,
            }
        )
    return out


def audit_completions(path: Path, source: str | None) -> list[dict[str, Any]]:
    """``audit_rows`` of a run's ``completions.jsonl``, the funds looked up in the task data ``source``."""
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = {r["fund_code"]: r for r in load_rows(source, "all")}
    return audit_rows(records, rows)
