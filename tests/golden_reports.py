"""Golden evaluation reports: fixed gsm8k and fund completions scored, to prove a refactor keeps every number.

``python tests/golden_reports.py --write`` (from the checkout) records ``tests/golden/*.json`` with the code as it
is; ``tests/fund/test_golden_reports.py`` rebuilds the same reports and requires every value the golden file holds to
be unchanged (new keys may be added; only timestamps, timings, the version and the schema number may move).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "golden"
VOLATILE = {"created_at", "timing", "evaluator_version", "schema_version"}

R = "<reasoning>\nShe buys 3 bags of 6, so 3 * 6 = 18.\n</reasoning>\n"
GSM8K_LINES: list[dict[str, Any]] = [
    {"id": "a", "question": "3 bags of 6?", "answer": "#### 18", "style": "xml", "completion": R + "<answer>\n18\n</answer>"},
    {"id": "b", "question": "3 bags of 6?", "answer": "#### 18", "style": "xml", "completion": R + "<answer>17</answer>"},
    {"id": "c", "question": "half?", "answer": "#### 0.5", "style": "xml", "completion": R + "The answer is 0.5"},
    {"id": "d", "question": "minus?", "answer": "#### -5", "style": "xml", "completion": R + "<answer>-5</answer> extra"},
    {"id": "e", "question": "many?", "answer": "#### 1234", "style": "think-solution",
     "completion": "<THINK>\n1000+234\n</THINK>\n<SOLUTION>1,234</SOLUTION>"},
    {"id": "f", "question": "none?", "answer": "#### 7", "style": "xml", "completion": "I do not know."},
    {"id": "g", "question": "q?", "answer": "#### 9", "style": "qwen3-think",
     "completion": "<think>\n4+5\n</think>\n\n#### 9"},
    {"id": "h", "question": "hack?", "answer": "#### 18", "style": "xml", "completion": R + "<answer>17 or 18</answer>"},
]


def _gsm8k_score(tmp: Path) -> dict[str, Any]:
    from evaluator.domains.registry import get_pack
    from evaluator.evaluation.predictions import score_predictions

    path = tmp / "gsm8k_predictions.jsonl"
    lines = [json.dumps(x) for x in GSM8K_LINES] + ["not json", json.dumps({"id": "z", "answer": "#### 1"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report, _ = score_predictions(get_pack("gsm8k"), path.name, seed=3)
    return report


def _gsm8k_samples(tmp: Path) -> dict[str, Any]:
    """Several samples per item (pass@k, maj@k) through the harness's scorer, flexible extraction."""
    from evaluator.domains.registry import get_pack
    from evaluator.evaluation.report import finalize_report
    from evaluator.evaluation.scoring import score_rows

    pack = get_pack("gsm8k")
    rows = [{"id": x["id"], "question": x["question"], "answer": x["answer"].split()[-1], "style": x["style"]}
            for x in GSM8K_LINES[:5]]
    comps = [[x["completion"], GSM8K_LINES[1]["completion"], x["completion"] + "\n#### 18"] for x in GSM8K_LINES[:5]]
    summary, _ = score_rows(pack, rows, comps, None, "flexible", seed=1)
    return finalize_report(summary, kind="evaluation", identity={"model": "golden"}, generation=None,
                           timing={"seconds": 0.0}, samples_file=None)


def _fund_score(tmp: Path) -> dict[str, Any]:
    from evaluator.domains.registry import get_pack
    from evaluator.evaluation.predictions import score_predictions

    pack = get_pack("fund")
    rows = pack.dataset("sample?funds=24", "all").to_list()[:6]
    lines = []
    for i, row in enumerate(rows):
        ref = pack.reference_solution(row) or ""
        if i % 3 == 1:  # a wrong grade, stated twice
            doc = json.loads(ref)
            wrong = 1 if int(doc["grade"]) != 1 else 2
            doc["grade"] = wrong
            ref = json.dumps(doc, ensure_ascii=False)
        elif i % 3 == 2:
            ref = f"이 펀드는 {row['grade']}등급입니다."
        line = {k: v for k, v in row.items() if k != "prompt"}
        line["completion"] = ref
        lines.append(json.dumps(line, ensure_ascii=False))
    path = tmp / "fund_predictions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report, _ = score_predictions(pack, path.name, seed=5)
    return report


def _compare(tmp: Path) -> dict[str, Any]:
    from evaluator.evaluation.compare import compare_reports

    a = _gsm8k_score(tmp)
    b = json.loads(json.dumps(a))
    for item in b["items"][:3]:
        item["correct_strict"] = not item["correct_strict"]
    return compare_reports(a, b, seed=2)


BUILDERS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "gsm8k_score": _gsm8k_score,
    "gsm8k_samples": _gsm8k_samples,
    "fund_score": _fund_score,
    "gsm8k_compare": _compare,
}


def build(name: str, tmp: Path) -> dict[str, Any]:
    """One golden document, built in ``tmp`` (relative file names, so paths in the identity are stable)."""
    old = Path.cwd()
    os.chdir(tmp)
    try:
        return json.loads(json.dumps(BUILDERS[name](tmp), ensure_ascii=False))
    finally:
        os.chdir(old)


def differences(golden: Any, new: Any, path: str = "$") -> list[str]:
    """Every place where ``new`` lacks or changes a value of ``golden`` (extra keys in ``new`` are fine)."""
    if isinstance(golden, dict):
        if not isinstance(new, dict):
            return [f"{path}: was an object, now {type(new).__name__}"]
        out: list[str] = []
        for key, value in golden.items():
            if key in VOLATILE:
                continue
            if key not in new:
                out.append(f"{path}.{key}: missing")
            else:
                out += differences(value, new[key], f"{path}.{key}")
        return out
    if isinstance(golden, list):
        if not isinstance(new, list) or len(new) != len(golden):
            return [f"{path}: list changed length or type"]
        return [d for i, (g, n) in enumerate(zip(golden, new, strict=True)) for d in differences(g, n, f"{path}[{i}]")]
    return [] if golden == new and type(golden) is type(new) else [f"{path}: {golden!r} -> {new!r}"]


def main(argv: list[str]) -> int:
    import tempfile

    write = "--write" in argv
    GOLDEN.mkdir(exist_ok=True)
    failed = 0
    for name in BUILDERS:
        with tempfile.TemporaryDirectory() as tmp:
            doc = build(name, Path(tmp))
        target = GOLDEN / f"{name}.json"
        if write:
            target.write_text(json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            print(f"wrote {target}")
            continue
        diffs = differences(json.loads(target.read_text(encoding="utf-8")), doc)
        failed += bool(diffs)
        print(f"{name}: {'identical' if not diffs else f'{len(diffs)} difference(s)'}")
        for d in diffs[:20]:
            print(f"  {d}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
