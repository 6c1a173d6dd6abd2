"""NAV typos at the ends of a series: a first price the dates after it deny, a last jump nothing confirms.

An outlier *episode* (:mod:`~evaluator.domains.fund.engine.outliers`) is seen because the level comes
back. At a series' ends it cannot: a ×10 first price has no day before it, and a ×10 last price (or last
few prices) has not come back by the as-of date. Graded, either gives a return of hundreds of percent and
moves every peer's percentile, so neither is graded by default:

* **first date** (row f, the fund's first level): the step to row f + 1 is large (≥ ``MIN_JUMP``), not
  shared by its benchmark or 유형 median that day, and ≥ ``Z`` robust standard deviations of the fund's
  own returns over the ``WINDOW`` dates *after* it (at least ``MIN_OBS``): the first price is denied by
  every price after it.
* **last dates**: a jump in the last ``MAX_ROWS`` dates that has not come back and stays on the jumped
  side, passing the episode tests on the jump alone (σ from the dates before it, the benchmark and 유형
  median on the same date). Its benchmark and 유형 do not share it and it is far outside the fund's
  normal daily spread, so it cannot be confirmed as real or as a typo.

Either is an ``error`` with the reason code ``nav_outlier_unconfirmed`` (``--outliers error``, the
default); ``repair`` drops the price(s): the last good level is carried over the last dates (up to
``FILL_LIMIT``), a bad first level is read as the next date's (the fund's first day is a missing one);
``keep`` grades it with a warning. Every rule looks only at rows up to the evaluated date, so a grade
history and the single-date engine find the same thing on every date.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.calendar import FILL_LIMIT
from evaluator.domains.fund.engine.checks import FundFlags
from evaluator.domains.fund.engine.outliers import (
    BACK,
    HOLD,
    MAX_ROWS,
    MIN_JUMP,
    MIN_OBS,
    WINDOW,
    Z,
    _excess,
    _market,
    _robust_sigma,
)

NAV_OUTLIER_UNCONFIRMED = "nav_outlier_unconfirmed"
MIN_R2 = 0.5
"""A fund's gearing on its market is used only where its returns follow the market this closely."""
MAX_BETA = 3.0


@dataclass
class EndTypos:
    """Per fund column: the row of an unconfirmed last-dates jump, and of a denied first price."""

    last: dict[int, int] = field(default_factory=dict)
    first: dict[int, int] = field(default_factory=dict)

    def funds(self) -> set[int]:
        return set(self.last) | set(self.first)

    def rows(self, i: int) -> set[int]:
        """Rows the reset detector must not read as a 결산 reset (the typo and the step out of it)."""
        out: set[int] = set()
        if i in self.first:
            out |= {self.first[i], self.first[i] + 1}
        if i in self.last:
            out |= {self.last[i]}
        return out


def find_end_typos(
    levels: np.ndarray,
    groups: np.ndarray,
    bench_levels: np.ndarray | None = None,
    bench_of_fund: np.ndarray | None = None,
    skip: set[int] | None = None,
    first_rows: np.ndarray | None = None,
) -> EndTypos:
    """The end-of-series typos of ``levels`` (dates × funds, the last row is the evaluated date).

    ``first_rows``: each fund's first finite row if known (a grade history passes it for every date).
    """
    skip = skip or set()
    last = _last_jumps(levels, groups, bench_levels, bench_of_fund)
    first = _first_prices(levels, groups, bench_levels, bench_of_fund, first_rows)
    return EndTypos(
        {i: r for i, r in last.items() if i not in skip}, {i: r for i, r in first.items() if i not in skip}
    )


def _last_jumps(
    levels: np.ndarray, groups: np.ndarray, bench_levels: np.ndarray | None, bench_of_fund: np.ndarray | None
) -> dict[int, int]:
    """Jumps in the last ``MAX_ROWS`` rows that have not come back, by the episode tests on the jump alone."""
    n = levels.shape[0]
    lo = max(1, n - MAX_ROWS)
    if n < 2:
        return {}
    with np.errstate(all="ignore"):
        x = np.log(levels[lo - 1 :])
        step = np.diff(x, axis=0)
    r, cols = np.nonzero(np.abs(np.nan_to_num(step)) >= MIN_JUMP)
    if r.size == 0:
        return {}
    rows = r + lo
    found: dict[int, int] = {}
    with np.errstate(all="ignore"):
        start = np.log(levels[rows - 1, cols])
        jump = np.log(levels[rows, cols]) - start
    keep = []
    for k, (s, c) in enumerate(zip(rows.tolist(), cols.tolist(), strict=True)):
        with np.errstate(all="ignore"):
            path = np.log(levels[s:, c]) - start[k]
        size = abs(jump[k])
        back = np.abs(path) <= BACK * size
        held = (np.sign(path) == np.sign(jump[k])) & (np.abs(path) >= HOLD * size)
        keep.append(bool(not back.any() and held.all()))
    ok = np.array(keep)
    rows, cols, jump = rows[ok], cols[ok], jump[ok]
    if rows.size == 0:
        return {}
    sigma = _robust_sigma(levels, rows, cols)
    b, p = _market(levels, rows, cols, groups, bench_levels, bench_of_fund)
    idx = rows[:, None] + np.arange(-WINDOW - 1, 0)[None, :]
    ex = _geared_excess(levels, cols, idx, jump, b, p, groups, bench_levels, bench_of_fund)
    hit = (
        np.isfinite(sigma) & (np.abs(ex) >= np.maximum(MIN_JUMP, Z * sigma)) & (np.sign(ex) == np.sign(jump))
    )
    for s, c in zip(rows[hit].tolist(), cols[hit].tolist(), strict=True):
        found.setdefault(int(c), int(s))  # the earliest unconfirmed jump of the fund
    return found


def _first_prices(
    levels: np.ndarray,
    groups: np.ndarray,
    bench_levels: np.ndarray | None,
    bench_of_fund: np.ndarray | None,
    first_rows: np.ndarray | None = None,
) -> dict[int, int]:
    """Funds whose first level is denied by the (up to ``WINDOW``) dates after it."""
    n = levels.shape[0]
    if first_rows is None:
        finite = np.isfinite(levels)
        first = np.where(finite.any(axis=0), finite.argmax(axis=0), n)
    else:
        first = np.asarray(first_rows)
    has = first < n
    cand = np.flatnonzero(has & (first + 1 < n))
    if cand.size == 0:
        return {}
    s = first[cand]
    with np.errstate(all="ignore"):
        step = np.log(levels[s + 1, cand] / levels[s, cand])
    big = np.isfinite(step) & (np.abs(step) >= MIN_JUMP)
    cand, s, step = cand[big], s[big], step[big]
    if cand.size == 0:
        return {}
    # σ of the returns after the step: the window of the WINDOW + 1 levels from row s + 1 on, read backwards
    ahead = np.arange(1, WINDOW + 2)
    idx = s[:, None] + ahead[None, :]
    with np.errstate(all="ignore"):
        window = np.where(idx < n, levels[np.minimum(idx, n - 1), cand[:, None]], np.nan)
        r = np.diff(np.log(window), axis=1)
    count = np.isfinite(r).sum(axis=1)
    med = np.array([np.median(v[np.isfinite(v)]) if np.isfinite(v).any() else np.nan for v in r])
    mad = np.array(
        [
            np.median(np.abs(v[np.isfinite(v)] - m)) if np.isfinite(v).any() else np.nan
            for v, m in zip(r, med, strict=True)
        ]
    )
    sigma = np.where(count >= MIN_OBS, 1.4826 * mad, np.nan)
    b, p = _market(levels, s + 1, cand, groups, bench_levels, bench_of_fund)
    ex = _geared_excess(levels, cand, idx, step, b, p, groups, bench_levels, bench_of_fund)
    hit = (
        np.isfinite(sigma) & (np.abs(ex) >= np.maximum(MIN_JUMP, Z * sigma)) & (np.sign(ex) == np.sign(step))
    )
    return {int(c): int(row) for c, row in zip(cand[hit].tolist(), s[hit].tolist(), strict=True)}


def _geared_excess(
    levels: np.ndarray,
    cols: np.ndarray,
    idx: np.ndarray,
    step: np.ndarray,
    bench: np.ndarray,
    peers: np.ndarray,
    groups: np.ndarray,
    bench_levels: np.ndarray | None,
    bench_of_fund: np.ndarray | None,
) -> np.ndarray:
    """The step less whichever market move explains it best: the benchmark's or the 유형 median's move, or
    that move times the fund's gearing (a 2× or −2× fund moves twice its market, or against it).

    The gearing β is the least-squares slope of the fund's returns on its market's over the window rows
    ``idx`` (the dates before a last jump, after a first price), used only where the fit is close
    (R² ≥ ``MIN_R2``) and clipped to ±``MAX_BETA``: a typo (×10 is a log step of 2.3) is never explained.
    """
    out = _excess(step, bench, peers)
    n = levels.shape[0]
    for k, c in enumerate(cols.tolist()):
        w = idx[k][(idx[k] >= 0) & (idx[k] < n)]
        b = int(bench_of_fund[c]) if bench_levels is not None and bench_of_fund is not None else -1
        with np.errstate(all="ignore"):
            fund = np.diff(np.log(levels[w, c]))
            if b >= 0:
                market = np.diff(np.log(bench_levels[w, b]))  # type: ignore[index]
                today = bench[k]
            else:
                members = np.flatnonzero(groups == groups[c])
                if members.size < 3:
                    continue
                market = np.nanmedian(np.diff(np.log(levels[np.ix_(w, members)]), axis=0), axis=1)
                today = peers[k]
        ok = np.isfinite(fund) & np.isfinite(market)
        if ok.sum() < MIN_OBS or not np.isfinite(today):
            continue
        f, m = fund[ok], market[ok]
        var = float(np.var(m))
        if var <= 0:
            continue
        beta = float(np.cov(f, m, bias=True)[0, 1] / var)
        resid = f - f.mean() - beta * (m - m.mean())
        total = float(np.var(f))
        if total <= 0 or 1 - float(np.var(resid)) / total < MIN_R2:
            continue
        geared = step[k] - float(np.clip(beta, -MAX_BETA, MAX_BETA)) * today
        if abs(geared) < abs(out[k]):
            out[k] = geared
    return out


def _price_text(dates: pd.DatetimeIndex, prices: np.ndarray, row: int, other: int) -> str:
    p, q = prices[row], prices[other]
    text = f"{dates[row]:%Y-%m-%d} 기준가격 {p:,.2f}" if np.isfinite(p) else f"{dates[row]:%Y-%m-%d}"
    if np.isfinite(p) and np.isfinite(q) and q > 0:
        word = "전일" if other < row else "다음 날"
        text += f" ({word} {dates[other]:%Y-%m-%d} {q:,.2f} 대비 {p / q - 1:+.0%})"
    return text


def describe_end(found: EndTypos, i: int, dates: pd.DatetimeIndex, prices: np.ndarray) -> str:
    """Korean detail: the date(s), the price and the jump."""
    parts = []
    if i in found.first:
        r = found.first[i]
        parts.append(f"첫 기준일 {_price_text(dates, prices, r, r + 1)}이 이후 기준가격과 맞지 않음")
    if i in found.last:
        r = found.last[i]
        parts.append(
            f"{_price_text(dates, prices, r, r - 1)}의 급변이 벤치마크·같은 유형 펀드와 공유되지 않고 "
            "펀드의 평소 변동성을 크게 벗어났으며 평가기준일까지 돌아오지 않음"
        )
    return "; ".join(parts)


def flag_end_typos(
    levels: np.ndarray,
    prices: dict[int, np.ndarray],
    dates: pd.DatetimeIndex,
    found: EndTypos,
    flags: FundFlags,
    mode: str = "error",
) -> dict[int, str]:
    """Turn end-of-series typos into reasons per ``mode``; ``levels`` changed in place on ``repair``.

    Returns per fund what was done: ``refused``, ``repaired`` or ``kept``.
    """
    done: dict[int, str] = {}
    n = levels.shape[0]
    for i in sorted(found.funds()):
        detail = describe_end(found, i, dates, prices.get(i, levels[:, i]))
        last = found.last.get(i)
        if mode == "keep":
            flags.warn(i, f"확인되지 않은 기준가격 급변을 그대로 평가했습니다 (--outliers keep): {detail}")
            done[i] = "kept"
            continue
        if mode == "repair" and (last is None or n - last <= FILL_LIMIT):
            if last is not None:
                levels[last:, i] = levels[last - 1, i]
            if i in found.first:
                levels[found.first[i], i] = levels[found.first[i] + 1, i]
            flags.warn(
                i,
                f"확인되지 않은 기준가격을 버리고 그 전후 기준가격으로 평가했습니다 (--outliers repair): {detail}",
            )
            done[i] = "repaired"
            continue
        longer = f" (연속 {FILL_LIMIT}일을 넘어 이어 쓸 수 없습니다)" if mode == "repair" else ""
        flags.error(
            i,
            f"입력 오류인지 실제 움직임인지 확인할 수 없는 기준가격이 있어 평가하지 않았습니다{longer}: {detail}; "
            "자료를 확인해 고치거나 --outliers repair(그 기준가격을 버리고 평가) 또는 --outliers keep(그대로 "
            "평가)을 지정하십시오",
        )
        flags.codes.setdefault(i, []).append(NAV_OUTLIER_UNCONFIRMED)
        done[i] = "refused"
    return done


def end_prices(
    navs: pd.DataFrame, codes: list[str], dates: pd.DatetimeIndex, found: EndTypos
) -> dict[int, np.ndarray]:
    """The 기준가격 of each fund with an end typo, on the calendar rows (for its reason)."""
    return {
        i: navs[codes[i]].reindex(dates).to_numpy(dtype=float)
        for i in found.funds()
        if codes[i] in navs.columns
    }
