"""A training run's ``metrics.jsonl`` as series over steps, parsed once and extended as the run appends.

Each logged key becomes a series of (step, value) points; rows that a key is absent from (held-out rows
carry only ``eval/*``) add nothing to it. Charts get at most ``MAX_POINTS`` points per series (every n-th,
always keeping the last), and say so, so a 10,000-step run's page stays small.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.app.run_folders.jsonl import IndexCache, JsonlIndex

MAX_POINTS = 2000
SKIP_KEYS = {"step", "epoch", "time"}


@dataclass
class Series:
    steps: list[float] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)


@dataclass
class MetricsTable:
    """Every numeric key's series, plus the rows that could not be read."""

    signature: tuple[int, int, int] = (0, 0, 0)
    parsed: int = 0
    rows: int = 0
    series: dict[str, Series] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    last: dict[str, Any] = field(default_factory=dict)

    def add(self, row: dict[str, Any]) -> None:
        step = row.get("step")
        if not isinstance(step, (int, float)) or isinstance(step, bool):
            self.bad_lines.append(f"a metrics row has no numeric step (keys: {', '.join(list(row)[:6])})")
            return
        self.rows += 1
        self.last = row
        for key, value in row.items():
            if key in SKIP_KEYS:
                continue
            if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
                num = None if value is None or not math.isfinite(value) else float(value)
                s = self.series.get(key)
                if s is None:
                    s = self.series[key] = Series()
                s.steps.append(step)
                s.values.append(num)

    def best(self, key: str) -> tuple[float, float] | None:
        """(value, step) of the highest value of ``key``, or None."""
        s = self.series.get(key)
        pairs = [(v, st) for st, v in zip(s.steps, s.values, strict=True) if v is not None] if s else []
        return max(pairs, key=lambda p: p[0]) if pairs else None


class MetricsCache:
    """Parsed metrics per file, extended with only the new lines when a live run appends."""

    def __init__(self, indexes: IndexCache) -> None:
        self.indexes = indexes
        self._tables: dict[Path, MetricsTable] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> MetricsTable | None:
        idx = self.indexes.get(path)
        if idx is None:
            return None
        with self._lock:
            table = self._tables.get(path)
            if table is None or len(idx) < table.parsed or table.signature[0] != idx.signature[0]:
                table = MetricsTable()
            if table.signature != idx.signature:
                table = _extend(table, idx, path.name)
                self._tables[path] = table
            return table


def _extend(old: MetricsTable, idx: JsonlIndex, name: str) -> MetricsTable:
    table = MetricsTable(
        idx.signature, old.parsed, old.rows,
        {k: Series(list(s.steps), list(s.values)) for k, s in old.series.items()},
        list(old.bad_lines), [], dict(old.last),
    )
    for row in idx.read(table.parsed, len(idx) - table.parsed):
        if row.error:
            table.bad_lines.append(f"{name}: {row.error}; skipped")
        elif isinstance(row.value, dict):
            table.add(row.value)
        else:
            table.bad_lines.append(f"{name}: line {row.line} is not a JSON object; skipped")
    table.parsed = len(idx)
    table.partial = idx.problems(name)
    return table


def thin(series: Series, limit: int = MAX_POINTS) -> tuple[list[float], list[float | None], int]:
    """At most ``limit`` points (every n-th, and the last); returns (steps, values, stride)."""
    n = len(series.steps)
    if n <= limit:
        return series.steps, series.values, 1
    stride = math.ceil(n / limit)
    keep = list(range(0, n, stride))
    if keep[-1] != n - 1:
        keep.append(n - 1)
    return [series.steps[i] for i in keep], [series.values[i] for i in keep], stride


def chart_groups(table: MetricsTable) -> list[dict[str, Any]]:
    """The charts a training page draws: rewards per function, held-out figures, completion length, loss."""
    keys = list(table.series)
    groups = [
        ("Reward per function (mean per logging step)",
         ["reward"] + [k for k in keys if k.startswith("rewards/") and k.endswith("/mean")]),
        ("Held-out evaluation", [k for k in keys if k.startswith("eval/") and "_ci_" not in k and k != "eval/n"]),
        ("Completion length (tokens)",
         [k for k in keys if k.startswith("completions/") and k.endswith("_length") and "terminated" not in k]),
        ("Loss", [k for k in ("loss", "eval_loss") if k in table.series]),
        ("Other", [k for k in ("learning_rate", "grad_norm", "entropy", "kl", "frac_reward_zero_std",
                               "completions/clipped_ratio", "step_time") if k in table.series]),
    ]
    charts = []
    for title, names in groups:
        traces, stride = [], 1
        for key in names:
            if key not in table.series:
                continue
            xs, ys, st = thin(table.series[key])
            stride = max(stride, st)
            trace: dict[str, Any] = {"name": key, "x": xs, "y": ys}
            low, high = table.series.get(f"{key}_ci_low"), table.series.get(f"{key}_ci_high")
            if low is not None and high is not None and len(low.values) == len(series_of(table, key)):
                trace["ci_low"], trace["ci_high"] = thin(low)[1], thin(high)[1]
            traces.append(trace)
        if traces:
            charts.append({"title": title, "traces": traces, "stride": stride})
    return charts


def series_of(table: MetricsTable, key: str) -> list[float | None]:
    return table.series[key].values
