"""A training run's ``metrics.jsonl`` as series over steps, for charts, without parsing every line.

A 10,000-step run has 10,000 training rows; a chart shows at most ``MAX_POINTS`` of them. So the lines are
told apart by their bytes (held-out rows carry ``"eval/`` keys), every held-out row is parsed (they are
few and the best held-out accuracy needs them all), and of the training rows every n-th one (and the last)
is parsed; a chart says when it shows every n-th step. Parsed rows are kept by line, so a live run that
appends costs only the rows new to the selection.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.app.run_folders.jsonl import IndexCache, JsonlIndex, Row, parse_row
from evaluator.evaluation.stats import wilson_ci

MAX_POINTS = 1000  # points per series: more than a chart's width shows
SKIP_KEYS = {"step", "epoch", "time"}
EVAL_MARK = b'"eval/'
CACHE_ROWS = 50_000


@dataclass
class Series:
    steps: list[float] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)


@dataclass
class MetricsTable:
    """The numeric series of the selected rows, the row count, and the lines that could not be read."""

    signature: tuple[int, int, int] = (0, 0, 0)
    rows: int = 0
    stride: int = 1
    series: dict[str, Series] = field(default_factory=dict)
    bad_lines: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    last: dict[str, Any] = field(default_factory=dict)

    def add(self, row: dict[str, Any], line: int) -> None:
        step = row.get("step")
        if type(step) not in (int, float):
            self.bad_lines.append(f"line {line} has no numeric step; skipped")
            return
        series = self.series
        for key, value in row.items():
            kind = type(value)
            if kind is float:
                num: float | None = value if math.isfinite(value) else None
            elif kind is int or value is None:
                num = value
            else:
                continue
            if key in SKIP_KEYS:
                continue
            s = series.get(key)
            if s is None:
                s = series[key] = Series()
            s.steps.append(step)
            s.values.append(num)

    def best(self, key: str) -> tuple[float, float] | None:
        """(value, step) of the highest value of ``key``, or None."""
        s = self.series.get(key)
        pairs = [(v, st) for st, v in zip(s.steps, s.values, strict=True) if v is not None] if s else []
        return max(pairs, key=lambda p: p[0]) if pairs else None


class MetricsCache:
    """Tables per file state; parsed rows per file, kept across states while the file only grows."""

    def __init__(self, indexes: IndexCache) -> None:
        self.indexes = indexes
        self._tables: dict[Path, MetricsTable] = {}
        self._rows: dict[Path, tuple[int, dict[int, Row]]] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> MetricsTable | None:
        idx = self.indexes.get(path)
        if idx is None:
            return None
        with self._lock:
            table = self._tables.get(path)
            if table is not None and table.signature == idx.signature:
                return table
            inode, parsed = self._rows.get(path, (idx.signature[0], {}))
            if inode != idx.signature[0] or len(parsed) > CACHE_ROWS or (parsed and max(parsed) >= len(idx)):
                parsed = {}
            table = _build(idx, parsed, path.name)
            self._rows[path] = (idx.signature[0], parsed)
            self._tables[path] = table
            return table


def _select(idx: JsonlIndex) -> tuple[list[int], int, bytes]:
    """Positions to parse (every held-out row, every n-th training row and the last), n, the lines' bytes."""
    n = len(idx)
    if n == 0:
        return [], 1, b""
    with open(idx.path, "rb") as fh:
        fh.seek(idx.starts[0])
        blob = fh.read(idx.ends[n - 1] - idx.starts[0])
    base = idx.starts[0]
    starts, ends = idx.starts, idx.ends
    held = [k for k in range(n) if blob.find(EVAL_MARK, starts[k] - base, ends[k] - base) >= 0]
    held_set = set(held)
    train = [k for k in range(n) if k not in held_set] if held else list(range(n))
    stride = max(1, math.ceil(len(train) / MAX_POINTS))
    chosen = set(train[::stride]) | held_set
    if train:
        chosen.add(train[-1])
    return sorted(chosen), stride, blob


def _build(idx: JsonlIndex, parsed: dict[int, Row], name: str) -> MetricsTable:
    chosen, stride, blob = _select(idx)
    table = MetricsTable(idx.signature, len(idx), stride)
    base = idx.starts[0] if len(idx) else 0
    for k in chosen:
        row = parsed.get(k)
        if row is None:
            row = parsed[k] = parse_row(k, idx.lines[k], blob[idx.starts[k] - base : idx.ends[k] - base])
        if row.error:
            table.bad_lines.append(f"{name}: {row.error}; skipped")
        elif isinstance(row.value, dict):
            table.add(row.value, row.line)
            table.last = row.value
        else:
            table.bad_lines.append(f"{name}: line {row.line} is not a JSON object; skipped")
    table.bad_lines = [b if b.startswith(name) else f"{name}: {b}" for b in table.bad_lines]
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


PROPORTIONS = {"eval/accuracy", "eval/format_rate"}


def _interval_at_ends(trace: dict[str, Any], counts: Series | None, length: int) -> None:
    """A proportion logged at 0 or 1 with a point interval ([0, 0]: a run logged before the evaluation gave
    0/n an interval) gets the Wilson interval over its n items, when the row logged n."""
    if counts is None or len(counts.values) != length:
        return
    ns = thin(counts)[1]
    for i, (v, lo, hi) in enumerate(zip(trace["y"], trace["ci_low"], trace["ci_high"], strict=False)):
        n = ns[i] if i < len(ns) else None
        if v in (0, 1) and lo == hi == v and isinstance(n, int | float) and n >= 1:
            trace["ci_low"][i], trace["ci_high"][i] = wilson_ci(v * int(n), int(n))


def chart_groups(table: MetricsTable) -> list[dict[str, Any]]:
    """The charts a training page draws: rewards per function, held-out figures, completion length, loss."""
    keys = list(table.series)
    groups = [
        ("보상 함수별 보상 (로깅 단계 평균)",
         ["reward"] + [k for k in keys if k.startswith("rewards/") and k.endswith("/mean")], table.stride),
        ("검증 세트 평가", [k for k in keys if k.startswith("eval/") and "_ci_" not in k and k != "eval/n"], 1),
        ("완성 길이 (토큰)",
         [k for k in keys if k.startswith("completions/") and k.endswith("_length") and "terminated" not in k],
         table.stride),
        ("손실", [k for k in ("loss", "eval_loss") if k in table.series], table.stride),
        ("기타", [k for k in ("learning_rate", "grad_norm", "entropy", "kl", "frac_reward_zero_std",
                             "completions/clipped_ratio", "step_time") if k in table.series], table.stride),
    ]
    charts = []
    for title, names, row_stride in groups:
        traces, stride = [], row_stride
        for key in names:
            if key not in table.series:
                continue
            xs, ys, st = thin(table.series[key])
            stride = max(stride, st)
            trace: dict[str, Any] = {"name": key, "x": xs, "y": ys}
            low, high = table.series.get(f"{key}_ci_low"), table.series.get(f"{key}_ci_high")
            if low is not None and high is not None and len(low.values) == len(table.series[key].values):
                trace["ci_low"], trace["ci_high"] = thin(low)[1], thin(high)[1]
                if key in PROPORTIONS:
                    _interval_at_ends(trace, table.series.get("eval/n"), len(table.series[key].values))
            traces.append(trace)
        if traces:
            charts.append({"title": title, "traces": traces, "stride": stride})
    return charts
