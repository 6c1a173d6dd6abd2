"""Score completions that already exist (no model): a JSONL of question / answer / completion lines.

A line that cannot be read (bad JSON, no completion, no usable answer) is reported and left out of the
figures; it never stops the other lines from being scored. ``samples.jsonl`` keeps one line per input
line, in input order, the unreadable ones included with their ``error``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from evaluator.domains.base import DomainPack, PackError, completion_text
from evaluator.evaluation.report import file_sha256, finalize_report
from evaluator.evaluation.scoring import score_rows


def gold_from_field(pack: DomainPack, value: Any) -> Any:
    """The pack's reading of an answer field (e.g. the number after ``####``); the value itself otherwise."""
    return pack.gold_from_field(value)


def _read_line(pack: DomainPack, text: str, lineno: int, style: str | None) -> dict[str, Any]:
    """One input line → a row for ``pack.grade`` plus its completion; raises ValueError with the reason."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    if "completion" not in obj or obj["completion"] is None:
        raise ValueError("no 'completion' field")
    if obj.get("answer") in (None, ""):
        raise ValueError("no 'answer' field")
    try:
        row_style = pack.check_style(style or obj.get("style"))
    except PackError as exc:
        raise ValueError(str(exc)) from exc
    try:
        gold = gold_from_field(pack, obj["answer"])
    except (ValueError, TypeError) as exc:
        raise ValueError(f"answer {obj['answer']!r} cannot be read: {exc}") from exc
    if gold is None:
        raise ValueError(f"answer {obj['answer']!r} has no final answer to compare with")
    row = {k: v for k, v in obj.items() if k not in ("completion", "prompt")}
    row.update(answer=gold, style=row_style)
    return {"row": row, "completion": completion_text(obj["completion"]), "answer_field": obj["answer"]}


def score_predictions(
    pack: DomainPack,
    path: str | os.PathLike[str],
    *,
    style: str | None = None,
    extract: str = "strict",
    seed: int = 0,
    samples_file: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Grade every line of ``path``; return (validated report, samples in input-line order)."""
    t0 = time.perf_counter()
    if style is not None:
        pack.check_style(style)
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"predictions file {source} does not exist")
    good: list[dict[str, Any]] = []
    order: list[tuple[str, int, Any]] = []  # ("ok", lineno, position in good) or ("bad", lineno, message)
    seen: dict[str, int] = {}
    warnings: list[str] = []
    with open(source, encoding="utf-8") as fh:
        for lineno, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                item = _read_line(pack, text, lineno, style)
            except ValueError as exc:
                order.append(("bad", lineno, str(exc)))
                continue
            item_id = str(item["row"].get("id", f"line-{lineno}"))
            if item_id in seen:
                warnings.append(
                    f"line {lineno}: id {item_id!r} already used on line {seen[item_id]}; "
                    f"scored as {item_id}@line{lineno}"
                )
                item_id = f"{item_id}@line{lineno}"
            seen[item_id] = lineno
            item["row"]["id"] = item_id
            item["lineno"] = lineno
            order.append(("ok", lineno, len(good)))
            good.append(item)
    bad = [(lineno, msg) for kind, lineno, msg in order if kind == "bad"]
    if not good:
        first = f" (line {bad[0][0]}: {bad[0][1]})" if bad else ""
        raise ValueError(f"{source} has no line that can be scored{first}")

    summary, graded = score_rows(
        pack, [g["row"] for g in good], [g["completion"] for g in good], style, extract, seed=seed
    )
    samples: list[dict[str, Any]] = []
    for kind, lineno, ref in order:
        if kind == "ok":
            sample = dict(graded[ref])
            sample["gold_field"] = _plain(good[ref]["answer_field"])
        else:
            sample = _invalid_sample(lineno, ref, extract)
        sample["line"] = lineno
        sample["index"] = len(samples)
        samples.append(sample)
    summary["errors"] = [{"line": ln, "message": msg} for ln, msg in bad] + [
        {"id": e["id"], "line": good[e["index"]]["lineno"], "message": e["message"]}
        for e in summary["errors"]
    ]
    if bad:
        warnings.insert(0, f"{len(bad)} line(s) could not be read and were left out; see errors")
    warnings.extend(pack.metric_notes())
    report = finalize_report(
        summary,
        kind="score",
        identity={"predictions": str(source), "predictions_sha256": file_sha256(source)},
        generation=None,
        timing={"seconds": round(time.perf_counter() - t0, 3)},
        samples_file=samples_file,
        warnings=warnings,
        extra={"n_invalid_lines": len(bad)},
    )
    return report, samples


def _plain(value: Any) -> str | float | int | None:
    return value if isinstance(value, str | int | float) or value is None else str(value)


def _invalid_sample(lineno: int, message: str, extract: str) -> dict[str, Any]:
    return {
        "id": f"line-{lineno}",
        "sample": 0,
        "question": None,
        "gold": None,
        "completion": "",
        "extract": extract,
        "extracted": None,
        "correct": False,
        "extracted_strict": None,
        "correct_strict": False,
        "extracted_flexible": None,
        "correct_flexible": False,
        "format_ok": False,
        "scores": {},
        "error": f"line {lineno}: {message}",
    }
