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

from evaluator.core.generation import GenerationSettings, ModelRef
from evaluator.core.outputs import append_jsonl, replacing_dir
from evaluator.core.schemas import validate_or_raise
from evaluator.domains.base import DomainPack
from evaluator.domains.registry import get_pack
from evaluator.evaluation.backends import Backend, Generations, load_generator
from evaluator.evaluation.inputs import Items, ReportFolder
from evaluator.evaluation.report import (
    PARTIAL_NAME,
    REPORT_NAME,
    SAMPLES_NAME,
    adapter_sha256,
    file_sha256,
    finalize_report,
    folder_problems,
    report_schema,
    write_report,
    write_samples,
)
from evaluator.evaluation.scoring import score_rows
from evaluator.models.chat_format import template_kwargs_for
from evaluator.models.loading import model_source

EXTRACTS = ("strict", "flexible")
WRITES = (REPORT_NAME, SAMPLES_NAME, PARTIAL_NAME)
"""Everything the harness writes into its folder (``--force`` replaces nothing else)."""


def evaluate(
    pack: DomainPack | str,
    model: ModelRef | Backend,
    items: Items | None = None,
    generation: GenerationSettings | None = None,
    *,
    extract: str = "strict",
    out: ReportFolder | None = None,
    on_batch: Callable[[list[int]], None] | None = None,
    return_samples: bool = False,
) -> Any:
    """Evaluate ``model`` (a :class:`ModelRef` to load, or a loaded generation backend) on ``items``; return the report.

    ``generation.seed`` seeds the sampling, the pack's data sample and the bootstrap intervals. With ``out``
    the report and samples are written there. ``on_batch`` hears the row indices of each finished batch
    (progress bars); ``return_samples`` returns ``(report, samples)`` for callers that present the graded
    samples themselves.
    """
    t_start = time.perf_counter()
    items, generation = items or Items(), generation or GenerationSettings()
    pack_obj = get_pack(pack) if isinstance(pack, str) else pack
    pack_obj.check_style(items.style)  # bad input fails before any folder or model is touched
    pack_obj.check_language(items.language)
    items.check()
    generation.check()
    if extract not in EXTRACTS:
        raise ValueError(f"extract must be strict or flexible, not {extract!r}")
    if isinstance(model, ModelRef):
        model.check()
        model_source(model.model)  # a missing model folder or an unreachable hub fails before any data is built
    if out is None:
        return _evaluate(pack_obj, model, items, generation, extract, None, on_batch, return_samples, t_start)
    with replacing_dir(out.path, force=out.force, owned=WRITES) as folder:  # swapped in only when complete
        return _evaluate(pack_obj, model, items, generation, extract, folder, on_batch, return_samples, t_start)


def _evaluate(
    pack_obj: DomainPack,
    model: ModelRef | Backend,
    items: Items,
    generation: GenerationSettings,
    extract: str,
    folder: Path | None,
    on_batch: Callable[[list[int]], None] | None,
    return_samples: bool,
    t_start: float,
) -> Any:
    style, language = pack_obj.check_style(items.style), pack_obj.check_language(items.language)
    rows = _rows(pack_obj, items, style, language, generation.seed)
    generator = _load(model, generation.seed) if isinstance(model, ModelRef) else model
    template_kwargs = template_kwargs_for(generator.tokenizer, style, pack_obj)  # folding: Generator.render
    partial = _PartialWriter(folder, rows, on_batch)
    gens = generator.generate(
        [r["prompt"] for r in rows], generation, chat_template_kwargs=template_kwargs, on_batch=partial
    )
    t_score = time.perf_counter()
    summary, sample_rows = score_rows(
        pack_obj, rows, gens.texts, style, extract, token_counts=gens.n_tokens, errors=gens.errors,
        seed=generation.seed,
    )  # fmt: skip
    scoring_seconds = time.perf_counter() - t_score
    gen_config = generator.config(generation, chat_template_kwargs=template_kwargs)
    gen_config.update({k: generator.info.get(k) for k in ("quantize", "device", "dtype")})
    report = finalize_report(
        summary,
        kind="evaluation",
        identity=_identity(generator, model, items, language, generation.seed),
        generation=gen_config,
        timing=_timing(t_start, generator.info, gens, scoring_seconds),
        samples_file=SAMPLES_NAME if folder is not None else None,
        warnings=_warnings(generation.samples, gens.errors) + pack_obj.metric_notes(),
    )
    if folder is not None:
        write_samples(folder / SAMPLES_NAME, sample_rows)
        write_report(folder / REPORT_NAME, report)
        partial.remove()
    return (report, sample_rows) if return_samples else report


def _rows(pack: DomainPack, items: Items, style: str, language: str, seed: int) -> list[dict[str, Any]]:
    """The items as rows: the given ones, or the pack's ``data``/``split`` (first ``limit``); none is an error."""
    dataset = items.rows
    if dataset is None:
        dataset = pack.dataset(
            items.data, items.split, style=style, language=language, limit=items.limit, seed=seed
        )
    rows = dataset.to_list() if hasattr(dataset, "to_list") else [dict(r) for r in dataset]
    rows = rows[: items.limit] if items.limit is not None else rows
    if not rows:
        raise ValueError(
            f"no items to evaluate (domain {pack.name}, data {items.data or 'default'}, split {items.split})"
        )
    return rows


def _load(model: ModelRef, seed: int) -> Backend:
    return load_generator(
        model.model, adapter=model.adapter, quantize=model.quantize, device=model.device, backend=model.backend,
        seed=seed,
    )  # fmt: skip


class _PartialWriter:
    """Appends each finished batch to ``generations.partial.jsonl`` (when writing a folder) and tells ``on_batch``."""

    def __init__(
        self, folder: Path | None, rows: list[dict[str, Any]], on_batch: Callable[[list[int]], None] | None
    ):
        self.path = folder / PARTIAL_NAME if folder is not None else None
        self.rows = rows
        self.on_batch = on_batch
        self.remove()

    def __call__(self, indices: list[int], texts: list[list[str]]) -> None:
        if self.on_batch is not None:
            self.on_batch(indices)
        if self.path is None:
            return
        for idx, done in zip(indices, texts, strict=True):
            append_jsonl(
                self.path, {"index": idx, "id": str(self.rows[idx].get("id", idx)), "completions": done}
            )

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def _identity(
    generator: Backend, model: ModelRef | Backend, items: Items, language: str, seed: int
) -> dict[str, Any]:
    """What was evaluated: model, adapter (and its digest), data (and its digest), split, limit, seed, language."""
    info = generator.info
    name = model.model if isinstance(model, ModelRef) else None
    adapter = model.adapter if isinstance(model, ModelRef) else None
    adapter_used = info.get("adapter") or (str(adapter) if adapter else None)
    data = items.data
    return {
        "model": info.get("model") or name or type(generator.model).__name__,
        "model_path": info.get("model_path"),
        "adapter": adapter_used,
        "adapter_sha256": adapter_sha256(adapter_used),
        "data": str(data) if data is not None else None,
        "data_sha256": file_sha256(data) if data is not None else None,
        "split": items.split,
        "limit": items.limit,
        "seed": seed,
        "language": language,
    }


def _timing(
    t_start: float, info: Mapping[str, Any], gens: Generations, scoring_seconds: float
) -> dict[str, Any]:
    return {
        "seconds": round(time.perf_counter() - t_start, 3),
        "load_seconds": info.get("load_seconds"),
        "generation_seconds": round(gens.seconds, 3),
        "scoring_seconds": round(scoring_seconds, 3),
        "n_generated_tokens": gens.total_tokens,
        "tokens_per_second": round(gens.tokens_per_second, 2) if gens.tokens_per_second else None,
    }


def _warnings(samples: int, errors: Mapping[int, str]) -> list[str]:
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
    problems = folder_problems(target.parent, doc) if target.name == REPORT_NAME else []
    if problems:
        raise ValueError(f"refusing {target}: " + "; ".join(problems))
    return doc
