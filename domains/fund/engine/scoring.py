"""From metrics to grades, vectorised: metric percentiles → criterion scores → composite → peer percentile → band.

Conventions (also in ``domains/fund/README.md``):

* Metric score (0–100): the fund's percentile rank for that metric and window among the eligible funds of
  its peer group (유형) that have a value: ``100 · (rank − 1) / (count − 1)`` with the best value ranked
  highest (ties share the average rank); a lone fund scores 50. Direction comes from the metric
  vocabulary (e.g. lower volatility is better, a max drawdown closer to 0 is better).
* Criterion score per window: the rubric's metric weights over the metrics that have a value (weights
  re-normalised). Criterion score: the rubric's period weights for the fund's history (3y only under 5
  years; 60/40 for 5–10; 50/30/20 from 10) over the windows that have a value, re-normalised again.
* Quantitative score: criterion weights over criteria with a value (e.g. no benchmark → no 벤치마크 대비).
* Qualitative score (optional): analyst scores 1–5 mapped to 0–100 (``(s − 1) · 25``), weighted; when a
  fund has any, final score = (1 − q)·quantitative + q·qualitative with q the rubric's qualitative weight.
* Peer percentile: "top percent" — ``100 · rank / count`` with rank 1 the best score (ties share the best
  rank), so 10 means the top 10 % of the peer group. Grade: the first band whose cumulative share reaches
  it (1등급 ≤ 10, 2등급 ≤ 32.5, 3등급 ≤ 67.5, 4등급 ≤ 90, else 5등급 under the sample rubric).
* Share classes (when META names each class's portfolio): only this position counts portfolios. Each
  class weighs ``1/k`` when its portfolio has k classes in the peer group, and the top percent is
  ``100 · (weight of funds scoring strictly higher + own weight) / total weight``. Tie rule: funds with
  the same score do not count each other (as above: ties share the best position). With every weight 1
  this is exactly the unweighted rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.methodology.rubric import METRICS, grade_cutoffs
from evaluator.methodology.rubric_scale import grade_scale

_EPS = 1e-9


@dataclass(frozen=True)
class Scores:
    """Per-fund arrays (NaN / −1 where not scored)."""

    criteria: dict[str, np.ndarray]
    quantitative: np.ndarray
    qualitative: np.ndarray
    score: np.ndarray
    peer_percentile: np.ndarray
    peer_size: np.ndarray
    grade: np.ndarray
    peer_bottom: np.ndarray | None = None
    """The "하위" share: 100 − top + the fund's own share of the group's weight (1/size unweighted, (1/k) /
    portfolios with share classes), so the last of a group is 하위 (own share), by the same weights."""


def group_codes(groups: np.ndarray) -> np.ndarray:
    """Integer peer-group codes (−1 where a fund has no group), to factorize a scorer's groups only once."""
    return pd.factorize(np.asarray(groups, dtype=object), use_na_sentinel=True)[0]


def group_order(codes: np.ndarray) -> np.ndarray:
    """The funds by group code (each group's funds in their order), for :func:`group_percentile`'s ``order``."""
    return np.argsort(np.asarray(codes), kind="stable")


def group_percentile(
    values: np.ndarray,
    groups: np.ndarray,
    mask: np.ndarray,
    higher_is_better: bool,
    *,
    codes: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Percentile rank (0 worst … 100 best) within each group among masked funds with a value.

    The ranks are pandas' ``groupby(...).rank(method="average")``, computed with numpy sorts (the
    scorer calls this for every metric and window, and pandas' per-call overhead was most of the cost):
    tied values share the mean of their 1-based positions, as the integer sum of the positions divided by
    the tie count, so every value is the same float pandas gives. ``codes``: ``group_codes(groups)``,
    when the caller ranks many metrics over the same groups; ``order``: ``group_order(codes)`` with it,
    so each call sorts every group's values on their own (a few large groups: a grade history's stacked
    dates) instead of sorting all values and then the group codes.
    """
    values = np.asarray(values, dtype=float)
    out = np.full(values.shape, np.nan)
    ok = np.asarray(mask, dtype=bool) & np.isfinite(values)
    grouped = order is not None and codes is not None
    idx = np.asarray(order)[ok[order]] if grouped else np.flatnonzero(ok)
    if idx.size == 0:
        return out
    code = group_codes(np.asarray(groups, dtype=object)[idx]) if codes is None else np.asarray(codes)[idx]
    keyed = code >= 0
    out[idx[~keyed]] = 50.0  # a fund without a group key: no peers (pandas' count is NaN there)
    idx, code = idx[keyed], code[keyed]
    if idx.size == 0:
        return out
    v = values[idx] if higher_is_better else -values[idx]
    starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if grouped else None
    if starts is not None and starts.size * 64 <= idx.size:  # in group order: sort inside each group
        order_in = np.empty(idx.size, dtype=np.intp)
        for lo, hi in zip(starts.tolist(), [*starts[1:].tolist(), idx.size], strict=True):
            order_in[lo:hi] = np.argsort(v[lo:hi]) + lo
    else:
        # by group, then value: a value sort, then a stable sort of the small group codes (a radix sort
        # for int16), about twice as fast as np.lexsort; the order inside a tie differs, the ranks do not
        order_in = np.argsort(v)
        small = code.astype(np.int16) if code.max() < np.iinfo(np.int16).max else code
        order_in = order_in[np.argsort(small[order_in], kind="stable")]
    v, code, idx = v[order_in], code[order_in], idx[order_in]
    m = idx.size
    group_start = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
    count = np.diff(np.r_[group_start, m])
    start_of = np.repeat(group_start, count)
    run_start = np.flatnonzero(np.r_[True, (code[1:] != code[:-1]) | (v[1:] != v[:-1])])
    dups = np.diff(np.r_[run_start, m])
    first = run_start - start_of[run_start] + 1  # 1-based positions within the group
    last = first + dups - 1
    rank = np.repeat(((first + last) * dups // 2).astype(float) / dups.astype(float), dups)
    n = np.repeat(count, count).astype(float)
    with np.errstate(all="ignore"):
        out[idx] = np.where(n > 1, (rank - 1.0) / (n - 1.0) * 100.0, 50.0)
    return out


def weighted_mean(
    columns: Sequence[np.ndarray], weights: Sequence[float] | Sequence[np.ndarray]
) -> np.ndarray:
    """Row-wise weighted mean over the columns that have a value (weights re-normalised); NaN if none do."""
    num = np.zeros_like(columns[0], dtype=float)
    den = np.zeros_like(columns[0], dtype=float)
    for col, w in zip(columns, weights, strict=True):
        ok = np.isfinite(col)
        wv = np.broadcast_to(np.asarray(w, dtype=float), col.shape)
        num += np.where(ok, col * wv, 0.0)
        den += np.where(ok, wv, 0.0)
    with np.errstate(all="ignore"):
        return np.where(den > 0, num / den, np.nan)


def top_percent(score: np.ndarray, groups: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(top percent within the group, group size) among masked funds with a score."""
    v = np.where(mask & np.isfinite(score), score, np.nan)
    frame = pd.DataFrame({"g": groups, "v": v})
    by = frame.groupby("g", sort=False)["v"]
    rank = by.rank(method="min", ascending=False).to_numpy(dtype=float)
    count = by.transform("count").to_numpy(dtype=float)
    ok = np.isfinite(v)
    return np.where(ok, rank / count * 100.0, np.nan), np.where(ok, count, 0).astype(int)


def family_codes(meta: pd.DataFrame, codes: list[str]) -> np.ndarray | None:
    """Each fund's share-class portfolio (대표펀드코드 / 종류형대표코드), or None when META has no such column.

    A fund whose portfolio code is blank counts as its own one-class portfolio (the loader warns).
    """
    if "family_code" not in meta.columns:
        return None
    raw = meta["family_code"].reindex(codes).to_numpy(dtype=object)
    out = np.empty(len(codes), dtype=object)
    for i, (f, c) in enumerate(zip(raw, codes, strict=True)):
        text = "" if f is None or (isinstance(f, float) and np.isnan(f)) else str(f).strip()
        out[i] = text or c
    return out


def class_counts(groups: np.ndarray, families: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per fund: how many classes of its portfolio are in its peer group among masked funds (0 if unmasked).

    Integer counts of the (group, portfolio) pairs with one ``bincount`` (a pandas group-by per call was
    most of its cost, and the grade history calls it once per batch of dates). A missing key counts as a
    key of its own (pandas' group-by would drop it and leave the count undefined).
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.size:
        return np.zeros(0, dtype=int)
    g = pd.factorize(np.asarray(groups, dtype=object), use_na_sentinel=False)[0]
    f = pd.factorize(np.asarray(families, dtype=object), use_na_sentinel=False)[0]
    pair = np.unique(g.astype(np.int64) * (int(f.max()) + 1) + f, return_inverse=True)[1].ravel()
    k = np.bincount(pair[mask], minlength=int(pair.max()) + 1)[pair]
    return np.where(mask, k, 0)


def weighted_top_percent(
    score: np.ndarray, groups: np.ndarray, mask: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Top percent with per-fund weights: (weight strictly above + own weight) / group weight, and group size."""
    ok = mask & np.isfinite(score)
    idx = np.flatnonzero(ok)
    top = np.full(len(score), np.nan)
    size = np.zeros(len(score), dtype=int)
    if idx.size == 0:
        return top, size
    frame = pd.DataFrame({"g": groups[idx], "v": score[idx], "w": weights[idx]}, index=idx)
    frame = frame.sort_values(["g", "v"], ascending=[True, False], kind="stable")
    by_group = frame.groupby("g", sort=False)
    above = by_group["w"].cumsum() - frame["w"]
    frame["above"] = above.groupby([frame["g"], frame["v"]], sort=False).transform("min")
    total = by_group["w"].transform("sum")
    # the last fund's (above + own) equals the group total only up to rounding of fractional class weights:
    # a share is at most 100 %, never 100.00000000000003 (which the report schema rightly refuses)
    frame["top"] = np.minimum((frame["above"] + frame["w"]) / total * 100.0, 100.0)
    top[frame.index.to_numpy()] = frame["top"].to_numpy()
    size[frame.index.to_numpy()] = by_group["w"].transform("size").to_numpy()
    return top, size


def assign_grades(top: np.ndarray, rubric: Mapping[str, Any]) -> np.ndarray:
    """Grade per fund from its top percent (−1 where it has none)."""
    grade = np.full(top.shape, -1, dtype=int)
    unassigned = np.isfinite(top)
    for g, bound in grade_cutoffs(rubric):
        hit = unassigned & (top <= bound + _EPS)
        grade[hit] = g
        unassigned &= ~hit
    grade[unassigned] = grade_cutoffs(rubric)[-1][0]
    return grade


def score_funds(
    metrics: Mapping[str, Mapping[str, np.ndarray]],
    groups: np.ndarray,
    eligible: np.ndarray,
    period_weights: Mapping[str, np.ndarray],
    rubric: Mapping[str, Any],
    qualitative: Mapping[str, np.ndarray] | None = None,
    *,
    families: np.ndarray | None = None,
) -> Scores:
    """Score and grade every eligible fund against its peer group.

    ``period_weights``: per window, the weight each fund gives it (0 when its history rule does not use it).
    ``qualitative``: per qualitative criterion id, analyst scores 1–5 (NaN where none). ``families``: each
    fund's share-class portfolio; when given, the top percent weighs each class 1/k (see module notes).
    """
    funds = len(groups)
    periods = [p for p in period_weights if p in metrics]
    codes = group_codes(groups)
    order = group_order(codes)
    pct: dict[tuple[str, str], np.ndarray] = {}
    for crit in rubric["criteria"]:
        for m in crit["metrics"]:
            name = m["metric"]
            for p in periods:
                if (p, name) not in pct:
                    higher = METRICS[name].direction == "higher"
                    pct[(p, name)] = group_percentile(
                        metrics[p][name], groups, eligible, higher, codes=codes, order=order
                    )
    criteria: dict[str, np.ndarray] = {}
    for crit in rubric["criteria"]:
        per_period = [
            weighted_mean(
                [pct[(p, m["metric"])] for m in crit["metrics"]],
                [float(m["weight"]) for m in crit["metrics"]],
            )
            for p in periods
        ]
        weights = [np.where(eligible, period_weights[p], 0.0) for p in periods]
        criteria[crit["id"]] = weighted_mean(per_period, weights) if periods else np.full(funds, np.nan)
    quant = weighted_mean(
        [criteria[c["id"]] for c in rubric["criteria"]], [float(c["weight"]) for c in rubric["criteria"]]
    )

    qual = np.full(funds, np.nan)
    spec = rubric.get("qualitative")
    if spec and qualitative:
        cols = [
            (np.asarray(qualitative[c["id"]], dtype=float) - 1.0) * 25.0
            for c in spec["criteria"]
            if c["id"] in qualitative
        ]
        ws = [float(c["weight"]) for c in spec["criteria"] if c["id"] in qualitative]
        if cols:
            qual = np.where(eligible, weighted_mean(cols, ws), np.nan)
    share = float(spec["weight"]) / 100.0 if spec else 0.0
    score = np.where(np.isfinite(qual), (1.0 - share) * quant + share * qual, quant)
    score = np.where(eligible, score, np.nan)
    if families is None:
        top, size = top_percent(score, groups, eligible)
        with np.errstate(all="ignore"):
            bottom = 100.0 - top + np.where(size > 0, 100.0 / np.maximum(size, 1), 0.0)
    else:
        rated = eligible & np.isfinite(score)
        k = class_counts(groups, families, rated)
        w = np.where(rated, 1.0 / np.maximum(k, 1), 0.0)
        top, size = weighted_top_percent(score, groups, rated, w)
        total = pd.Series(w).groupby(pd.Series(groups, dtype=object)).transform("sum").to_numpy(dtype=float)
        with np.errstate(all="ignore"):
            bottom = np.where(rated & (total > 0), 100.0 - top + 100.0 * w / total, np.nan)
    return Scores(
        criteria=criteria,
        quantitative=quant,
        qualitative=qual,
        score=score,
        peer_percentile=top,
        peer_size=size,
        grade=assign_grades(top, rubric),
        peer_bottom=bottom,
    )


def peer_context(
    metrics: Mapping[str, Mapping[str, np.ndarray]],
    groups: np.ndarray,
    rated: np.ndarray,
    score: np.ndarray,
    grade: np.ndarray,
    rubric: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per 유형: how many funds are rated, the grade counts, and each metric's mean/median/quartiles per window.

    Figures use rated funds only; a window with no values is left out. This is what a fund's evaluation
    is compared against (and what the GRPO prompts show as peer context).
    """
    out: dict[str, dict[str, Any]] = {}
    codes = pd.Series(groups)
    scale = grade_scale(rubric).best_first()
    for g in sorted({str(x) for x in groups[rated]}):
        sel = rated & (codes == g).to_numpy()
        entry: dict[str, Any] = {
            "funds_rated": int(sel.sum()),
            "grade_counts": {str(k): int(((grade == k) & sel).sum()) for k in scale},
            "score": _stats(score[sel]),
            "metrics": {},
        }
        for p, by_metric in metrics.items():
            stats = {m: _stats(v[sel]) for m, v in by_metric.items()}
            stats = {m: s for m, s in stats.items() if s is not None}
            if stats:
                entry["metrics"][p] = stats
        out[g] = entry
    return out


def _stats(values: np.ndarray) -> dict[str, float | int] | None:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return None
    q25, q50, q75 = np.percentile(v, [25, 50, 75])
    return {
        "count": int(v.size),
        "mean": float(v.mean()),
        "median": float(q50),
        "p25": float(q25),
        "p75": float(q75),
    }
