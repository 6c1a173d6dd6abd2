"""Do the grades mean anything? Forward returns after each as-of date, by grade, from a grade history.

Reads ``fund history``'s folder (``history.parquet``, ``levels.parquet``, ``summary.json``). Conventions
(also in ``domains/fund/README.md``):

* Forward return of a fund rated at as-of ``t``: total-return level at the as-of date ``horizon`` months
  later over its level at ``t``, minus 1. Levels are adjusted NAV / NAV + distributions, never raw 기준가격.
* Survivorship: a fund with no NAV in the end month stopped inside the horizon; it is kept, with its
  return up to its last NAV, and counted (``stopped``).
* Excess = forward return − the median forward return of the funds rated in the same 유형 on that date.
  Hit = excess > 0.
* Rank IC per date: Spearman of score against forward excess, over all rated funds of the date.
* Dates step by the history's frequency; ``horizon`` months = ``L`` steps; the Newey-West lag is ``L − 1``
  and the bootstrap block is ``L`` dates. "Non-overlapping" uses every ``L``-th date from the first.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.history.backtest_stats import (
    BOOT,
    MIN_DATES,
    block_ci,
    mean_summary,
    migration,
    newey_west_t,
    spearman,
)
from evaluator.domains.fund.types import DataError
from evaluator.methodology.rubric_scale import DEFAULT_SCALE, GradeScale, scale_of

GRADES = tuple(str(g) for g in DEFAULT_SCALE.best_first())
"""The default scale's grades, best first; a history on another scale reads its own (``grade_keys``)."""


def grade_keys(scale: GradeScale) -> tuple[str, ...]:
    """The scale's grades as the document's keys, best first: tables, statistics and plots follow this order."""
    return tuple(str(g) for g in scale.best_first())
CAVEAT_KO = (
    "유형과 설정액은 메타 파일의 현재 값입니다(시점 기준 값이 아님). 과거 기준일의 동류그룹·평가대상 여부는 "
    "당시와 다를 수 있어 결과가 낙관적으로 편향될 수 있습니다."
)


def load_history(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The history table, the levels and the summary of a ``fund history`` folder (clear errors)."""
    if not folder.is_dir():
        raise DataError(f"{folder} is not a folder; give the --out folder of `evaluator fund history`")
    need = ["history.parquet", "levels.parquet", "summary.json"]
    missing = [n for n in need if not (folder / n).is_file()]
    if missing:
        raise DataError(
            f"{folder} has no {', '.join(missing)}: it is not a `fund history` folder (or it is empty)"
        )
    try:
        table = pd.read_parquet(folder / "history.parquet")
        levels = pd.read_parquet(folder / "levels.parquet")
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"could not read the history in {folder}: {exc}") from exc
    if table.empty:
        raise DataError(f"{folder}/history.parquet has no rows")
    return table, levels, summary


def forward_frame(
    table: pd.DataFrame, levels: pd.DataFrame, horizon: int, freq: str, include_provisional: bool = False
) -> tuple[pd.DataFrame, list[str], int]:
    """One row per (as-of, rated fund) with a forward horizon inside the history; plus dates and steps.

    Provisional grades (가등급) rank young funds on another window: left out unless ``include_provisional``.
    """
    step = {"M": 1, "Q": 3}.get(freq)
    if step is None:
        raise DataError(f"the history's frequency {freq!r} is not M or Q")
    if horizon < 1 or horizon % step:
        raise DataError(
            f"--horizon {horizon} must be a positive multiple of {step} month(s) for this history"
        )
    steps = horizon // step
    dates = sorted(table["as_of"].astype(str).unique())
    if steps >= len(dates):
        raise DataError(
            f"--horizon {horizon} months is longer than the history ({len(dates)} as-of dates, "
            f"{dates[0]} … {dates[-1]}); grade a longer history or use a shorter horizon"
        )
    end_of = dict(zip(dates[:-steps], dates[steps:], strict=True))
    frame = table[["fund_code", "as_of", "status", "grade", "score", "type"]].copy()
    frame["as_of"] = frame["as_of"].astype(str)
    keep = (frame["status"] == "ok") & frame["grade"].notna() & frame["score"].notna()
    if "provisional" in table.columns and not include_provisional:
        keep &= ~table["provisional"].astype(bool)
    frame = frame[keep]
    frame = frame[frame["as_of"].isin(end_of)]
    frame["end"] = frame["as_of"].map(end_of)
    lv = levels.set_index(["fund_code", "as_of"])
    start = lv.reindex(pd.MultiIndex.from_arrays([frame["fund_code"], frame["as_of"]]))
    end = lv.reindex(pd.MultiIndex.from_arrays([frame["fund_code"], frame["end"]]))
    frame["forward"] = end["level"].to_numpy() / start["level"].to_numpy() - 1.0
    last = end["level_date"].astype("string").fillna("").to_numpy()
    frame["stopped"] = [str(d)[:7] < e[:7] for d, e in zip(last, frame["end"], strict=True)]
    frame = frame[np.isfinite(frame["forward"].to_numpy(dtype=float))]
    peer = frame.groupby(["as_of", "type"])["forward"].transform("median")
    frame["excess"] = frame["forward"] - peer
    later = table.set_index(["fund_code", "as_of"])
    nxt = later.reindex(pd.MultiIndex.from_arrays([frame["fund_code"], frame["end"]]))
    frame["grade_after"] = np.where(
        nxt["status"].to_numpy() == "ok", nxt["grade"].to_numpy(dtype=float), np.nan
    )
    frame["grade"] = frame["grade"].astype(int)
    return frame.reset_index(drop=True), dates[:-steps], steps


def _pooled_cis(
    sub: pd.DataFrame, dates: list[str], steps: int, reps: int
) -> tuple[list[float] | None, list[float] | None, list[float] | None, str | None]:
    """Block-bootstrap intervals of one grade's pooled mean excess, median excess and hit rate."""
    by_date = [sub["excess"].to_numpy()[sub["as_of"].to_numpy() == d] for d in dates]
    sums = np.array([v.sum() for v in by_date])
    counts = np.array([len(v) for v in by_date], dtype=float)
    hits = np.array([(v > 0).sum() for v in by_date], dtype=float)
    t = len(dates)

    def pooled(idx: np.ndarray, num: np.ndarray) -> float:
        n = counts[idx].sum()
        return float(num[idx].sum() / n) if n else float("nan")

    def median(idx: np.ndarray) -> float:
        return (
            float(np.median(np.concatenate([by_date[i] for i in idx]))) if counts[idx].sum() else float("nan")
        )

    mean_ci, why = block_ci(t, steps, lambda idx: pooled(idx, sums), reps=reps)
    hit_ci, _ = block_ci(t, steps, lambda idx: pooled(idx, hits), reps=reps)
    med_ci, _ = block_ci(t, steps, median, reps=reps)
    return mean_ci, med_ci, hit_ci, why


def _grade_block(
    frame: pd.DataFrame, dates: list[str], steps: int, reps: int, scale: GradeScale = DEFAULT_SCALE
) -> dict[str, Any]:
    """Per grade, best first: pooled mean / median excess and hit rate, each with a block-bootstrap CI over dates."""
    pos = {d: i for i, d in enumerate(dates)}
    out: dict[str, Any] = {}
    for g in grade_keys(scale):
        sub = frame[frame["grade"] == int(g)]
        if sub.empty:
            out[g] = {
                "observations": 0,
                "dates": 0,
                "mean_excess": None,
                "median_excess": None,
                "hit_rate": None,
                "reason": f"no fund was graded {scale.label(int(g))} with a forward return",
            }
            continue
        mean_ci, med_ci, hit_ci, why = _pooled_cis(sub, dates, steps, reps)
        out[g] = {
            "observations": len(sub),
            "dates": int(sub["as_of"].map(pos).nunique()),
            "stopped": int(sub["stopped"].sum()),
            "mean_excess": float(sub["excess"].mean()),
            "mean_excess_ci95": mean_ci,
            "median_excess": float(sub["excess"].median()),
            "median_excess_ci95": med_ci,
            "hit_rate": float((sub["excess"] > 0).mean()),
            "hit_rate_ci95": hit_ci,
            "reason": why,
        }
    return out


def _ic_block(frame: pd.DataFrame, dates: list[str], steps: int, reps: int) -> dict[str, Any]:
    per_date = []
    for d in dates:
        sub = frame[frame["as_of"] == d]
        per_date.append(spearman(sub["score"].to_numpy(dtype=float), sub["excess"].to_numpy(dtype=float)))
    ic = np.array([np.nan if v is None else v for v in per_date], dtype=float)
    overlapping = mean_summary(ic, lag=steps - 1, block=steps, reps=reps)
    sparse = ic[::steps]
    sparse = sparse[np.isfinite(sparse)]
    non_overlapping: dict[str, Any] = {"dates": len(sparse)}
    if len(sparse) < MIN_DATES:
        non_overlapping |= {
            "mean": None,
            "t_stat": None,
            "share_positive": None,
            "reason": f"{len(sparse)} non-overlapping dates, fewer than {MIN_DATES}",
        }
    else:
        non_overlapping |= {
            "mean": float(sparse.mean()),
            "t_stat": newey_west_t(sparse, 0),
            "share_positive": float((sparse > 0).mean()),
            "reason": None,
        }
    return {
        "by_date": [{"as_of": d, "ic": v} for d, v in zip(dates, per_date, strict=True)],
        **overlapping,
        "non_overlapping": non_overlapping,
    }


def _monotonicity(grades: dict[str, Any], scale: GradeScale = DEFAULT_SCALE) -> dict[str, Any]:
    """Does the mean excess fall from the best grade to the worst (by rank, whichever end is best)?"""
    keys = grade_keys(scale)
    means = [(scale.label(int(g)), grades[g]["mean_excess"]) for g in keys if grades[g]["mean_excess"] is not None]
    if len(means) < 2:
        return {"monotone": None, "verdict_ko": "등급별 표본이 부족해 단조성을 판단할 수 없습니다."}
    breaks = [
        f"{a} {x:+.2%} ≤ {b} {y:+.2%}" for (a, x), (b, y) in itertools.pairwise(means) if not x > y
    ]
    if not breaks:
        best, worst = scale.label(scale.best_grade()), scale.label(scale.worst_grade())
        return {
            "monotone": True,
            "verdict_ko": f"평균 초과수익률이 {best}에서 {worst}{_euro(worst)} 갈수록 단조 감소합니다.",
        }
    return {
        "monotone": False,
        "verdict_ko": "평균 초과수익률이 등급 순서대로 감소하지 않습니다: " + "; ".join(breaks) + ".",
    }


def company_frame(folder: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """The fund-date rows with the 운용사's grade and score (at the as-of and at the horizon's end) instead."""
    paths = [folder / "companies.parquet", folder / "company_funds.parquet"]
    if not all(p.is_file() for p in paths):
        raise DataError(f"{folder} has no companies.parquet: grade the history again with this version for --level company")
    companies = pd.read_parquet(paths[0])
    members = pd.read_parquet(paths[1]).set_index("fund_code")["company"]
    rated = companies[companies["status"] == "ok"].set_index(["company", "as_of"])
    out = frame.copy()
    out["company"] = members.reindex(out["fund_code"]).to_numpy()
    now = rated.reindex(pd.MultiIndex.from_arrays([out["company"], out["as_of"]]))
    after = rated.reindex(pd.MultiIndex.from_arrays([out["company"], out["end"]]))
    out["grade"] = now["grade"].astype(float).to_numpy()
    out["score"] = now["score"].to_numpy(dtype=float)
    out["grade_after"] = after["grade"].astype(float).to_numpy()
    out = out[np.isfinite(out["grade"].to_numpy())].copy()
    out["grade"] = out["grade"].astype(int)
    return out.reset_index(drop=True)


def _euro(word: str) -> str:
    """The particle 으로/로 after ``word`` (로 after a vowel or ㄹ; ★ reads 별, so 로)."""
    last = word[-1]
    if not "가" <= last <= "힣":
        return "로"
    tail = (ord(last) - ord("가")) % 28
    return "로" if tail in (0, 8) else "으로"


def analyse(
    frame: pd.DataFrame, dates: list[str], steps: int, *, reps: int = BOOT, scale: GradeScale = DEFAULT_SCALE
) -> dict[str, Any]:
    """Every statistic of one (sub)universe, grades best first on ``scale``; nulls carry a reason."""
    grades = _grade_block(frame, dates, steps, reps, scale)
    return {
        "observations": len(frame),
        "funds": int(frame["fund_code"].nunique()),
        **({"companies": int(frame["company"].nunique())} if "company" in frame.columns else {}),
        "stopped": int(frame["stopped"].sum()),
        "grades": grades,
        "ic": _ic_block(frame, dates, steps, reps),
        "migration": migration(
            frame["grade"].to_numpy(dtype=float), frame["grade_after"].to_numpy(dtype=float), grade_keys(scale)
        ),
        "monotonicity": _monotonicity(grades, scale),
    }


def backtest(
    folder: Path,
    horizon: int,
    *,
    by_type: bool = False,
    reps: int = BOOT,
    include_provisional: bool = False,
    level: str = "fund",
) -> dict[str, Any]:
    """The whole ``backtest.json`` document for a history folder.

    ``level="company"``: each fund-date takes its 운용사's grade and score at that date (funds of companies
    not rated then are left out), so the statistics say whether a company's grade predicts its funds'
    forward excess returns; migration follows the company's grade.
    """
    table, levels, summary = load_history(folder)
    scale = scale_of(summary.get("grade_scale"))
    freq = str(summary.get("freq", "M"))
    frame, dates, steps = forward_frame(table, levels, horizon, freq, include_provisional)
    if level == "company":
        frame = company_frame(folder, frame)
        scale = GradeScale(max(5, int(frame["grade"].max()) if not frame.empty else 5))  # 운용사 bands: 1 best
    elif level != "fund":
        raise DataError(f"--level must be fund or company, not {level!r}")
    if frame.empty:
        raise DataError(f"no rated {level} has a fund with a forward return inside the history")
    doc: dict[str, Any] = {
        "schema_version": 1,
        "kind": "fund_backtest",
        "level": level,
        "horizon_months": horizon,
        "freq": freq,
        "steps_per_horizon": steps,
        "as_of_dates": dates,
        "rubric": summary.get("rubric"),
        "grade_scale": scale.spec(),
        "grade_labels": {g: scale.label(int(g)) for g in grade_keys(scale)},
        "method": {
            "forward_return": "total-return level (adjusted NAV or NAV + distributions) at the as-of date horizon months later / level at t − 1",
            "excess": "forward return − median forward return of the rated funds of the same 유형 on that date",
            "ic": "Spearman rank correlation of score with forward excess, per date",
            "newey_west_lag": steps - 1,
            "bootstrap": {
                "kind": "moving block over dates",
                "block_dates": steps,
                "replicates": reps,
                "interval": "95% percentile",
            },
            "survivorship": "funds without a NAV in the end month are kept with their return to the last NAV (counted as stopped)",
            "provisional": "provisional grades (가등급) included" if include_provisional else "provisional grades (가등급) excluded",
        },
        "caveat_ko": CAVEAT_KO,
        "all": analyse(frame, dates, steps, reps=reps, scale=scale),
        "by_type": None,
    }
    if by_type:
        doc["by_type"] = {
            str(t): analyse(sub.reset_index(drop=True), dates, steps, reps=reps, scale=scale)
            for t, sub in frame.groupby("type", sort=True)
        }
    return doc
