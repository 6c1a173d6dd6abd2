"""What the engine returns: one :class:`FundResult` per fund and the batch's :class:`Evaluation`.

Plain Python values only (floats, ``None`` for "not available"), so reports, prompts and checks can use
them without numpy. :func:`package_results` turns the engine's per-fund arrays into these objects.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.checks import FundFlags
from evaluator.domains.fund.types import ERROR, NOT_RATED, OK
from evaluator.methodology.rubric import METRICS, PERIODS


@dataclass(frozen=True)
class FundResult:
    """One fund's evaluation. Numbers are plain floats; ``None`` means "not available"."""

    fund_code: str
    fund_name: str | None
    company: str | None
    type: str | None
    status: str
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    as_of: dt.date
    first_date: str | None
    history_years: float | None
    metrics: dict[str, dict[str, float | None] | None]
    period_weights: dict[str, float]
    criterion_scores: dict[str, float | None]
    qualitative_scores: dict[str, float] | None
    quantitative_score: float | None
    score: float | None
    peer_group_size: int | None
    peer_percentile: float | None
    grade: int | None
    grade_label: str | None
    reason_codes: tuple[str, ...] = ()
    """Machine-readable codes for some reasons (``unadjusted_distribution``: not rated; ``nav_outlier``: error)."""
    return_basis: str = "raw"
    """What the returns were computed from: ``adjusted``, ``distribution``, ``rate`` or ``raw`` 기준가격."""
    portfolio_code: str | None = None
    """The share-class portfolio (대표펀드코드), when META names one."""
    portfolio_classes: int | None = None
    """Classes of that portfolio in the peer group's rating scale (each counts 1/k), when grouped."""
    provisional: bool = False
    """A provisional grade (가등급): a young fund ranked on the rubric's provisional window."""
    set_amount_krw: float | None = None
    peer_bottom_percent: float | None = None
    """The "하위" share of the peer group by the same (class) weights as ``peer_percentile``."""
    """설정원본 in KRW (else 순자산), as the eligibility rule read it; what weighs the fund in its 운용사's score."""


@dataclass(frozen=True)
class Evaluation:
    """A whole batch: the results, the peer context per 유형, and what the run used."""

    as_of: dt.date
    rubric: dict[str, Any]
    funds: list[FundResult]
    peers: dict[str, dict[str, Any]]
    inputs: dict[str, Any] = field(default_factory=dict)
    levels: Any = field(default=None, repr=False, compare=False)
    """The total-return and benchmark levels the engine measured
    (:class:`~evaluator.domains.fund.engine.nav_series.TotalReturnLevels`), or None."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_code", {f.fund_code: f for f in self.funds})

    def fund(self, code: str) -> FundResult:
        """One fund's result by its code (KeyError when the batch has no such fund)."""
        return self._by_code[code]  # type: ignore[attr-defined]

    def peer(self, fund_type: str | None) -> dict[str, Any] | None:
        """Peer context (rated funds' metric statistics, grade counts) for a 유형, if any fund of it is rated."""
        return self.peers.get(str(fund_type)) if fund_type is not None else None


@dataclass(frozen=True)
class ClassInfo:
    """Per-fund extras: share-class portfolio and its class count, return basis, reason codes."""

    families: np.ndarray | None = None
    classes: np.ndarray | None = None
    basis: np.ndarray | None = None
    codes: Mapping[int, list[str]] = field(default_factory=dict)
    provisional: np.ndarray | None = None
    provisional_labels: Mapping[int, str] = field(default_factory=dict)
    criteria_of: Mapping[Any, tuple[str, ...]] = field(default_factory=dict)
    """Per 유형, the criterion ids that scored it (per-유형 weights); empty: every criterion."""
    amounts: np.ndarray | None = None


def _nullable(values: np.ndarray) -> list[float | None]:
    """Floats per fund with NaN as None (vectorised conversion; the per-fund loop only reads lists)."""
    array = np.asarray(values, dtype=float)
    out: list[float | None] = array.tolist()
    for i in np.flatnonzero(np.isnan(array)).tolist():  # only the NaN cells are touched in Python
        out[i] = None
    return out


@dataclass(frozen=True)
class BatchArrays:
    """The engine's per-fund arrays for one batch, in engine fund order: what :func:`package_results` reads."""

    codes: list[str]
    names: np.ndarray
    companies: np.ndarray
    types: np.ndarray
    flags: FundFlags
    eligible: np.ndarray
    metrics: Mapping[str, Mapping[str, np.ndarray]]
    rule_weights: np.ndarray
    """Funds × periods (in ``PERIODS`` order): the period weights each fund's history earned."""
    scores: Any
    qualitative: Mapping[str, np.ndarray]
    history: np.ndarray
    first: np.ndarray
    has_any: np.ndarray
    dates: pd.DatetimeIndex
    labels: Mapping[int, str]
    as_of: dt.date
    extra: ClassInfo = field(default_factory=ClassInfo)


def _metric_rows(metrics: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, list[dict[str, float | None] | None]]:
    """Per period, each fund's metrics as a dict (None where the fund has no value in that window)."""
    names_list = list(METRICS)
    rows: dict[str, list[dict[str, float | None] | None]] = {}
    for p in PERIODS:
        if p not in metrics:
            continue
        has_values = np.isfinite(np.stack([metrics[p][m] for m in names_list])).any(axis=0).tolist()
        values = zip(*(_nullable(metrics[p][m]) for m in names_list), strict=True)
        rows[p] = [
            dict(zip(names_list, v, strict=True)) if h else None
            for v, h in zip(values, has_values, strict=True)
        ]
    return rows


def _columns(a: BatchArrays) -> dict[str, Any]:
    """Every per-fund array as a Python list, made once (the per-fund loop only reads lists)."""
    n, extra = len(a.codes), a.extra
    day = np.asarray(a.dates.strftime("%Y-%m-%d"), dtype=object)
    return {
        "criteria": {c: _nullable(v) for c, v in a.scores.criteria.items()},
        "quantitative": _nullable(a.scores.quantitative),
        "final": _nullable(a.scores.score),
        "top": _nullable(a.scores.peer_percentile),
        "bottom": _nullable(a.scores.peer_bottom) if a.scores.peer_bottom is not None else [None] * n,
        "qual": {
            k: _nullable(np.where(np.isfinite(v), np.asarray(v, dtype=float), np.nan))
            for k, v in a.qualitative.items()
        },
        "first_day": [day[f] if h else None for f, h in zip(a.first.tolist(), a.has_any.tolist(), strict=True)],
        "years": _nullable(np.round(a.history, 2)),
        "families": extra.families.tolist() if extra.families is not None else [None] * n,
        "basis": extra.basis.tolist() if extra.basis is not None else ["raw"] * n,
        "classes": _class_column(extra, a.eligible),
        "amounts": _nullable(extra.amounts) if extra.amounts is not None else [None] * n,
        "eligible": np.asarray(a.eligible, dtype=bool).tolist(),
        "weights": a.rule_weights.tolist(),
        "grades": np.asarray(a.scores.grade).tolist(),
        "peer_sizes": np.asarray(a.scores.peer_size).tolist(),
        "young": extra.provisional.tolist() if extra.provisional is not None else [False] * n,
    }


def package_results(a: BatchArrays) -> list[FundResult]:
    """Package the arrays per fund (plain Python values; this loop does no arithmetic).

    Every per-fund value is read from a Python list made once per array (``tolist``), never by indexing
    numpy arrays inside the loop: at 15,000 funds that indexing cost as much as the metrics.
    """
    rows = _metric_rows(a.metrics)
    periods = [p for p in PERIODS if p in rows]
    col = _columns(a)
    flags, extra, own = a.flags, a.extra, a.extra.criteria_of
    weight_dicts: dict[tuple[float, ...], dict[str, float]] = {}
    out: list[FundResult] = []
    for i, code in enumerate(a.codes):
        status = ERROR if i in flags.errors else (OK if col["eligible"][i] else NOT_RATED)
        rated = status == OK
        per_period: dict[str, dict[str, float | None] | None] = dict.fromkeys(PERIODS)
        if status != ERROR:
            for p in periods:
                per_period[p] = rows[p][i]
        key = tuple(col["weights"][i])
        if key not in weight_dicts:
            weight_dicts[key] = {p: float(w) for p, w in zip(PERIODS, key, strict=True) if w > 0}
        qual = {k: v[i] for k, v in col["qual"].items() if v[i] is not None} if rated else None
        grade = int(col["grades"][i]) if rated else None
        young = col["young"][i]
        label = (extra.provisional_labels if young else a.labels).get(grade) if grade is not None else None
        applied = own.get(a.types[i]) if own else None
        out.append(
            FundResult(
                fund_code=code,
                fund_name=a.names[i],
                company=a.companies[i],
                type=a.types[i],
                status=status,
                errors=tuple(flags.errors.get(i, ()))
                + (() if status == ERROR else tuple(flags.not_rated.get(i, ()))),
                warnings=tuple(flags.warnings.get(i, ())),
                as_of=a.as_of,
                first_date=col["first_day"][i],
                history_years=col["years"][i],
                metrics=per_period,
                period_weights=dict(weight_dicts[key]) if rated else {},
                criterion_scores={
                    c: (v[i] if rated else None)
                    for c, v in col["criteria"].items()
                    if applied is None or c in applied
                },
                qualitative_scores=qual or None,
                quantitative_score=col["quantitative"][i] if rated else None,
                score=col["final"][i] if rated else None,
                peer_group_size=int(col["peer_sizes"][i]) if rated else None,
                peer_percentile=col["top"][i] if rated else None,
                peer_bottom_percent=col["bottom"][i] if rated else None,
                grade=grade,
                grade_label=label,
                reason_codes=_reason_codes(extra.codes.get(i, ()), status),
                return_basis=col["basis"][i],
                portfolio_code=col["families"][i],
                portfolio_classes=col["classes"][i],
                provisional=bool(young) and rated,
                set_amount_krw=col["amounts"][i],
            )
        )
    return out


ERROR_CODES = frozenset({"nav_outlier", "nav_outlier_unconfirmed"})
"""Reason codes that go with an ``error`` status; the others go with ``not_rated``."""


def _reason_codes(codes: Sequence[str], status: str) -> tuple[str, ...]:
    if status == ERROR:
        return tuple(c for c in codes if c in ERROR_CODES)
    if status == NOT_RATED:
        return tuple(c for c in codes if c not in ERROR_CODES)
    return ()


def _class_column(extra: ClassInfo, eligible: np.ndarray) -> list[int | None]:
    """Per fund: k used in the rating scale when rated; otherwise how many classes the batch holds."""
    if extra.families is None:
        return [None] * len(eligible)
    sizes = pd.Series(extra.families).map(pd.Series(extra.families).value_counts()).to_numpy(dtype=int)
    rated_k = extra.classes if extra.classes is not None else sizes
    return np.where(eligible & (rated_k > 0), rated_k, sizes).astype(int).tolist()
