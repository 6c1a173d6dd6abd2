"""What the engine reads besides the NAVs, as per-fund arrays in engine fund order: META columns (유형, names,
설정액, qualitative scores), the benchmark matrix on the market calendar, and the risk-free rates.

The single-date engine and the grade history's one-time preparation both build their inputs with these,
so a history date reads META exactly as ``fund evaluate --as-of`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.calendar import Aligned, align_benchmark
from evaluator.domains.fund.engine.checks import FundFlags


def fund_codes(navs: pd.DataFrame, issues: Mapping[str, Sequence[str]]) -> list[str]:
    """The NAV matrix's fund codes, then those only a loader's issues name (funds with only broken rows)."""
    codes = [str(c) for c in navs.columns]
    known = set(codes)
    return codes + [str(c) for c in issues if str(c) not in known]


def meta_by_code(meta: pd.DataFrame | None) -> pd.DataFrame:
    """META indexed by the fund code as text, the last row winning when a code is listed twice."""
    meta = meta if meta is not None else pd.DataFrame(index=pd.Index([], name="fund_code"))
    meta = meta.copy()
    meta.index = meta.index.astype(str)
    return meta[~meta.index.duplicated(keep="last")]


def set_amounts(meta: pd.DataFrame, codes: list[str]) -> np.ndarray:
    """설정액 per fund in KRW, else 순자산 (NaN when META has neither)."""
    amounts = numeric_array(meta_column(meta, codes, "set_amount"))
    return np.where(np.isfinite(amounts), amounts, numeric_array(meta_column(meta, codes, "net_assets")))


def risk_free_rates(risk_free: float | pd.Series, dates: pd.DatetimeIndex) -> np.ndarray:
    """The annual risk-free rate on each calendar date: a constant, or a series carried forward (and back
    before its first date)."""
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
    return {
        "ignored_dates": aligned.extra,
        "filled_dates": aligned.filled,
        **({"note": note} if note else {}),
    }


def meta_column(meta: pd.DataFrame, codes: list[str], *names: str) -> np.ndarray:
    """The first of ``names`` META has, per fund (None where it has none of them)."""
    for name in names:
        if name in meta.columns:
            return meta[name].reindex(codes).to_numpy(dtype=object)
    return np.full(len(codes), None, dtype=object)


def clean_meta_text(values: np.ndarray) -> np.ndarray:
    """Text cells stripped; blank and NaN cells as None."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = (
            None
            if v is None or (isinstance(v, float) and np.isnan(v)) or str(v).strip() == ""
            else str(v).strip()
        )
    return out


def numeric_array(values: np.ndarray) -> np.ndarray:
    """Numbers per cell, NaN where a cell is not one."""
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


def qualitative_scores(
    rubric: Mapping[str, Any], meta: pd.DataFrame, codes: list[str], flags: FundFlags
) -> dict[str, np.ndarray]:
    """The rubric's qualitative criteria read from META (1–5; anything else puts the fund in error)."""
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
