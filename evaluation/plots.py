"""``plot_dir``: look at a folder, work out what it holds, and draw every picture it can.

A folder may be a training run (``metrics.jsonl``), an evaluation pair (``before/report.json`` and
``after/report.json``, maybe ``compare.json``) or a single ``report.json``, whatever a pack's own plots
read (``DomainPack.plots``), or a folder of such folders one level down (the demo's layout); its
sub-folders' PNGs get the sub-folder name as a prefix. Every target is checked for an existing file
before anything is drawn, and one source that fails to draw never stops the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from evaluator.core.outputs import safe_filename
from evaluator.core.plotting import (
    NothingToPlotError,
    Plan,
    Warn,
    Warner,
    as_warner,
    check_targets,
)
from evaluator.domains.base import PackPlot
from evaluator.domains.registry import get_pack, pack_names
from evaluator.evaluation.plots_eval import (
    COMPARE_FILE,
    PAIR_PNG,
    REPORT_FILE,
    plan_eval_pair,
    plan_eval_report,
    plot_eval_pair,
)
from evaluator.evaluation.plots_training import METRICS_FILE, plan_training, plot_training

__all__ = [
    "NothingToPlotError",
    "Warner",
    "detect",
    "plot_dir",
    "plot_eval_pair",
    "plot_training",
]

DEFAULT_OUT = "plots"
_SKIP_DIRS = re.compile(r"^(\.|checkpoint-|__)|^(final|best_adapter|plots)$")
EXPECTED = (
    "a training run (metrics.jsonl), an evaluation (report.json, or before/report.json and "
    "after/report.json)"
)


def pack_plots() -> list[PackPlot]:
    """Every registered pack's own plots."""
    return [pp for name in pack_names() for pp in get_pack(name).plots()]


def expected() -> str:
    extra = [pp.description for pp in pack_plots()]
    return EXPECTED + (", or " + ", or ".join(extra) if extra else "")


def _attempt(make: Callable[[], Plan], plans: list[Plan], reasons: list[str], warn: Warn) -> None:
    try:
        plans.append(make())
    except NothingToPlotError as exc:
        reasons.append(str(exc))
    except (ValueError, OSError) as exc:
        warn(str(exc))
        reasons.append(str(exc))


def _sources(
    folder: Path, out: Path, prefix: str, warn: Warn, plans: list[Plan], reasons: list[str]
) -> set[Path]:
    """Plans for what ``folder`` itself holds; returns the sub-folders it used (not to be scanned again)."""
    used: set[Path] = set()
    if (folder / METRICS_FILE).is_file():
        _attempt(lambda: plan_training(folder, out, prefix=prefix, warn=warn), plans, reasons, warn)
    before, after = folder / "before" / REPORT_FILE, folder / "after" / REPORT_FILE
    if before.is_file() and after.is_file():
        used |= {before.parent, after.parent}
        _attempt(
            lambda: plan_eval_pair(
                before, after, out / f"{prefix}{PAIR_PNG}", compare=folder / COMPARE_FILE, warn=warn
            ),
            plans,
            reasons,
            warn,
        )
    elif (folder / REPORT_FILE).is_file():
        _attempt(
            lambda: plan_eval_report(folder / REPORT_FILE, out / f"{prefix}{PAIR_PNG}", warn=warn),
            plans,
            reasons,
            warn,
        )
    for pp in pack_plots():
        if pp.detect(folder):
            _attempt(lambda pp=pp: pp.plan(folder, out, prefix=prefix, warn=warn), plans, reasons, warn)
    return used


def detect(path: Path, out: Path, warn: Warn | None = None) -> tuple[list[Plan], list[str]]:
    """Plans for ``path`` and its direct sub-folders, plus the reasons sources were passed over."""
    warner = as_warner(warn)
    path, out = Path(path), Path(out)
    plans: list[Plan] = []
    reasons: list[str] = []
    if path.is_file():
        if path.name.endswith(".jsonl"):
            _attempt(lambda: plan_training(path, out, warn=warner), plans, reasons, warner)
        else:
            _attempt(lambda: plan_eval_report(path, out / PAIR_PNG, warn=warner), plans, reasons, warner)
        return plans, reasons
    used = _sources(path, out, "", warner, plans, reasons)
    for sub in sorted(p for p in path.iterdir() if p.is_dir()):
        if sub in used or _SKIP_DIRS.search(sub.name) or sub.resolve() == out.resolve():
            continue
        _sources(sub, out, f"{safe_filename(sub.name)}_", warner, plans, reasons)
    return plans, reasons


def plot_dir(
    path: Path, out: Path | None = None, *, force: bool = False, warn: Warn | None = None
) -> list[Path]:
    """Write every PNG ``path`` supports into ``out`` (default ``path/plots``); returns the files written.

    Raises NothingToPlotError when nothing plottable is found, OutputExistsError when a PNG exists and
    ``force`` is not set (checked before anything is drawn).
    """
    warner = as_warner(warn)
    path = Path(path)
    if not path.exists():
        raise NothingToPlotError(f"{path} does not exist")
    out = Path(out) if out is not None else (path.parent if path.is_file() else path) / DEFAULT_OUT
    plans, reasons = detect(path, out, warner)
    if not plans:
        detail = f" ({'; '.join(reasons)})" if reasons else ""
        raise NothingToPlotError(f"nothing to plot in {path}: expected {expected()}{detail}")
    check_targets([t for plan in plans for t in plan.targets], force)
    written: list[Path] = []
    for plan in plans:
        try:
            written.extend(plan.draw())
        except Exception as exc:  # one source that cannot be drawn must not cost the others their plots
            warner(f"plots for {plan.source} could not be drawn: {exc!r}")
    if not written:
        raise NothingToPlotError(f"no plot could be drawn from {path}; see the warnings above")
    return written
