"""The run viewer's pages: ``/runs`` and one page per run, for admin keys only.

URLs name a run by its folder: ``/runs/view/<root>/<path>`` and ``/runs/samples/<root>/<path>``. A client
key gets the same 404 as an unknown page (``require_admin``), and the nav link is admin-only. A name that
does not resolve inside a scanned root is a 404 too; a run folder's problems are shown on its page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException

from evaluator.app.api.read_routes import TEXT_PATTERN
from evaluator.app.run_folders import studies
from evaluator.app.run_folders.classify import KINDS, Entry
from evaluator.app.run_folders.samples import PAGE_SIZE, Filter
from evaluator.app.run_folders.viewer import RunViewer
from evaluator.app.web.auth import Admin, Viewer, check_csrf, require_admin
from evaluator.app.web.render import render
from evaluator.app.web.run_pages.charts import arms_chart, training_charts

Text = Annotated[str, Query(max_length=200, pattern=TEXT_PATTERN)]
Name = Annotated[str, Query(max_length=100, pattern=r"^[A-Za-z0-9_./:-]*$")]
AUTO_RESCAN_S = 30.0
KIND_LABELS = {"training": "RL 학습", "sft": "SFT 학습", "evaluation": "평가", "comparison": "비교",
               "experiment": "실험"}
HEALTH_LABELS = {"learning": "학습함", "no_signal": "신호 없음 (학습 안 됨)", "collapsed": "붕괴 (학습 안 됨)",
                 "clipped": "길이 한도에 잘림 (학습 안 됨)"}
"""Korean names of the run-health verdicts (training/health.py)."""


def health_label(verdict: str) -> str:
    return HEALTH_LABELS.get(verdict, verdict)


def kind_label(entry: Entry) -> str:
    """The list's kind column: a training run by its algorithm (GRPO, RLOO; runs that predate RLOO are GRPO)."""
    if entry.kind == "training":
        return f"{str(entry.facts.get('algorithm') or 'grpo').upper()} 학습"
    return KIND_LABELS[entry.kind]


def run_url(entry: Entry, view: str = "view", **query: Any) -> str:
    """The lasting address of a run's page: its root label and folder path, nothing else."""
    url = f"/runs/{view}/{quote(entry.label)}/{quote(entry.rel, safe='/')}"
    params = {k: v for k, v in query.items() if v not in (None, "")}
    return f"{url}?{urlencode(params)}" if params else url


@dataclass(frozen=True)
class SamplesQuery:
    """The samples page's query: the filter (text, reward name and range, correct or not), the page and its size."""

    q: Text = ""
    reward: Name = ""
    low: Annotated[float | None, Query(ge=-1e9, le=1e9)] = None
    high: Annotated[float | None, Query(ge=-1e9, le=1e9)] = None
    correct: Annotated[str, Query(pattern=r"^(yes|no)?$")] = ""
    page_no: Annotated[int, Query(alias="page", ge=1, le=10_000_000)] = 1
    size: Annotated[int, Query(ge=1, le=200)] = PAGE_SIZE

    def filter(self) -> Filter:
        return Filter(q=self.q, reward=self.reward, low=self.low, high=self.high, correct=self.correct)


def make_router(viewer: RunViewer) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    def page(request: Request, name: str, ctx: dict[str, Any], status: int = 200) -> Response:
        return render(request, name, {"run_url": run_url, "kind_labels": KIND_LABELS, "kind_label": kind_label,
                                      "health_label": health_label, **ctx}, status=status)

    def entry_or_404(label: str, rel: str) -> Entry:
        entry = viewer.catalog.get(label, rel)
        if entry is None:
            raise HTTPException(404, "no such run")
        return entry

    @router.get("/runs")
    def runs_list(request: Request, _: Admin, kind: Name = "", q: Text = "") -> Response:
        cat = viewer.catalog
        if cat.scanned_at is None or time.time() - cat.scanned_at > AUTO_RESCAN_S:
            cat.scan()
        entries = [e for e in cat.list() if (not kind or e.kind == kind)
                   and (not q or q.casefold() in f"{e.key} {e.domain or ''} {e.model or ''}".casefold())]
        return page(request, "runs_list.html", {
            "entries": entries, "kind": kind, "q": q, "kinds": KINDS, "roots": cat.roots,
            "scan_seconds": cat.scan_seconds, "notes": cat.notes, "total": len(cat.entries)})

    @router.post("/runs/rescan")
    def rescan(_admin: Admin, _csrf: Annotated[Viewer, Depends(check_csrf)]) -> Response:
        viewer.catalog.scan()
        return RedirectResponse("/runs", status_code=303)

    @router.get("/runs/view/{label}/{rel:path}")
    def run_page(request: Request, _: Admin, label: str, rel: str) -> Response:
        entry = entry_or_404(label, rel)
        if entry.kind in ("training", "sft"):
            data = viewer.training(entry)
            return page(request, "run_training.html", {**data, "charts": training_charts(data["charts"])})
        if entry.kind == "evaluation":
            return page(request, "run_evaluation.html", viewer.evaluation(entry))
        if entry.kind == "comparison":
            return page(request, "run_comparison.html", studies.comparison(viewer, entry))
        data = studies.experiment(viewer, entry)
        charts = [{"id": f"arms-{n}", "spec": spec} for n, m in enumerate(data["metric_names"])
                  if (spec := arms_chart(data["arms"], m)) is not None]
        return page(request, "run_experiment.html", {**data, "charts": charts})

    @router.get("/runs/samples/{label}/{rel:path}")
    def samples_page(
        request: Request, _: Admin, label: str, rel: str, asked: Annotated[SamplesQuery, Depends()]
    ) -> Response:
        entry = entry_or_404(label, rel)
        flt = asked.filter()
        query = {"q": asked.q, "reward": asked.reward, "low": asked.low, "high": asked.high, "correct": asked.correct,
                 "size": asked.size if asked.size != PAGE_SIZE else None}
        if entry.kind in ("training", "sft"):
            data = viewer.completions(entry, flt, asked.page_no, asked.size)
            return page(request, "run_samples.html", {**data, "flt": flt, "query": query})
        if entry.kind == "evaluation":
            data = viewer.eval_samples(entry, flt, asked.page_no, asked.size)
            return page(request, "run_eval_samples.html", {**data, "flt": flt, "query": query})
        raise HTTPException(404, "no such run")

    return router


__all__ = ["make_router", "require_admin", "run_url"]
