"""Fund-batch pictures: grade distribution per peer group (유형) and a risk/return scatter.

Reads the per-fund ``<code>.json`` reports of an ``evaluator fund evaluate`` batch (falling back to the
fund list in ``summary.json`` or ``summary.csv``). Funds that were not graded (status other than ``ok``)
appear as a grey part of their peer group's bar and are left out of the scatter. The scatter uses one
period for every fund (3y when funds have it, else the longest period any fund has), so the axes compare
like with like.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.core.plotting import (
    NothingToPlotError,
    Plan,
    Warn,
    as_warner,
    check_targets,
    cjk_font,
    new_figure,
    note,
    num,
    save_png,
    style,
)
from evaluator.core.plotting import label as _label
from evaluator.methodology.rubric_scale import (
    DEFAULT_SCALE,
    ERROR_COLOR,
    NOT_RATED_COLOR,
    GradeScale,
    grade_scale,
)

# Peer groups (유형) with an agreed English name, used when no Hangul font is installed.
ROMANISED = {
    "국내주식형": "Domestic equity",
    "해외주식형": "Global equity",
    "채권형": "Bond",
    "국내채권형": "Domestic bond",
    "해외채권형": "Global bond",
    "혼합형": "Mixed",
    "주식혼합형": "Equity mixed",
    "채권혼합형": "Bond mixed",
    "재간접형": "Fund of funds",
    "부동산형": "Real estate",
    "파생형": "Derivatives",
    "특별자산형": "Special assets",
    "머니마켓형": "Money market",
}
TYPE_ORDER = tuple(ROMANISED)


def label(text: Any) -> str:
    """A peer-group name as the plot can show it: as is with a Hangul font, else its English name or romanised."""
    return _label(text, ROMANISED)


def sort_types(names: Iterable[str]) -> list[str]:
    """Peer groups in the methodology's usual order, unknown ones after them alphabetically."""
    known = {n: i for i, n in enumerate(TYPE_ORDER)}
    return sorted(set(names), key=lambda n: (known.get(n, len(known)), n))


GRADES_PNG = "fund_grades.png"
SCATTER_PNG = "fund_risk_return.png"
SUMMARY_FILES = ("summary.json", "summary.csv")
PERIOD_PREFERENCE = ("3y", "10y", "5y", "1y")
NO_TYPE = "(none)"
STATUS_COLORS = {"not_rated": NOT_RATED_COLOR, "error": ERROR_COLOR}
GRADE_COLORS = DEFAULT_SCALE.colors()
"""Best (dark blue) to worst (dark brown) on the default scale; other scales take the same ramp by rank from their best."""


def grade_colors(scale: GradeScale) -> dict[int, str]:
    """Each grade's colour by its rank from the scale's best grade, so 5★ is the best colour when five stars is best."""
    return scale.colors()


def batch_scale(batch_dir: Path) -> GradeScale:
    """The grade scale the batch's ``summary.json`` names (absent: five grades, 1 best)."""
    try:
        doc = json.loads((Path(batch_dir) / "summary.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return grade_scale(None)
    return grade_scale(doc if isinstance(doc, Mapping) else None)
TYPE_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
)


@dataclass
class Fund:
    """The few fields the plots need from one fund's report."""

    code: str
    type: str
    status: str
    grade: int | None
    metrics: dict[str, Any] = field(default_factory=dict)


def _fund(doc: Mapping[str, Any]) -> Fund:
    ftype = doc.get("type", doc.get("유형", doc.get("peer_group")))
    grade_value = num(doc.get("grade", doc.get("등급")))
    grade = int(grade_value) if grade_value in {float(g) for g in range(1, 11)} else None  # scales of 3–10
    status = str(doc.get("status") or ("ok" if grade else "unknown")).strip().lower()
    if status == "ok" and doc.get("provisional") is True:
        status = "provisional"  # a 가등급 ranks young funds on another window: its own segment
    metrics = doc.get("metrics") if isinstance(doc.get("metrics"), Mapping) else {}
    ftype = NO_TYPE if ftype is None or not str(ftype).strip() else str(ftype).strip()
    return Fund(str(doc.get("fund_code", doc.get("code", "?"))), ftype, status, grade, dict(metrics))


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def load_funds(batch_dir: Path, warn: Warn | None = None) -> list[Fund]:
    """Funds from per-fund reports, else from the summary files; unreadable files are skipped with a warning."""
    warner = as_warner(warn)
    funds: list[Fund] = []
    bad: list[str] = []
    for path in sorted(Path(batch_dir).glob("*.json")):
        if path.name in SUMMARY_FILES or path.name.endswith(".schema.json"):
            continue
        try:
            doc = _json(path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            bad.append(path.name)
            continue
        if isinstance(doc, Mapping) and "fund_code" in doc:
            funds.append(_fund(doc))
    if bad:
        warner(
            f"{batch_dir}: {len(bad)} fund report(s) could not be read and were left out (first: {bad[0]})"
        )
    return funds or _summary_funds(Path(batch_dir), warner)


def _summary_funds(batch_dir: Path, warn: Warn) -> list[Fund]:
    path = batch_dir / "summary.json"
    if path.is_file():
        try:
            doc = _json(path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            warn(f"{path} is not valid JSON and was skipped")
            doc = None
        rows = doc if isinstance(doc, list) else doc.get("funds") if isinstance(doc, Mapping) else None
        if isinstance(rows, list):
            return [_fund(r) for r in rows if isinstance(r, Mapping)]
    path = batch_dir / "summary.csv"
    if not path.is_file():
        return []
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error):
        warn(f"{path} could not be read and was skipped")
        return []
    return [f for row in rows for f in _csv_funds(row)]


def _csv_funds(row: Mapping[str, Any]) -> list[Fund]:
    """A per-fund CSV row, or a distribution row (type, grade_1 … grade_5, not_rated, error) as funds."""
    if "grade_1" not in row:
        return [_fund(row)]
    ftype = str(row.get("type") or NO_TYPE)
    if ftype == "(all)":
        return []
    out: list[Fund] = []
    for column, status, grade in [
        *((f"grade_{g}", "ok", g) for g in range(1, 11) if f"grade_{g}" in row),
        ("not_rated", "not_rated", None),
        ("error", "error", None),
    ]:
        count = num(row.get(column))
        out.extend(Fund("?", ftype, status, grade) for _ in range(0 if math.isnan(count) else int(count)))
    return out


def choose_period(funds: Iterable[Fund]) -> str | None:
    """3y when any graded fund has return and volatility for it, else the longest period one has."""
    have = Counter(p for f in funds for p, m in f.metrics.items() if _point(m) is not None)
    return next((p for p in PERIOD_PREFERENCE if have[p]), None)


def _point(metrics: Any) -> tuple[float, float] | None:
    if not isinstance(metrics, Mapping):
        return None
    x, y = num(metrics.get("annualized_volatility")), num(metrics.get("annualized_return"))
    return None if math.isnan(x) or math.isnan(y) else (x, y)


def _draw_grades(funds: list[Fund], target: Path, title: str, scale: GradeScale | None = None) -> Path:
    types = sort_types(f.type for f in funds)
    other = sorted({f.status for f in funds if not (f.status == "ok" and f.grade)})
    with style():
        from matplotlib.ticker import MaxNLocator

        fig = new_figure(max(8.0, 1.5 * len(types) + 3), 5.8)
        ax = fig.subplots()
        bottom = [0] * len(types)
        scale = scale or grade_scale(None)
        colors = grade_colors(scale)
        present = {f.grade for f in funds if f.status == "ok" and f.grade}
        grades = [g for g in scale.best_first() if g in present] or list(scale.best_first())
        segments = [
            (
                scale.label(g) if cjk_font() else f"grade {g}",
                colors.get(g, "#636363"),
                lambda f, g=g: f.status == "ok" and f.grade == g,
            )
            for g in grades
        ]
        segments += [
            (
                ("가등급" if cjk_font() else "provisional grade") if s == "provisional" else f"not graded: {s}",
                STATUS_COLORS.get(s, "#969696"),
                lambda f, s=s: f.status == s and not (f.status == "ok" and f.grade),
            )
            for s in other
        ]
        for name, color, pick in segments:
            counts = [sum(1 for f in funds if f.type == t and pick(f)) for t in types]
            if not any(counts):
                continue
            bars = ax.bar(
                range(len(types)), counts, 0.65, bottom=bottom, color=color, label=name, edgecolor="white"
            )
            ax.bar_label(bars, labels=[str(c) if c else "" for c in counts], label_type="center", fontsize=8)
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        for i, total in enumerate(bottom):
            ax.text(i, total, f"n={total}", ha="center", va="bottom", fontsize=9)
        ax.set_xticks(range(len(types)), [label(t) for t in types], rotation=20 if len(types) > 4 else 0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, max(bottom) * 1.12 + 0.5)
        ax.set_ylabel("funds")
        ax.grid(axis="x", visible=False)
        ax.legend(title="grade (1 = best)", fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle(f"Grade distribution per peer group — {title}", fontsize=12)
        return save_png(fig, target)


def _draw_scatter(funds: list[Fund], target: Path, title: str, warn: Warn) -> Path:
    graded = [f for f in funds if f.status == "ok"]
    period = choose_period(graded)
    points = [(f, _point(f.metrics.get(period))) for f in graded] if period else []
    shown = [(f, p) for f, p in points if p is not None]
    left_out = len(funds) - len(shown)
    with style():
        from matplotlib.ticker import PercentFormatter

        fig = new_figure(9.5, 6.4)
        ax = fig.subplots()
        if not shown:
            note(ax, "no graded fund has annualized return and volatility figures")
            warn(f"{title}: no graded fund has return/volatility figures; the scatter shows a note")
        types = sort_types(f.type for f, _ in shown)
        for i, t in enumerate(types):
            mine = [(f, p) for f, p in shown if f.type == t]
            color = TYPE_COLORS[i % len(TYPE_COLORS)]
            ax.scatter(
                [p[0] for _, p in mine],
                [p[1] for _, p in mine],
                s=90,
                color=color,
                alpha=0.8,
                edgecolor="white",
                label=f"{label(t)} ({len(mine)})",
            )
            if len(shown) <= 80:
                for f, p in mine:
                    if f.grade:
                        ax.annotate(str(f.grade), p, ha="center", va="center", fontsize=7, color="black")
        if shown:
            ax.axhline(0, color="#555555", linewidth=0.8)
            ax.xaxis.set_major_formatter(PercentFormatter(xmax=1))
            ax.yaxis.set_major_formatter(PercentFormatter(xmax=1))
            ax.set_xlabel(f"annualized volatility ({period})")
            ax.set_ylabel(f"annualized return ({period})")
            ax.legend(title="peer group (funds)", fontsize=8, loc="best")
            if left_out:
                ax.text(
                    0.01,
                    0.01,
                    f"{left_out} fund(s) not graded or without {period} figures left out",
                    transform=ax.transAxes,
                    fontsize=8,
                    color="#8a4b00",
                )
        fig.suptitle(f"Risk / return of graded funds (numbers: grade) — {title}", fontsize=12)
        return save_png(fig, target)


def plan_fund_batch(batch_dir: Path, out_dir: Path, *, prefix: str = "", warn: Warn | None = None) -> Plan:
    """Read a fund batch folder and plan its two PNGs; raises NothingToPlotError if it holds no funds."""
    warner = as_warner(warn)
    funds = load_funds(batch_dir, warner)
    if not funds:
        raise NothingToPlotError(
            f"{batch_dir} holds no fund reports (no <code>.json with fund_code, no summary)"
        )
    title = Path(batch_dir).resolve().name
    grades_png, scatter_png = (
        Path(out_dir) / f"{prefix}{GRADES_PNG}",
        Path(out_dir) / f"{prefix}{SCATTER_PNG}",
    )
    if not any(f.status == "ok" and f.grade for f in funds):
        warner(f"{batch_dir}: no fund was graded; the grade chart shows statuses only")

    def draw() -> list[Path]:
        scale = batch_scale(Path(batch_dir))
        return [_draw_grades(funds, grades_png, title, scale), _draw_scatter(funds, scatter_png, title, warner)]

    return Plan(Path(batch_dir), [grades_png, scatter_png], draw)


def plot_fund_batch(
    batch_dir: Path, out_dir: Path, *, force: bool = False, warn: Warn | None = None
) -> list[Path]:
    """Write the grade-distribution and risk/return PNGs of a fund batch into ``out_dir``."""
    plan = plan_fund_batch(batch_dir, out_dir, warn=warn)
    check_targets(plan.targets, force)
    return plan.draw()


def _head(path: Path, size: int = 4000) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(size)
    except OSError:
        return ""


def looks_like_batch(folder: Path) -> bool:
    """A folder ``evaluator fund evaluate`` wrote: a summary file, or per-fund reports with ``fund_code``."""
    folder = Path(folder)
    if any((folder / name).is_file() for name in SUMMARY_FILES):
        return True
    return any('"fund_code"' in _head(p) for p in sorted(folder.glob("*.json"))[:50])
