"""Score completions with the domain pack's own grader and summarise them for a report.

One grader, two callers: every verdict comes from ``pack.grade`` — the same reward functions the trainer
optimises — so an evaluation number and a training reward can never disagree. Nothing here knows a
domain: the per-item figures are the values of the grader's :class:`~evaluator.domains.base.Score` for
the metrics the pack declares (``pack.metrics()``), each averaged over items with a bootstrap CI; extra
figures a domain adds come from ``pack.summarize``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.domains.base import DomainPack, Metric, Score, Verdict, check_metrics
from evaluator.evaluation import stats

MODES = ("strict", "flexible")


def item_key(question: Any, gold: Any) -> str:
    """A short content hash of an item, so two reports can tell "same id, different question" apart."""
    text = f"{question}\x1f{gold}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def question_of(pack: DomainPack, row: Mapping[str, Any]) -> str:
    if row.get("question") is not None:
        return str(row["question"])
    return pack.judge_context(row).get("task", "")


def gold_of(pack: DomainPack, row: Mapping[str, Any]) -> str | None:
    if row.get("answer") is not None:
        return str(row["answer"])
    reference = pack.judge_context(row).get("reference")
    return str(reference) if reference else None


def _safe_grade(
    pack: DomainPack, text: str, row: Mapping[str, Any], style: str, mode: str
) -> tuple[Verdict, str | None]:
    """``pack.grade``; a completion that crashes the grader counts as wrong and is reported, not raised."""
    try:
        return pack.grade(text, row, style=style, extract=mode), None
    except Exception as exc:  # one bad item never aborts the batch
        return Verdict(extracted=None, correct=False, format_ok=False, scores={}), f"grading failed: {exc!r}"


def metric_values(pack: DomainPack, metrics: Sequence[Metric], verdict: Verdict, failed: bool) -> dict[str, float]:
    """The declared metrics' values of one graded completion; a grader crash scores 0 on every metric."""
    if failed:
        return {m.name: 0.0 for m in metrics}
    score: Score = pack.score_of(verdict)
    values = score.values(metrics)
    return {m.name: values[m.name] for m in metrics if m.name in values}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def score_rows(
    pack: DomainPack,
    rows: Sequence[Mapping[str, Any]],
    completions: Sequence[str | Sequence[str]],
    style: str | None = None,
    extract: str = "strict",
    *,
    token_counts: Sequence[Sequence[int]] | None = None,
    errors: Mapping[int, str] | None = None,
    seed: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Grade ``completions[i]`` (one string, or K samples) against ``rows[i]``; return (summary, samples).

    ``extract`` picks which reading fills each sample's ``extracted``/``correct``; the summary always
    reports both ``strict`` and ``flexible`` accuracy. ``errors`` (row index → message) marks rows whose
    completions could not be produced. Samples come out row by row, sample by sample.
    """
    if extract not in MODES:
        raise ValueError(f"extract must be one of {', '.join(MODES)}, not {extract!r}")
    if len(rows) != len(completions):
        raise ValueError(f"{len(rows)} rows but {len(completions)} completion lists")
    errors = dict(errors or {})
    metrics = check_metrics(pack.metrics(), pack.name)
    samples: list[dict[str, Any]] = []
    per_item: list[dict[str, Any]] = []
    expanded_rows: list[Mapping[str, Any]] = []
    primary_verdicts: list[Verdict] = []
    styles_seen: list[str] = []
    for i, (row, comp) in enumerate(zip(rows, completions, strict=True)):
        texts = [comp] if isinstance(comp, str) else list(comp)
        row_style = pack.check_style(style or row.get("style"))
        if row_style not in styles_seen:
            styles_seen.append(row_style)
        item_id = str(row.get("id", i))
        question, gold = question_of(pack, row), gold_of(pack, row)
        graded = []
        for j, text in enumerate(texts):
            v_strict, err_s = _safe_grade(pack, text, row, row_style, "strict")
            v_flex, err_f = _safe_grade(pack, text, row, row_style, "flexible")
            primary = v_strict if extract == "strict" else v_flex
            err_primary = err_s if extract == "strict" else err_f
            sample: dict[str, Any] = {
                "id": item_id,
                "index": i,
                "sample": j,
                "question": question,
                "gold": gold,
                "completion": text,
                "style": row_style,
                "extract": extract,
                **_verdict_fields(primary, v_strict, v_flex),
                "metrics": metric_values(pack, metrics, primary, err_primary is not None),
            }
            _add_extras(sample, primary, v_strict, token_counts[i][j] if token_counts is not None else None)
            error = errors.get(i) or err_s or err_f
            if error:
                sample["error"] = error
            samples.append(sample)
            graded.append(sample)
            expanded_rows.append(row)
            primary_verdicts.append(primary)
        per_item.append({"id": item_id, "key": item_key(question, gold), "samples": graded})
    _complete_metrics(pack, expanded_rows, samples)
    summary = summarize(pack, per_item, seed=seed)
    summary.update(metric_summary(metrics, per_item, seed))
    summary.update(
        domain=pack.name,
        style=styles_seen[0] if len(styles_seen) == 1 else ",".join(styles_seen),
        extract=extract,
        domain_metrics=_domain_metrics(pack, expanded_rows, primary_verdicts),
    )
    return summary, samples


def _verdict_fields(primary: Verdict, strict: Verdict, flexible: Verdict) -> dict[str, Any]:
    """A sample's readings: the chosen one (``extracted``/``correct``), both modes, format and reward scores."""
    return {
        "extracted": primary.extracted,
        "correct": bool(primary.correct),
        "extracted_strict": strict.extracted,
        "correct_strict": bool(strict.correct),
        "extracted_flexible": flexible.extracted,
        "correct_flexible": bool(flexible.correct),
        "format_ok": bool(strict.format_ok),
        "scores": _jsonable(strict.scores),
    }


def _add_extras(sample: dict[str, Any], primary: Verdict, strict: Verdict, n_tokens: int | None) -> None:
    """The optional fields, in a sample's order: the grader's explanation, token count, details."""
    if primary.score is not None and primary.score.explanation:
        sample["explanation"] = primary.score.explanation
    if n_tokens is not None:
        sample["n_tokens"] = int(n_tokens)
    if strict.details:
        sample["details"] = _jsonable(strict.details)


def _domain_metrics(
    pack: DomainPack, rows: Sequence[Mapping[str, Any]], verdicts: Sequence[Verdict]
) -> dict[str, Any]:
    try:
        return _jsonable(pack.summarize(rows, verdicts) or {})
    except Exception as exc:  # a summary figure must not cost the whole report
        return {"error": f"pack.summarize failed: {exc!r}"}


def _frac(samples: Sequence[Mapping[str, Any]], field: str) -> float:
    return sum(bool(s[field]) for s in samples) / len(samples) if samples else 0.0


def _complete_metrics(pack: DomainPack, rows: Sequence[Mapping[str, Any]], samples: list[dict[str, Any]]) -> None:
    """Let the pack add its batch-computed metrics to every sample (one call for the whole batch)."""
    if not samples:
        return
    done = pack.complete_metrics(rows, [s["completion"] for s in samples], [s["metrics"] for s in samples])
    if len(done) != len(samples):
        raise ValueError(f"pack {pack.name!r} completed {len(done)} metric sets for {len(samples)} samples")
    for sample, values in zip(samples, done, strict=True):
        sample["metrics"] = {str(k): float(v) for k, v in values.items()}


def metric_summary(metrics: Sequence[Metric], items: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    """``metrics``: each declared metric over items (an item's value: the mean of its samples that have it)
    with a bootstrap CI over items and its declaration; ``headline``: the name of the headline metric."""
    out: dict[str, Any] = {}
    for m in metrics:
        per_item = []
        for it in items:
            got = [s["metrics"][m.name] for s in it["samples"] if m.name in s.get("metrics", {})]
            if got:
                per_item.append(sum(got) / len(got))
        out[m.name] = {
            **_with_ci(per_item, seed, proportion=m.binary),
            "n": len(per_item),
            "aggregation": m.aggregation,
            "higher_is_better": m.higher_is_better,
            "headline": m.headline,
            "binary": m.binary,
            "description": m.description,
        }
    return {"metrics": out, "headline": next(m.name for m in metrics if m.headline)}


def _with_ci(values: Sequence[float], seed: int, *, proportion: bool = True) -> dict[str, Any]:
    """The mean and its 95% interval: a bootstrap over items, except for a proportion that every item puts at
    the same end (0/20, 20/20), where resampling can only return the point itself; there the Wilson score
    interval over the items says how far the truth may be from it."""
    ends = proportion and values and all(v == values[0] for v in values) and values[0] in (0, 1)
    return {
        "value": sum(values) / len(values) if values else None,
        "ci95": stats.wilson_ci(values[0] * len(values), len(values)) if ends else stats.bootstrap_ci(values, seed=seed),
    }


def summarize(pack: DomainPack, items: Sequence[Mapping[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """Report figures from graded items (each: id, key, samples) — accuracy, format, rewards, pass/maj@k."""
    all_samples = [s for it in items for s in it["samples"]]
    counts = [len(it["samples"]) for it in items]
    k = min(counts) if counts else 0
    accuracy = {}
    for mode in MODES:
        fracs = [_frac(it["samples"], f"correct_{mode}") for it in items]
        entry = _with_ci(fracs, seed)
        entry["n_correct"] = sum(bool(s[f"correct_{mode}"]) for s in all_samples)
        accuracy[mode] = entry
    reward_names: list[str] = []
    for s in all_samples:
        reward_names.extend(n for n in s["scores"] if n not in reward_names)
    reward_means = {n: stats.mean_or_none([s["scores"].get(n) for s in all_samples]) for n in reward_names}
    summary: dict[str, Any] = {
        "n_items": len(items),
        "n_samples": k,
        "n_completions": len(all_samples),
        "n_errors": sum(1 for it in items if any("error" in s for s in it["samples"])),
        "accuracy": accuracy,
        "format_rate": _with_ci([_frac(it["samples"], "format_ok") for it in items], seed),
        "reward_means": reward_means,
        "primary_reward": pack.primary_reward,
        "pass_at_k": _pass_at_k(items, k, seed) if k > 1 else None,
        "maj_at_k": _maj_at_k(pack, items, k, seed) if k > 1 else None,
        "items": [_item_entry(it) for it in items],
        "errors": [
            {"id": s["id"], "index": s["index"], "sample": s["sample"], "message": s["error"]}
            for s in all_samples
            if "error" in s
        ],
    }
    return summary


def _item_entry(item: Mapping[str, Any]) -> dict[str, Any]:
    first = item["samples"][0] if item["samples"] else {}
    return {
        "id": item["id"],
        "key": item["key"],
        "correct_strict": bool(first.get("correct_strict", False)),
        "correct_flexible": bool(first.get("correct_flexible", False)),
        "n_correct_strict": sum(bool(s["correct_strict"]) for s in item["samples"]),
        "n_correct_flexible": sum(bool(s["correct_flexible"]) for s in item["samples"]),
        "n_samples": len(item["samples"]),
        "metrics": dict(first.get("metrics", {})),
    }


def _pass_at_k(items: Sequence[Mapping[str, Any]], k: int, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {"k": k}
    for mode in MODES:
        by_k = {}
        for kk in stats.ks_for(k):
            values = [
                stats.pass_at_k(
                    len(it["samples"]), sum(bool(s[f"correct_{mode}"]) for s in it["samples"]), kk
                )
                for it in items
            ]
            by_k[str(kk)] = _with_ci(values, seed)
        out[mode] = by_k
    return out


def _maj_at_k(pack: DomainPack, items: Sequence[Mapping[str, Any]], k: int, seed: int) -> dict[str, Any]:
    """Majority vote over the extracted answers; the vote is right when the samples giving it were graded right."""
    out: dict[str, Any] = {"k": k}
    for mode in MODES:
        values = []
        for it in items:
            answers = [s[f"extracted_{mode}"] for s in it["samples"]]
            verdict_of = {}
            for s in it["samples"]:
                verdict_of.setdefault(s[f"extracted_{mode}"], bool(s[f"correct_{mode}"]))
            voted = stats.majority_vote(answers, key=pack.normalize_answer)
            values.append(1.0 if voted is not None and verdict_of.get(voted) else 0.0)
        out[mode] = _with_ci(values, seed)
    return out
