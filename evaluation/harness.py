"""``evaluate``: generate with a model (+ adapter) on a pack's dataset, grade, write report and samples.

The same function backs ``evaluator eval``, the trainer's before/after numbers and the demos, so every
adapter's figure is computed the same way. Generations are appended to ``generations.partial.jsonl``
as batches finish, so a crash late in a long run leaves the completions behind; the file is removed
once ``samples.jsonl`` and ``report.json`` are written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evaluator.core.outputs import append_jsonl, prepare_output_dir
from evaluator.domains.base import DomainPack
from evaluator.evaluation.generate import BACKENDS, Generator, check_generation_args
from evaluator.evaluation.report import (
    REPORT_NAME,
    SAMPLES_NAME,
    adapter_sha256,
    file_sha256,
    finalize_report,
    write_report,
    write_samples,
)
from evaluator.evaluation.scoring import score_rows
from evaluator.models.chat_format import template_kwargs_for

PARTIAL_NAME = "generations.partial.jsonl"


def _rows(dataset: Any, limit: int | None) -> list[dict[str, Any]]:
    rows = dataset.to_list() if hasattr(dataset, "to_list") else [dict(r) for r in dataset]
    return rows[:limit] if limit is not None else rows


def evaluate(
    pack: DomainPack | str,
    model: str | None = None,
    *,
    adapter: str | os.PathLike[str] | None = None,
    data: str | None = None,
    split: str = "test",
    limit: int | None = None,
    samples: int = 1,
    temperature: float = 0.0,
    top_p: float = 1.0,
    top_k: int = 0,
    batch_size: int = 16,
    max_new_tokens: int = 256,
    style: str | None = None,
    language: str | None = None,
    backend: str = "hf",
    quantize: str | None = None,
    device: str | None = None,
    extract: str = "strict",
    out_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    seed: int = 0,
    generator: Generator | None = None,
    dataset: Any = None,
    on_batch: Callable[[list[int]], None] | None = None,
    return_samples: bool = False,
) -> Any:
    """Evaluate ``model`` (or an already loaded ``generator``) on the pack's data; return the report.

    ``dataset`` (rows with ``prompt`` and the pack's gold columns) replaces ``pack.dataset(data, split…)``
    when given. With ``out_dir`` the report and samples are written there (a non-empty folder is
    refused unless ``force``). ``on_batch`` hears the row indices of each finished batch (progress bars);
    ``return_samples`` returns ``(report, samples)`` for callers that present the graded samples themselves.
    """
    from evaluator.domains.registry import get_pack

    t_start = time.perf_counter()
    pack_obj = get_pack(pack) if isinstance(pack, str) else pack
    style = pack_obj.check_style(style)
    language = pack_obj.check_language(language)
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    check_generation_args(samples, temperature, max_new_tokens, batch_size)
    if extract not in ("strict", "flexible"):
        raise ValueError(f"extract must be strict or flexible, not {extract!r}")
    if generator is None and backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if generator is None and model is not None:
        from evaluator.models.loading import model_source

        model_source(model)  # a missing folder or an unreachable hub fails now, before any data is built
    out = prepare_output_dir(out_dir, force=force) if out_dir is not None else None
    if dataset is None:
        dataset = pack_obj.dataset(data, split, style=style, language=language, limit=limit, seed=seed)
    rows = _rows(dataset, limit)
    if not rows:
        raise ValueError(
            f"no items to evaluate (domain {pack_obj.name}, data {data or 'default'}, split {split})"
        )
    if generator is None:
        if model is None:
            raise ValueError("evaluate needs a model name or a loaded generator")
        generator = Generator.load(
            model, adapter=adapter, quantize=quantize, device=device, backend=backend, seed=seed
        )
    template_kwargs = template_kwargs_for(generator.tokenizer, style, pack_obj)  # folding: Generator.render

    partial = out / PARTIAL_NAME if out is not None else None
    if partial is not None:
        partial.unlink(missing_ok=True)

    def save_partial(indices: list[int], texts: list[list[str]]) -> None:
        if on_batch is not None:
            on_batch(indices)
        if partial is None:
            return
        for idx, done in zip(indices, texts, strict=True):
            append_jsonl(partial, {"index": idx, "id": str(rows[idx].get("id", idx)), "completions": done})

    gens = generator.generate(
        [r["prompt"] for r in rows],
        n=samples,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        seed=seed,
        chat_template_kwargs=template_kwargs,
        on_batch=save_partial,
    )
    t_score = time.perf_counter()
    summary, sample_rows = score_rows(
        pack_obj, rows, gens.texts, style, extract, token_counts=gens.n_tokens, errors=gens.errors, seed=seed
    )
    scoring_seconds = time.perf_counter() - t_score
    info = generator.info
    gen_config = generator.config(
        n=samples,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        seed=seed,
        chat_template_kwargs=template_kwargs,
    )
    gen_config.update({k: info.get(k) for k in ("quantize", "device", "dtype")})
    adapter_used = info.get("adapter") or (str(adapter) if adapter else None)
    identity = {
        "model": info.get("model") or model or type(generator.model).__name__,
        "model_path": info.get("model_path"),
        "adapter": adapter_used,
        "adapter_sha256": adapter_sha256(adapter_used),
        "data": str(data) if data is not None else None,
        "data_sha256": file_sha256(data) if data is not None else None,
        "split": split,
        "limit": limit,
        "seed": seed,
        "language": language,
    }
    timing = {
        "seconds": round(time.perf_counter() - t_start, 3),
        "load_seconds": info.get("load_seconds"),
        "generation_seconds": round(gens.seconds, 3),
        "scoring_seconds": round(scoring_seconds, 3),
        "n_generated_tokens": gens.total_tokens,
        "tokens_per_second": round(gens.tokens_per_second, 2) if gens.tokens_per_second else None,
    }
    warnings = _warnings(samples, temperature, gens.errors) + pack_obj.metric_notes()
    report = finalize_report(
        summary,
        kind="evaluation",
        identity=identity,
        generation=gen_config,
        timing=timing,
        samples_file=SAMPLES_NAME if out is not None else None,
        warnings=warnings,
    )
    if out is not None:
        write_samples(out / SAMPLES_NAME, sample_rows)
        write_report(out / REPORT_NAME, report)
        if partial is not None:
            partial.unlink(missing_ok=True)
    return (report, sample_rows) if return_samples else report


def _warnings(samples: int, temperature: float, errors: Mapping[int, str]) -> list[str]:
    out: list[str] = []
    if errors:
        out.append(f"{len(errors)} prompt(s) failed to generate and count as wrong; see errors")
    if samples > 1:
        out.append(
            f"{samples} samples per item: per-item correctness in items[] is the first sample's verdict"
        )
    return out


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a ``report.json`` (a folder holding one is accepted too)."""
    import json

    from evaluator.core.schemas import validate_or_raise
    from evaluator.evaluation.report import report_schema

    target = Path(path)
    if target.is_dir():
        target = target / REPORT_NAME
    if not target.is_file():
        raise FileNotFoundError(f"no evaluation report at {target}")
    try:
        doc = json.loads(target.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{target} is not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    validate_or_raise(doc, report_schema(), f"evaluation report {target}")
    return doc
