"""The deterministic fund-rating engine: NAV matrix + metadata + rubric → one graded result per fund.

Pure: no file IO (loaders and report writers are separate modules), no per-fund Python loop for the
numbers (metrics and scores are computed on the whole dates × funds matrix at once). The GRPO side calls
:func:`evaluate_universe` and reads :class:`FundResult` / :attr:`Evaluation.peers` to build prompts and to
verify what a model wrote. Conventions: :mod:`evaluator.domains.fund.engine.metrics` and
:mod:`evaluator.domains.fund.engine.scoring` (and ``domains/fund/README.md``).

Status: ``error`` — the fund's data is broken (reasons say how); ``not_rated`` — the data is fine but the
methodology does not rate it (history too short, 설정액 too small, unknown 유형, peer group too small,
stale); ``ok`` — scored and graded.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data import INFERRED
from evaluator.domains.fund.engine.checks import FundFlags, Lifespan, check_matrix
from evaluator.domains.fund.engine.eligibility import Covers, eligibility, gate_peer_groups, period_weights
from evaluator.domains.fund.engine.engine_inputs import EngineInputs
from evaluator.domains.fund.engine.grading import provisional_grades, score_per_type, with_provisional
from evaluator.domains.fund.engine.inputs import (
    benchmark_matrix,
    benchmark_order,
    clean_meta_text,
    fund_codes,
    meta_by_code,
    meta_column,
    qualitative_scores,
    risk_free_rates,
    set_amounts,
)
from evaluator.domains.fund.engine.metrics import (
    Market,
    metrics_for,
    row_on_or_before,
    window_start_row,
)
from evaluator.domains.fund.engine.nav_series import TotalReturnLevels
from evaluator.domains.fund.engine.outliers import Outliers, find_outliers, flag_outliers, prices_of, visible
from evaluator.domains.fund.engine.prepare import Prepared, flag_unadjusted, prepare
from evaluator.domains.fund.engine.results import (
    BatchArrays,
    ClassInfo,
    Evaluation,
    FundResult,
    package_results,
)
from evaluator.domains.fund.engine.scoring import class_counts, family_codes, peer_context
from evaluator.domains.fund.engine.series_ends import EndTypos, end_prices, find_end_typos, flag_end_typos
from evaluator.domains.fund.rubric import default_rubric
from evaluator.domains.fund.types import ERROR, NOT_RATED, OK, DataError
from evaluator.methodology.rubric import PERIODS, criteria_for
from evaluator.methodology.rubric_scale import provisional_label

__all__ = ["ERROR", "NOT_RATED", "OK", "EngineInputs", "Evaluation", "FundResult", "evaluate_universe"]

_TEXT_COLUMNS = ("fund_name", "company", "type")


def evaluate_universe(
    navs: pd.DataFrame,
    meta: pd.DataFrame | None = None,
    rubric: Mapping[str, Any] | None = None,
    *,
    inputs: EngineInputs | None = None,
    **fields: Any,
) -> Evaluation:
    """Rate every fund in ``navs`` (dates × fund codes, NaN where a fund has no NAV).

    ``meta``: indexed by fund code, columns ``fund_name``, ``company``, ``type`` (유형), ``set_amount``
    (설정액) or ``net_assets``, and optional qualitative scores named by criterion id or name. ``inputs``: the
    benchmark, risk-free rate, as-of date and the rest (:class:`EngineInputs`); keywords named like its fields
    (``benchmark=…``, ``as_of=…``) set them one by one on top, and any other keyword is refused.
    """
    given = replace(inputs or EngineInputs(), **fields)
    benchmark, risk_free, as_of, issues = given.benchmark, given.risk_free, given.as_of, given.issues
    outliers, allow_unadjusted, known_metrics = given.outliers, given.allow_unadjusted, given.known_metrics
    rubric = dict(rubric) if rubric is not None else default_rubric()
    _check_navs(navs, issues)
    issues = issues or {}
    codes = fund_codes(navs, issues)
    as_of_ts = _as_of_stamp(as_of, navs.index)
    meta = meta_by_code(meta)
    input_order = {c: i for i, c in enumerate(codes)}
    codes = benchmark_order(codes, meta, benchmark)
    flags = FundFlags()
    index_of = {c: i for i, c in enumerate(codes)}
    for code, reasons in issues.items():
        for reason in reasons:
            flags.error(index_of[str(code)], reason)
    names, companies, types = (clean_meta_text(meta_column(meta, codes, c)) for c in _TEXT_COLUMNS)
    groups = np.array([t if t is not None else "" for t in types], dtype=object)
    matrix = known_metrics.nav if known_metrics is not None and known_metrics.codes == codes else None
    prepared = prepare(
        navs, codes, as_of_ts, flags, benchmark=benchmark, adjustments=given.adjustments, calendar=given.calendar,
        groups=groups, matrix=matrix,
    )  # fmt: skip
    dates = prepared.dates
    as_of_ts = as_of_ts if as_of_ts is not None else dates[-1]
    span = check_matrix(prepared.nav, dates, as_of_ts, flags)
    amounts = set_amounts(meta, codes)
    qualitative = qualitative_scores(rubric, meta, codes, flags)
    market = _Market.build(navs, codes, prepared, groups, types, benchmark, risk_free, as_of_ts, flags)
    market.flag(flags, outliers, allow_unadjusted)
    errored = np.zeros(len(codes), dtype=bool)
    errored[list(flags.errors)] = True
    prepared.levels[:, errored] = np.nan
    if known_metrics is not None:  # a fund this run finds in error is measured (as NaN) here, never taken
        known_metrics = replace(known_metrics, measured=known_metrics.measured & ~errored)
    metrics = metrics_for(prepared.levels, market.market, as_of_ts, codes, known_metrics)
    first_dates = np.where(span.has_any, span.first, 0)
    history = np.where(span.has_any, (as_of_ts - dates[first_dates]).days / 365.25, np.nan)
    covers = _covers(dates, as_of_ts, span)
    graded = _grade(
        _ToGrade(rubric, metrics, meta, codes, types, groups, amounts, covers, history, flags, errored, qualitative)
    )
    labels = {int(b["grade"]): str(b["label"]) for b in rubric["grade_bands"]}
    arrays = BatchArrays(
        codes=codes, names=names, companies=companies, types=types, flags=flags, eligible=graded.eligible,
        metrics=metrics, rule_weights=graded.weights, scores=graded.scores, qualitative=qualitative,
        history=history, first=span.first, has_any=span.has_any, dates=dates, labels=labels,
        as_of=as_of_ts.date(), extra=_class_info(rubric, types, labels, prepared, flags, amounts, graded),
    )  # fmt: skip
    funds = package_results(arrays)
    funds.sort(key=lambda f: input_order[f.fund_code])
    inputs = _inputs_doc(rubric, risk_free, prepared, market, allow_unadjusted, outliers, graded.families)
    inputs["share_classes"]["inferred_from_names"] = bool(INFERRED in meta.columns)
    levels = market.levels_measured(codes)
    return Evaluation(
        as_of=as_of_ts.date(), rubric=rubric, funds=funds, peers=graded.peers, inputs=inputs, levels=levels
    )


def _check_navs(navs: pd.DataFrame, issues: Mapping[str, Sequence[str]] | None) -> None:
    """The NAV matrix must be dated, ascending and unique, with at least one row."""
    if (
        not isinstance(navs.index, pd.DatetimeIndex)
        or not navs.index.is_monotonic_increasing
        or not navs.index.is_unique
    ):
        raise DataError("the NAV matrix must be indexed by unique dates in ascending order")
    if len(navs.index) == 0:
        broken = f" ({len(issues)} fund(s) had only broken rows)" if issues else ""
        raise DataError(f"there are no usable NAV rows to evaluate{broken}")


def _as_of_stamp(as_of: dt.date | None, nav_dates: pd.DatetimeIndex) -> pd.Timestamp | None:
    """The as-of date as the calendar's timestamp (midnight); refused when it is before the first NAV."""
    if isinstance(as_of, str):  # text is read once, where it enters (readers.parse_as_of)
        raise TypeError(f"as_of must be a datetime.date, not the text {as_of!r}")
    as_of_ts = pd.Timestamp(as_of).normalize() if as_of is not None else None
    if as_of_ts is not None and row_on_or_before(nav_dates, as_of_ts) is None:
        raise DataError(
            f"as-of date {as_of_ts:%Y-%m-%d} is before the first NAV date {nav_dates[0]:%Y-%m-%d}"
        )
    return as_of_ts


def _covers(dates: pd.DatetimeIndex, as_of: pd.Timestamp, span: Lifespan) -> Covers:
    def covers(years: float) -> np.ndarray:
        row = window_start_row(dates, as_of, years)
        return np.zeros(len(span.first), dtype=bool) if row is None else span.has_any & (span.first <= row)

    return covers


@dataclass
class _Market:
    """Risk-free rates and benchmark levels on the calendar, and the NAV typos an evaluation at ``as_of`` sees."""

    market: Market
    bench_info: dict[str, Any]
    found: Outliers
    navs: pd.DataFrame
    codes: list[str]
    prepared: Prepared
    groups: np.ndarray
    ends: EndTypos = field(default_factory=EndTypos)
    resets: Any = None
    checked: dict[int, str] = field(default_factory=dict)
    """Funds a data check on the NAVs refused, repaired or kept (the summary names them)."""

    @classmethod
    def build(
        cls,
        navs: pd.DataFrame,
        codes: list[str],
        prepared: Prepared,
        groups: np.ndarray,
        types: np.ndarray,
        benchmark: pd.Series | pd.DataFrame | None,
        risk_free: float | pd.Series,
        as_of: pd.Timestamp,
        flags: FundFlags,
    ) -> _Market:
        dates = prepared.dates
        rf = risk_free_rates(risk_free, dates)
        bench_levels, bench_of_fund, bench_info = benchmark_matrix(benchmark, dates, types, flags)
        every = find_outliers(prepared.levels, groups, bench_levels, bench_of_fund)
        found = visible(every, dates, len(dates) - 1, as_of)
        ends = find_end_typos(prepared.levels, groups, bench_levels, bench_of_fund, skip=set(found.episodes))
        market = Market(dates=dates, rf_annual=rf, bench_levels=bench_levels, bench_of_fund=bench_of_fund)
        return cls(market, bench_info, found, navs, codes, prepared, groups, ends)

    def levels_measured(self, codes: list[str]) -> TotalReturnLevels:
        """The total-return and benchmark levels the metrics were measured on (for the NAV charts)."""
        m, info = self.market, self.bench_info
        names = list(info.get("types") or [info.get("name")])
        return TotalReturnLevels(m.dates, codes, self.prepared.levels, m.bench_levels, m.bench_of_fund, names)

    def flag(self, flags: FundFlags, outliers: str, allow_unadjusted: bool) -> None:
        """NAV typos (per ``outliers``) and unadjusted 결산 resets, as errors, warnings or repairs."""
        found, dates, levels = self.found, self.prepared.dates, self.prepared.levels
        flag_outliers(levels, prices_of(self.navs, self.codes, dates, found), dates, found, flags, outliers)
        done = {
            i: {"error": "refused", "repair": "repaired", "keep": "kept"}[outliers] for i in found.episodes
        }
        if outliers == "repair":  # an episode longer than the fill limit stays an error
            done.update({i: "refused" for i in found.episodes if i in flags.errors})
        ends = self.ends
        done.update(
            flag_end_typos(
                levels, end_prices(self.navs, self.codes, dates, ends), dates, ends, flags, outliers
            )
        )
        self.checked = done
        self.resets = flag_unadjusted(
            self.prepared,
            self.groups,
            self.market.bench_levels,
            self.market.bench_of_fund,
            flags,
            allow=allow_unadjusted,
            ignore={i: found.rows(i) | ends.rows(i) for i in set(found.episodes) | ends.funds()},
        )


@dataclass
class _Graded:
    eligible: np.ndarray
    weights: np.ndarray
    scores: Any
    peers: dict[str, dict[str, Any]]
    families: np.ndarray | None
    classes: np.ndarray | None
    young: np.ndarray | None


@dataclass(frozen=True)
class _ToGrade:
    """What grading reads: the rubric, the window metrics and, per fund, its code, 유형, peer group, 설정액, the
    windows its history covers, its years of history, its flags (``errored``: refused), qualitative scores."""

    rubric: dict[str, Any]
    metrics: Mapping[str, Mapping[str, np.ndarray]]
    meta: pd.DataFrame
    codes: list[str]
    types: np.ndarray
    groups: np.ndarray
    amounts: np.ndarray
    covers: Covers
    history: np.ndarray
    flags: FundFlags
    errored: np.ndarray
    qualitative: Mapping[str, np.ndarray]


def _grade(given: _ToGrade) -> _Graded:
    """Who is rated, their scores and grades per peer group, and the provisional grades of young funds."""
    rubric, metrics, meta, codes, types, groups = (
        given.rubric, given.metrics, given.meta, given.codes, given.types, given.groups
    )  # fmt: skip
    amounts, covers, history, flags, errored, qualitative = (
        given.amounts, given.covers, given.history, given.flags, given.errored, given.qualitative
    )  # fmt: skip
    skipped_before = np.zeros(len(codes), dtype=bool)
    skipped_before[list(flags.not_rated)] = True  # stale and the like: no grade of any kind
    passes, short = eligibility(rubric, types, amounts, covers, history, flags)
    base_ok = passes & ~errored & ~skipped_before
    eligible = np.array(
        [i not in flags.errors and i not in flags.not_rated for i in range(len(codes))], dtype=bool
    )
    eligible = gate_peer_groups(rubric, types, eligible, flags)
    rule_weights = period_weights(rubric, covers, len(codes))
    weights = {p: rule_weights[:, k] for k, p in enumerate(PERIODS)}
    families = family_codes(meta, codes)
    scores = score_per_type(metrics, groups, eligible, weights, rubric, qualitative, families=families)
    classes = (
        class_counts(groups, families, eligible & np.isfinite(scores.score)) if families is not None else None
    )
    peers = peer_context(metrics, groups, eligible, scores.score, scores.grade, rubric)
    prov = provisional_grades(
        rubric, metrics, groups, base_ok, short, covers, history, flags, qualitative, families
    )
    if prov is not None and prov.young.any():
        scores = with_provisional(scores, prov)
        eligible = eligible | prov.young
        rule_weights[prov.young] = np.array([100.0 if p == prov.window else 0.0 for p in PERIODS])
        if classes is not None:
            prov_k = class_counts(groups, families, np.isfinite(prov.scores.score))
            classes = np.where(prov.young, prov_k, classes)
    young = prov.young if prov is not None else None
    return _Graded(eligible, rule_weights, scores, peers, families, classes, young)


def _class_info(
    rubric: Mapping[str, Any],
    types: np.ndarray,
    labels: Mapping[int, str],
    prepared: Prepared,
    flags: FundFlags,
    amounts: np.ndarray,
    graded: _Graded,
) -> ClassInfo:
    return ClassInfo(
        families=graded.families,
        classes=graded.classes,
        basis=prepared.source,
        codes=flags.codes,
        provisional=graded.young,
        provisional_labels={g: provisional_label(rubric, g) for g in labels},
        criteria_of={t: tuple(c["id"] for c in criteria_for(rubric, t)) for t in set(types.tolist())}
        if rubric.get("criteria_by_type")
        else {},
        amounts=amounts,
    )


def _inputs_doc(
    rubric: Mapping[str, Any],
    risk_free: float | pd.Series,
    prepared: Prepared,
    market: _Market,
    allow_unadjusted: bool,
    outliers: str,
    families: np.ndarray | None,
) -> dict[str, Any]:
    """What the run used, as the summary's ``inputs`` block."""
    bench_info = market.bench_info
    return {
        "benchmark": bench_info,
        "risk_free": {"kind": "series"}
        if isinstance(risk_free, pd.Series)
        else {"kind": "constant", "annual_rate": float(risk_free)},
        "rubric": {"name": rubric["name"], "version": rubric["version"]},
        "calendar": {**prepared.info, **({"notes": [bench_info["note"]]} if "note" in bench_info else {})},
        "returns": {
            "basis_counts": {k: int(v) for k, v in pd.Series(prepared.source).value_counts().items()},
            "unadjusted_resets": market.resets,
            "allow_unadjusted": bool(allow_unadjusted),
        },
        "outliers": {
            "mode": outliers,
            "funds": len(market.found.episodes),
            "series_ends": len(market.ends.funds()),
            **{
                what: sorted(market.codes[i] for i, d in market.checked.items() if d == what)
                for what in ("refused", "repaired", "kept")
            },
        },
        "share_classes": {
            "grouped": families is not None,
            "portfolios": len({f for f in families if f is not None}) if families is not None else None,
            "families": int((pd.Series(families).value_counts() > 1).sum()) if families is not None else 0,
        },
    }
