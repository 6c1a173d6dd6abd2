"""The run viewer as a page set of the web app: training runs, evaluations, comparisons and experiments.

``evaluator serve --runs DIR`` (repeatable) puts the folders in ``EVALUATOR_RUNS`` (``os.pathsep``-joined) so
every worker builds the same page set; ``runs_page_set(folders)`` builds it directly (tests).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from evaluator.app.run_folders.viewer import RunViewer
from evaluator.app.web.extensions import NavLink, PageSet
from evaluator.app.web.run_pages.router import make_router

ENV_RUNS = "EVALUATOR_RUNS"


def runs_page_set(folders: list[str | os.PathLike[str]]) -> PageSet:
    viewer = RunViewer(folders)
    viewer.catalog.scan()
    templates = Path(str(resources.files("evaluator.app.web.run_pages") / "templates"))
    return PageSet(make_router(viewer), (NavLink("/runs", "실험 기록", admin_only=True),), templates)


def runs_page_set_from_env() -> PageSet | None:
    raw = os.environ.get(ENV_RUNS, "")
    folders = [f for f in raw.split(os.pathsep) if f]
    return runs_page_set(folders) if folders else None
