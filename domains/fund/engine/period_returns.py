"""Trailing period returns (1개월 … 5년) of every fund, beside its 유형 average, rank and quartile.

Measured on the engine's own total-return levels and calendar (:class:`TotalReturnLevels`, what the metrics
were computed on) with the metrics' own window rule (:func:`~.metrics.window_start_row`): a window of N
months starts at the last NAV dated on or before ``as_of − N months``, so the 1년/3년/5년 figures are the
same growth the engine annualises into ``annualized_return``. A fund whose history does not reach a window's
start has no figure for it (never a shorter window passed off as the longer one).

Peers: every fund of the same 유형 with a figure for the window (share classes each count once, as on
펀드 vendors' pages); rank 1 is the highest return, ties share the better rank; quartile 1 is the top
quarter (``ceil(4 · rank / M)``), given only when the 유형 has at least four funds with a figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.metrics import row_on_or_before, window_start_row

WINDOW_MONTHS: dict[str, int] = {"1m": 1, "3m": 3, "6m": 6, "1y": 12, "3y": 36, "5y": 60}
"""The table's windows, shortest first; the page labels them 1개월 … 5년."""
MIN_QUARTILE_PEERS = 4


def trailing_returns(levels: np.ndarray, dates: pd.DatetimeIndex, as_of: Any) -> dict[str, np.ndarray]:
    """``{window: cumulative return per fund column}`` (NaN where a fund has no level at either end)."""
    funds = levels.shape[1]
    end = row_on_or_before(dates, pd.Timestamp(as_of))
    out: dict[str, np.ndarray] = {}
    for window, months in WINDOW_MONTHS.items():
        start = window_start_row(dates, pd.Timestamp(as_of), months / 12) if end is not None else None
        if end is None or start is None or start >= end:
            out[window] = np.full(funds, np.nan)
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            out[window] = levels[end] / levels[start] - 1.0
    return out


def peer_table(returns: dict[str, np.ndarray], groups: Sequence[Any]) -> list[dict[str, dict[str, Any]]]:
    """Per fund: ``{window: {fund, type_average, rank, peers, quartile}}`` for the windows it has a figure for."""
    groups = np.asarray([g if g is not None else "" for g in groups], dtype=object)
    out: list[dict[str, dict[str, Any]]] = [{} for _ in range(len(groups))]
    for window, values in returns.items():
        for group in pd.unique(groups):
            members = np.flatnonzero((groups == group) & np.isfinite(values))
            if members.size == 0:
                continue
            vals = values[members]
            ranks = pd.Series(-vals).rank(method="min").to_numpy(dtype=int)
            mean = float(vals.mean())
            m = int(members.size)
            for i, r, v in zip(members.tolist(), ranks.tolist(), vals.tolist(), strict=True):
                out[i][window] = {"fund": float(v), "type_average": mean, "rank": int(r), "peers": m,
                                  "quartile": min(4, math.ceil(4 * r / m)) if m >= MIN_QUARTILE_PEERS else None}
    return out


def period_returns(evaluation: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """Fund code → its period-returns table, for an :class:`Evaluation` that carries levels (else empty)."""
    tr = getattr(evaluation, "levels", None)
    if tr is None:
        return {}
    type_of = {f.fund_code: f.type for f in evaluation.funds}
    status = {f.fund_code: f.status for f in evaluation.funds}
    keep = [i for i, c in enumerate(tr.codes) if status.get(c) not in (None, "error")]
    cols = np.asarray(keep, dtype=int)
    every = trailing_returns(tr.levels, tr.dates, evaluation.as_of)  # reads two rows a window: no matrix copy
    returns = {w: values[cols] for w, values in every.items()}
    table = peer_table(returns, [type_of[tr.codes[i]] for i in keep])
    return {tr.codes[i]: row for i, row in zip(keep, table, strict=True) if row}


def benchmark_names(evaluation: Any) -> dict[str, str]:
    """Fund code → the name of the benchmark its metrics were measured against (funds with one)."""
    tr = getattr(evaluation, "levels", None)
    if tr is None or tr.bench_of_fund is None or tr.bench_levels is None:
        return {}
    out: dict[str, str] = {}
    for code, col in zip(tr.codes, tr.bench_of_fund.tolist(), strict=True):
        if col >= 0 and col < len(tr.bench_names) and tr.bench_names[col]:
            out[code] = str(tr.bench_names[col])
    return out
