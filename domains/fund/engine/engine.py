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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.readers import DataError
from evaluator.domains.fund.engine.calendar import Aligned, align_benchmark
from evaluator.domains.fund.engine.checks import FundFlags, check_matrix
from evaluator.domains.fund.engine.grading import provisional_grades, score_per_type, with_provisional
from evaluator.domains.fund.engine.metrics import (
    KnownMetrics,
    Market,
    metrics_for,
    row_on_or_before,
    window_start_row,
)
from evaluator.domains.fund.engine.outliers import find_outliers, flag_outliers, prices_of, visible
from evaluator.domains.fund.engine.prepare import flag_unadjusted, prepare
from evaluator.domains.fund.engine.results import (
    ERROR,
    NOT_RATED,
    OK,
    ClassInfo,
    Evaluation,
    FundResult,
    package_results,
)
from evaluator.domains.fund.engine.scoring import class_counts, family_codes, peer_context
from evaluator.domains.fund.engine.total_return import Adjustments
from evaluator.domains.fund.rubric import default_rubric
from evaluator.methodology.rubric import PERIODS, criteria_for, eligibility_for, peer_groups_of
from evaluator.methodology.rubric_scale import provisional_label

__all__ = ["ERROR", "NOT_RATED", "OK", "Evaluation", "FundResult", "evaluate_universe"]

_TEXT_COLUMNS = ("fund_name", "company", "type")


def _rf_series(risk_free: float | pd.Series, dates: pd.DatetimeIndex) -> np.ndarray:
    if isinstance(risk_free, pd.Series):
        s = risk_free.sort_index().astype(float)
        aligned = s.reindex(s.index.union(dates)).ffill().bfill().reindex(dates)
        return aligned.to_numpy(dtype=float)
    return np.full(len(dates), float(risk_free))


def benchmark_matrix(
    benchmark: pd.Series | pd.DataFrame | None, dates: pd.DatetimeIndex, types: np.ndarray, flags: FundFlags
) -> tuple[np.ndarray | None, np.ndarray | None, dict[str, Any]]:
    """Benchmark levels on the market calendar, each fund's column, and what aligning them did."""
    if benchmark is None:
        return None, None, {"kind": "none"}
    if isinstance(benchmark, pd.Series):
        aligned = align_benchmark(benchmark.to_frame(), dates)
        info = {"kind": "single", "name": str(benchmark.name or "benchmark")}
        return aligned.values, np.zeros(len(types), dtype=int), {**info, **_alignment(aligned)}
    columns = [str(c) for c in benchmark.columns]
    index = {c: i for i, c in enumerate(columns)}
    of_fund = np.array([index.get(str(t), -1) if t is not None else -1 for t in types], dtype=int)
    for i in np.flatnonzero(of_fund < 0):
        if types[i] is not None:
            flags.warn(
                int(i), f"유형 '{types[i]}'의 벤치마크가 없어 벤치마크 대비 지표를 계산하지 않았습니다"
            )
    aligned = align_benchmark(benchmark, dates)
    return aligned.values, of_fund, {"kind": "per_type", "types": columns, **_alignment(aligned)}


def _alignment(aligned: Aligned) -> dict[str, Any]:
    note = aligned.note()
    return {"ignored_dates": aligned.extra, "filled_dates": aligned.filled, **({"note": note} if note else {})}


def meta_column(meta: pd.DataFrame, codes: list[str], *names: str) -> np.ndarray:
    for name in names:
        if name in meta.columns:
            return meta[name].reindex(codes).to_numpy(dtype=object)
    return np.full(len(codes), None, dtype=object)


def clean_meta_text(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = (
            None
            if v is None or (isinstance(v, float) and np.isnan(v)) or str(v).strip() == ""
            else str(v).strip()
        )
    return out


def numeric_array(values: np.ndarray) -> np.ndarray:
    return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)


def benchmark_order(codes: list[str], meta: pd.DataFrame, benchmark: Any) -> list[str]:
    """Funds grouped by benchmark column (stable), so the metrics see each benchmark's funds as one slice
    of the matrix; results are put back in input order afterwards."""
    if not isinstance(benchmark, pd.DataFrame) or "type" not in meta.columns:
        return codes
    column = {str(c): i for i, c in enumerate(benchmark.columns)}
    types = meta["type"].reindex(codes).to_numpy(dtype=object)
    key = np.array([column.get(str(t).strip(), -1) if t is not None else -1 for t in types])
    return [codes[i] for i in np.argsort(key, kind="stable")]


def _eligibility(
    rubric: Mapping[str, Any],
    types: np.ndarray,
    amounts: np.ndarray,
    covers: Callable[[float], np.ndarray],
    history: np.ndarray,
    flags: FundFlags,
) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds per fund's 유형: the general rule, or that 유형's override (e.g. 채권형 ≥ 300억원).

    The tests run on whole arrays; only the funds that get a reason are visited, in fund order, with
    their reasons in the order the rules are listed. Returns (passes every rule but history, history too
    short), which provisional grades start from. No ``peer_groups`` in the rubric: every 유형 in the data.
    """
    peer_groups = peer_groups_of(rubric, types.tolist())
    groups = set(peer_groups)
    listed = types.tolist()
    rules_of = {t: eligibility_for(rubric, t) for t in dict.fromkeys(listed)}
    min_years = np.array([rules_of[t]["min_history_years"] for t in listed], dtype=float)
    min_amount = np.array([rules_of[t]["min_set_amount_krw"] for t in listed], dtype=float)
    covered = np.zeros(len(listed), dtype=bool)
    for years in np.unique(min_years).tolist():
        of = min_years == years
        covered[of] = covers(years)[of]
    no_group = np.array([t is None or t not in groups for t in listed], dtype=bool)
    known = np.isfinite(amounts)
    with np.errstate(invalid="ignore"):
        small = known & (amounts < min_amount)
    short = np.isfinite(history) & ~covered
    unknown = ~known & (min_amount > 0)
    for i in np.flatnonzero(no_group | short | small | unknown).tolist():
        if i in flags.errors:
            continue
        t = listed[i]
        if t is None:
            flags.skip(i, "펀드 유형(유형) 정보가 없습니다")
        elif t not in groups:
            flags.skip(
                i, f"유형 '{t}'은(는) 평가 방법론의 동류그룹({', '.join(peer_groups)})이 아닙니다"
            )
        rules = rules_of[t]
        if short[i]:
            flags.skip(
                i, f"운용기간 {history[i]:.1f}년으로 최소 {rules['min_history_years']:g}년에 못 미칩니다"
            )
        if small[i]:
            flags.skip(
                i,
                f"설정액 {amounts[i] / 1e8:,.1f}억원이 최소 {rules['min_set_amount_krw'] / 1e8:,.1f}억원에 못 미칩니다",
            )
        elif unknown[i]:
            flags.warn(i, "설정액 정보가 없어 최소 설정액 기준을 확인하지 못했습니다")
    return ~no_group & ~small, short


def qualitative_scores(
    rubric: Mapping[str, Any], meta: pd.DataFrame, codes: list[str], flags: FundFlags
) -> dict[str, np.ndarray]:
    spec = rubric.get("qualitative")
    if not spec:
        return {}
    out: dict[str, np.ndarray] = {}
    for crit in spec["criteria"]:
        raw = meta_column(meta, codes, crit["id"], crit["name"])
        values = numeric_array(raw)
        bad = np.isfinite(values) & ((values < 1) | (values > 5))
        unreadable = ~np.isfinite(values) & np.array(
            [v is not None and str(v).strip() not in ("", "nan") for v in raw]
        )
        for i in np.flatnonzero(bad | unreadable):
            flags.error(int(i), f"정성평가 '{crit['name']}' 점수 {raw[i]}이(가) 1~5 범위의 숫자가 아닙니다")
        out[crit["id"]] = values
    return out


def evaluate_universe(
    navs: pd.DataFrame,
    meta: pd.DataFrame | None = None,
    rubric: Mapping[str, Any] | None = None,
    *,
    benchmark: pd.Series | pd.DataFrame | None = None,
    risk_free: float | pd.Series = 0.0,
    as_of: dt.date | None = None,
    issues: Mapping[str, Sequence[str]] | None = None,
    adjustments: Adjustments | None = None,
    calendar: pd.DatetimeIndex | None = None,
    allow_unadjusted: bool = False,
    known_metrics: KnownMetrics | None = None,
    outliers: str = "error",
) -> Evaluation:
    """Rate every fund in ``navs`` (dates × fund codes, NaN where a fund has no NAV).

    ``meta``: indexed by fund code, columns ``fund_name``, ``company``, ``type`` (유형), ``set_amount``
    (설정액) or ``net_assets``, and optional qualitative scores named by criterion id or name.
    ``benchmark``: index levels, one Series for all funds or a DataFrame with one column per 유형.
    ``risk_free``: a constant annual rate or a Series of annual rates by date. ``issues``: data problems a
    loader found per fund (duplicate dates, …); those funds get status ``error``. ``known_metrics``:
    window metrics a grade history already measured for this date (see :class:`KnownMetrics`).
    ``outliers``: what a NAV typo (:mod:`~evaluator.domains.fund.engine.outliers`) does: ``error`` (default),
    ``repair`` (read as missing) or ``keep`` (graded, with a warning).
    """
    rubric = dict(rubric) if rubric is not None else default_rubric()
    if (
        not isinstance(navs.index, pd.DatetimeIndex)
        or not navs.index.is_monotonic_increasing
        or not navs.index.is_unique
    ):
        raise DataError("the NAV matrix must be indexed by unique dates in ascending order")
    if len(navs.index) == 0:
        broken = f" ({len(issues)} fund(s) had only broken rows)" if issues else ""
        raise DataError(f"there are no usable NAV rows to evaluate{broken}")
    issues = issues or {}
    codes = [str(c) for c in navs.columns]
    known = set(codes)
    codes += [str(c) for c in issues if str(c) not in known]
    if isinstance(as_of, str):  # text is read once, where it enters (readers.parse_as_of)
        raise TypeError(f"as_of must be a datetime.date, not the text {as_of!r}")
    as_of_ts = pd.Timestamp(as_of).normalize() if as_of is not None else None
    if as_of_ts is not None and row_on_or_before(navs.index, as_of_ts) is None:
        raise DataError(
            f"as-of date {as_of_ts:%Y-%m-%d} is before the first NAV date {navs.index[0]:%Y-%m-%d}"
        )
    meta = meta if meta is not None else pd.DataFrame(index=pd.Index([], name="fund_code"))
    meta = meta.copy()
    meta.index = meta.index.astype(str)
    meta = meta[~meta.index.duplicated(keep="last")]
    input_order = {c: i for i, c in enumerate(codes)}
    codes = benchmark_order(codes, meta, benchmark)
    flags = FundFlags()
    index_of = {c: i for i, c in enumerate(codes)}
    for code, reasons in issues.items():
        for reason in reasons:
            flags.error(index_of[str(code)], reason)
    names, companies, types = (clean_meta_text(meta_column(meta, codes, c)) for c in _TEXT_COLUMNS)
    groups = np.array([t if t is not None else "" for t in types], dtype=object)
    prepared = prepare(
        navs,
        codes,
        as_of_ts,
        flags,
        benchmark=benchmark,
        adjustments=adjustments,
        calendar=calendar,
        groups=groups,
        matrix=known_metrics.nav if known_metrics is not None and known_metrics.codes == codes else None,
    )
    nav, levels, dates = prepared.nav, prepared.levels, prepared.dates
    as_of_ts = as_of_ts if as_of_ts is not None else dates[-1]
    span = check_matrix(nav, dates, as_of_ts, flags)
    amounts = numeric_array(meta_column(meta, codes, "set_amount"))
    amounts = np.where(np.isfinite(amounts), amounts, numeric_array(meta_column(meta, codes, "net_assets")))
    qualitative = qualitative_scores(rubric, meta, codes, flags)
    rf = _rf_series(risk_free, dates)
    bench_levels, bench_of_fund, bench_info = benchmark_matrix(benchmark, dates, types, flags)
    every = find_outliers(levels, groups, bench_levels, bench_of_fund)
    found = visible(every, dates, len(dates) - 1, as_of_ts)
    found.pending = every.pending
    flag_outliers(levels, prices_of(navs, codes, dates, found), dates, found, flags, outliers)
    resets = flag_unadjusted(
        prepared,
        groups,
        bench_levels,
        bench_of_fund,
        flags,
        allow=allow_unadjusted,
        ignore={i: found.rows(i) for i in found.episodes},
    )
    errored = np.zeros(len(codes), dtype=bool)
    errored[list(flags.errors)] = True
    levels[:, errored] = np.nan
    market = Market(dates=dates, rf_annual=rf, bench_levels=bench_levels, bench_of_fund=bench_of_fund)
    if known_metrics is not None:  # a fund this run finds in error is measured (as NaN) here, never taken
        known_metrics = replace(known_metrics, measured=known_metrics.measured & ~errored)
    metrics = metrics_for(levels, market, as_of_ts, codes, known_metrics)

    first_dates = np.where(span.has_any, span.first, 0)
    history = np.where(span.has_any, (as_of_ts - dates[first_dates]).days / 365.25, np.nan)

    def covers(years: float) -> np.ndarray:
        row = window_start_row(dates, as_of_ts, years)
        return np.zeros(len(codes), dtype=bool) if row is None else span.has_any & (span.first <= row)

    skipped_before = np.zeros(len(codes), dtype=bool)
    skipped_before[list(flags.not_rated)] = True  # stale and the like: no grade of any kind
    passes, short = _eligibility(rubric, types, amounts, covers, history, flags)
    base_ok = passes & ~errored & ~skipped_before
    eligible = np.array(
        [i not in flags.errors and i not in flags.not_rated for i in range(len(codes))], dtype=bool
    )
    min_peers = int(rubric["eligibility"]["min_peer_group_size"])
    sizes = pd.Series(types).map(pd.Series(types[eligible]).value_counts()).fillna(0).to_numpy(dtype=int)
    for i in np.flatnonzero(eligible & (sizes < min_peers)):
        flags.skip(
            int(i),
            f"동류그룹 '{types[i]}'의 평가 대상 펀드가 {sizes[i]}개로 최소 {min_peers}개에 못 미칩니다",
        )
        eligible[i] = False

    rule_weights = np.zeros((len(codes), len(PERIODS)))
    period_names = list(PERIODS)
    for rule in rubric["period_weights"]:  # later rules (longer histories) override earlier ones
        hit = covers(float(rule["min_history_years"]))
        row = np.array([float(rule["weights"].get(p, 0.0)) for p in period_names])
        rule_weights[hit] = row
    period_weights = {p: rule_weights[:, k] for k, p in enumerate(period_names)}
    families = family_codes(meta, codes)
    scores = score_per_type(metrics, groups, eligible, period_weights, rubric, qualitative, families=families)
    classes = (
        class_counts(groups, families, eligible & np.isfinite(scores.score)) if families is not None else None
    )
    peers = peer_context(metrics, groups, eligible, scores.score, scores.grade, rubric)
    labels = {int(b["grade"]): str(b["label"]) for b in rubric["grade_bands"]}
    prov = provisional_grades(
        rubric, metrics, groups, base_ok, short, covers, history, flags, qualitative, families
    )
    if prov is not None and prov.young.any():
        scores = with_provisional(scores, prov)
        eligible = eligible | prov.young
        rule_weights[prov.young] = np.array([100.0 if p == prov.window else 0.0 for p in period_names])
        if classes is not None:
            prov_k = class_counts(groups, families, np.isfinite(prov.scores.score))
            classes = np.where(prov.young, prov_k, classes)

    funds = package_results(
        codes,
        names,
        companies,
        types,
        flags,
        eligible,
        metrics,
        rule_weights,
        period_names,
        scores,
        qualitative,
        history,
        span.first,
        span.has_any,
        dates,
        labels,
        as_of_ts.date(),
        extra=ClassInfo(
            families=families,
            classes=classes,
            basis=prepared.source,
            codes=flags.codes,
            provisional=prov.young if prov is not None else None,
            provisional_labels={g: provisional_label(rubric, g) for g in labels},
            criteria_of={t: tuple(c["id"] for c in criteria_for(rubric, t)) for t in set(types.tolist())}
            if rubric.get("criteria_by_type")
            else {},
            amounts=amounts,
        ),
    )
    funds.sort(key=lambda f: input_order[f.fund_code])
    inputs = {
        "benchmark": bench_info,
        "risk_free": {"kind": "series"}
        if isinstance(risk_free, pd.Series)
        else {"kind": "constant", "annual_rate": float(risk_free)},
        "rubric": {"name": rubric["name"], "version": rubric["version"]},
        "calendar": {**prepared.info, **({"notes": [bench_info["note"]]} if "note" in bench_info else {})},
        "returns": {
            "basis_counts": {k: int(v) for k, v in pd.Series(prepared.source).value_counts().items()},
            "unadjusted_resets": resets,
            "allow_unadjusted": bool(allow_unadjusted),
        },
        "outliers": {"mode": outliers, "funds": len(found.episodes)},
        "share_classes": {
            "grouped": families is not None,
            "portfolios": len({f for f in families if f is not None}) if families is not None else None,
        },
    }
    return Evaluation(
        as_of=as_of_ts.date(), rubric=rubric, funds=funds, peers=peers, inputs=inputs
    )
