"""NAV outliers: a price that jumps far away and comes back (a typo), found before anything is graded.

Vendor files contain prices typed wrong for a day or a few: a decimal slip (×10, ÷10, ×100) or a digit
typed twice. Graded as they are, one such day gives a bond fund a volatility of several hundred percent
and moves every peer's percentile. An *episode* starts on row s and ends on the row e where the level is
back (all conditions must hold; x = log level, J = x_s − x_{s−1}):

* the jump is large: |J| ≥ ``MIN_JUMP`` (about ±20 %; the cheap screen over the whole matrix);
* it comes back within ``MAX_ROWS`` market dates: e is the first row after s with |x_e − x_{s−1}| ≤
  ``BACK`` · |J|, and every row in between stays on the jumped side, at least ``HOLD`` · |J| away;
* both the jump and the return step are far outside the fund's own volatility and not shared by its
  market: |step − m| ≥ max(``MIN_JUMP``, ``Z`` · σ), where m is the same day's log return of the fund's
  benchmark or of its peer group's median (whichever is closer to the step), and σ is a robust spread
  (1.4826 · median absolute deviation) of the fund's last ``WINDOW`` daily log returns before s (at least
  ``MIN_OBS`` of them; with fewer the episode is not judged).

Every rule looks only at rows up to e (and σ only before s), so an episode is found the same way by any
evaluation whose data reach e: a grade history sees it from that date on. Only episodes touching the
longest window (``PERIODS``' 10 years before the as-of date) count, so an old typo stops mattering once
no window contains it. Genuine moves are left alone: a crash shared with the benchmark or the peers, a
drop that stays down (a 결산 reset: the reset detector's job), a leveraged fund whose ordinary days are
large. Limits (``domains/fund/README.md``): a typo smaller than about 20 %, one lasting more than
``MAX_ROWS`` dates or one in a fund's first ``MIN_OBS`` dates is not seen here; a jump in the last
``MAX_ROWS`` dates that has not come back yet, and a fund's first price, are the end-of-series checks'
(:mod:`~evaluator.domains.fund.engine.series_ends`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluator.domains.fund.engine.calendar import FILL_LIMIT
from evaluator.domains.fund.engine.checks import FundFlags
from evaluator.domains.fund.engine.metrics import window_start_row

NAV_OUTLIER = "nav_outlier"
MODES = ("error", "repair", "keep")
MIN_JUMP = float(np.log(1.2))
"""Smallest jump (and return step) looked at, in log terms: about +22 % / −18 %."""
MAX_ROWS = 5
"""Longest episode, in market dates."""
BACK = 0.25
"""The level is back when within this share of the jump of where it started."""
HOLD = 0.5
"""Rows inside an episode stay at least this share of the jump away."""
Z = 10.0
"""The jump and the return step exceed this many robust standard deviations of the fund's own returns."""
WINDOW = 60
MIN_OBS = 20
SCOPE_YEARS = 10.0
"""Only episodes touching the longest window (10 years before the as-of date) count."""
ROW_BLOCK = 64


@dataclass
class Outliers:
    """Per fund column: its episodes as (first bad row, row where the level is back)."""

    episodes: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    pending: dict[int, int] = field(default_factory=dict)
    """Funds whose price jumped in the last ``MAX_ROWS`` dates and has not come back yet: the row of the jump
    (an episode if it comes back, a real move if it stays: the evaluation can only warn)."""

    def rows(self, i: int) -> set[int]:
        """The rows an episode of fund ``i`` touches (its bad rows and the return row)."""
        return {r for s, e in self.episodes.get(i, []) for r in range(s, e + 1)}


def _screen(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cells (row, fund) whose level moved by at least ``MIN_JUMP`` from the row before (row ≥ 1).

    Done a block of rows at a time into reused buffers, so the pass stays in cache (it runs on every
    evaluation: the 15,000-fund benchmark allows it a few percent of the engine's time).
    """
    n, f = levels.shape
    up, down = float(np.exp(MIN_JUMP)), float(np.exp(-MIN_JUMP))
    buf = np.empty((ROW_BLOCK, f))
    hi_mask = np.empty((ROW_BLOCK, f), dtype=bool)
    lo_mask = np.empty((ROW_BLOCK, f), dtype=bool)
    rows, cols = [], []
    with np.errstate(invalid="ignore"):
        for lo in range(1, n, ROW_BLOCK):
            hi = min(lo + ROW_BLOCK, n)
            k = hi - lo
            prev, cur = levels[lo - 1 : hi - 1], levels[lo:hi]
            np.multiply(prev, up, out=buf[:k])
            np.greater(cur, buf[:k], out=hi_mask[:k])
            np.multiply(prev, down, out=buf[:k])
            np.less(cur, buf[:k], out=lo_mask[:k])
            np.logical_or(hi_mask[:k], lo_mask[:k], out=hi_mask[:k])
            if hi_mask[:k].any():
                r, c = np.nonzero(hi_mask[:k])
                rows.append(r + lo)
                cols.append(c)
    if not rows:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    return np.concatenate(rows), np.concatenate(cols)


def _robust_sigma(levels: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Per candidate: 1.4826 · MAD of the fund's log returns over the ``WINDOW`` rows before the jump."""
    offsets = np.arange(-WINDOW - 1, 0)
    idx = rows[:, None] + offsets[None, :]
    valid = idx >= 0
    with np.errstate(all="ignore"):
        window = np.where(valid, levels[np.maximum(idx, 0), cols[:, None]], np.nan)
        r = np.diff(np.log(window), axis=1)
    count = np.isfinite(r).sum(axis=1)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN window: that candidate is not judged
        med = np.nanmedian(r, axis=1)
        mad = np.nanmedian(np.abs(r - med[:, None]), axis=1)
    return np.where(count >= MIN_OBS, 1.4826 * mad, np.nan)


def _market(
    levels: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    groups: np.ndarray,
    bench_levels: np.ndarray | None,
    bench_of_fund: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per cell (row, fund): the log return of its benchmark and of its peers' median that day (NaN if none)."""
    bench = np.full(rows.size, np.nan)
    if bench_levels is not None and bench_of_fund is not None:
        b = bench_of_fund[cols]
        has = (b >= 0) & (rows >= 1)
        with np.errstate(all="ignore"):
            bench[has] = np.log(bench_levels[rows[has], b[has]] / bench_levels[rows[has] - 1, b[has]])
    peers = np.full(rows.size, np.nan)
    members: dict[object, np.ndarray] = {}
    cache: dict[tuple[object, int], float] = {}
    for k, (r, c) in enumerate(zip(rows.tolist(), cols.tolist(), strict=True)):
        g = groups[c]
        if g not in members:
            members[g] = np.flatnonzero(groups == g)
        key = (g, r)
        if key not in cache:
            m = members[g]
            with np.errstate(all="ignore"):
                step = np.log(levels[r, m] / levels[r - 1, m])
            step = step[np.isfinite(step)]
            cache[key] = float(np.median(step)) if step.size >= 3 else np.nan
        peers[k] = cache[key]
    return bench, peers


def _excess(step: np.ndarray, bench: np.ndarray, peers: np.ndarray) -> np.ndarray:
    """The step less whichever market move explains it best (no market: the step itself)."""
    with np.errstate(invalid="ignore"):
        a = np.where(np.isfinite(bench), step - bench, np.inf)
        b = np.where(np.isfinite(peers), step - peers, np.inf)
    out = np.where(np.abs(a) <= np.abs(b), a, b)
    return np.where(np.isfinite(out), out, step)


def find_outliers(
    levels: np.ndarray,
    groups: np.ndarray,
    bench_levels: np.ndarray | None = None,
    bench_of_fund: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
) -> Outliers:
    """Every episode in ``levels`` (dates × funds on the market calendar), by the module's rules.

    ``bench_levels`` / ``bench_of_fund``: benchmark levels on the same rows and each fund's column (−1
    for none); ``candidates``: funds to look at (default all).
    """
    rows, cols = _screen(levels)
    if candidates is not None and rows.size:
        keep = candidates[cols]
        rows, cols = rows[keep], cols[keep]
    found: dict[int, list[tuple[int, int]]] = {}
    if rows.size == 0:
        return Outliers(found)
    n = levels.shape[0]
    with np.errstate(all="ignore"):
        x = np.log(levels)
        start = x[rows - 1, cols]
        jump = x[rows, cols] - start
        ahead = np.arange(1, MAX_ROWS + 1)
        idx = rows[:, None] + ahead[None, :]
        path = np.where(idx < n, x[np.minimum(idx, n - 1), cols[:, None]], np.nan) - start[:, None]
        size = np.abs(jump)[:, None]
        back = np.abs(path) <= BACK * size
        held = (np.sign(path) == np.sign(jump)[:, None]) & (np.abs(path) >= HOLD * size)
    first_back = np.where(back.any(axis=1), back.argmax(axis=1), MAX_ROWS)
    stayed = np.cumprod(held, axis=1).sum(axis=1)  # rows held before the first that is not
    ok = (first_back < MAX_ROWS) & (stayed >= first_back)
    ends = rows + first_back + 1
    remaining = n - 1 - rows
    open_ = (remaining < MAX_ROWS) & ~back.any(axis=1) & (stayed >= remaining)
    pending = _pending(levels, rows[open_], cols[open_], jump[open_], groups, bench_levels, bench_of_fund)
    if not ok.any():
        return Outliers(found, pending)
    rows, cols, jump, ends = rows[ok], cols[ok], jump[ok], ends[ok]
    with np.errstate(all="ignore"):
        ret = x[ends, cols] - x[ends - 1, cols]
    sigma = _robust_sigma(levels, rows, cols)
    b_s, p_s = _market(levels, rows, cols, groups, bench_levels, bench_of_fund)
    b_e, p_e = _market(levels, ends, cols, groups, bench_levels, bench_of_fund)
    ex_s, ex_e = _excess(jump, b_s, p_s), _excess(ret, b_e, p_e)
    thr = np.maximum(MIN_JUMP, Z * sigma)
    hit = (
        np.isfinite(sigma)
        & (np.abs(ex_s) >= thr)
        & (np.abs(ex_e) >= thr)
        & (np.sign(ex_s) == np.sign(jump))
        & (np.sign(ex_e) == -np.sign(jump))
    )
    for s, e, c in zip(rows[hit].tolist(), ends[hit].tolist(), cols[hit].tolist(), strict=True):
        found.setdefault(int(c), []).append((int(s), int(e)))
    return Outliers({c: sorted(found[c]) for c in sorted(found)}, pending)


def _pending(
    levels: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    jump: np.ndarray,
    groups: np.ndarray,
    bench_levels: np.ndarray | None,
    bench_of_fund: np.ndarray | None,
) -> dict[int, int]:
    """Jumps in the last dates that would be an episode's first half (the same tests on the jump alone)."""
    if rows.size == 0:
        return {}
    sigma = _robust_sigma(levels, rows, cols)
    b_s, p_s = _market(levels, rows, cols, groups, bench_levels, bench_of_fund)
    ex = _excess(jump, b_s, p_s)
    hit = (
        np.isfinite(sigma) & (np.abs(ex) >= np.maximum(MIN_JUMP, Z * sigma)) & (np.sign(ex) == np.sign(jump))
    )
    return {int(c): int(r) for r, c in zip(rows[hit].tolist(), cols[hit].tolist(), strict=True)}


def visible(outliers: Outliers, dates: pd.DatetimeIndex, as_of_row: int, as_of: pd.Timestamp) -> Outliers:
    """The episodes an evaluation at ``as_of`` (calendar row ``as_of_row``) counts: back by then, and
    touching its longest window."""
    start = window_start_row(dates[: as_of_row + 1], as_of, SCOPE_YEARS)
    scope = 0 if start is None else start
    out: dict[int, list[tuple[int, int]]] = {}
    for c, eps in outliers.episodes.items():
        kept = [(s, e) for s, e in eps if e <= as_of_row and e - 1 >= scope]
        if kept:
            out[c] = kept
    return Outliers(out)


def describe(episodes: list[tuple[int, int]], dates: pd.DatetimeIndex, prices: np.ndarray) -> str:
    """Korean detail: each bad date with its 기준가격, the jump from the day before and when it came back."""
    parts = []
    for s, e in episodes[:5]:
        bits = []
        for r in range(s, e):
            price = prices[r]
            text = (
                f"{dates[r]:%Y-%m-%d} 기준가격 {price:,.2f}" if np.isfinite(price) else f"{dates[r]:%Y-%m-%d}"
            )
            if r == s and np.isfinite(prices[s - 1]) and np.isfinite(price):
                text += f" (전일 대비 {price / prices[s - 1] - 1:+.0%}"
                text += ", 다음 날 원복)" if e == s + 1 else ")"
            bits.append(text)
        if e > s + 1:
            bits[-1] += f" ({e - s}일 뒤 {dates[e]:%Y-%m-%d} 원복)"
        parts.append(", ".join(bits))
    more = f" 외 {len(episodes) - 5}건" if len(episodes) > 5 else ""
    return "; ".join(parts) + more


def flag_outliers(
    levels: np.ndarray,
    prices: dict[int, np.ndarray],
    dates: pd.DatetimeIndex,
    outliers: Outliers,
    flags: FundFlags,
    mode: str = "error",
) -> int:
    """Turn a date's visible episodes into reasons: ``error`` (default), ``repair`` or ``keep``.

    ``repair`` treats the bad prices as missing: the last good level is carried over them, as for a
    missing date, up to ``FILL_LIMIT`` dates (a longer episode stays an error). ``levels`` is changed in
    place. ``prices``: a fund's 기준가격 on the same rows for the reasons (default: its levels).
    A jump in the last dates that has not come back (``outliers.pending``) is only warned about.
    Returns the number of funds with an episode.
    """
    if mode not in MODES:
        raise ValueError(f"outliers mode must be one of {', '.join(MODES)}, not {mode!r}")
    for i, row in outliers.pending.items():
        shown = prices.get(i, levels[:, i])
        if i in outliers.episodes or not (np.isfinite(shown[row]) and np.isfinite(shown[row - 1])):
            continue
        flags.warn(
            i,
            f"{dates[row]:%Y-%m-%d} 기준가격 {shown[row]:,.2f} (전일 대비 {shown[row] / shown[row - 1] - 1:+.0%})이 "
            "펀드의 평소 변동성과 시장 움직임을 크게 벗어났고 평가기준일까지 돌아오지 않았습니다; 입력 오류라면 "
            "이 평가는 틀리므로 다음 기준가격으로 확인하십시오",
        )
    for i, eps in outliers.episodes.items():
        detail = describe(eps, dates, prices.get(i, levels[:, i]))
        if mode == "keep":
            flags.warn(
                i, f"기준가격 이상치로 보이는 값이 있으나 그대로 평가했습니다 (--outliers keep): {detail}"
            )
            continue
        if mode == "repair" and all(e - s <= FILL_LIMIT for s, e in eps):
            for s, e in eps:
                levels[s:e, i] = levels[s - 1, i]
            flags.warn(
                i,
                f"기준가격 이상치로 보이는 값을 결측으로 보고 직전 기준가격을 이어 썼습니다 (--outliers repair): {detail}",
            )
            continue
        longer = f" (연속 {FILL_LIMIT}일을 넘어 이어 쓸 수 없습니다)" if mode == "repair" else ""
        flags.error(
            i,
            f"기준가격 이상치로 보이는 값이 있어 평가하지 않았습니다{longer}: {detail}; 자료를 고치거나 "
            "--outliers repair(결측으로 보고 이어 쓰기) 또는 --outliers keep(그대로 평가)을 지정하십시오",
        )
        flags.codes.setdefault(i, []).append(NAV_OUTLIER)
    return len(outliers.episodes)


def prices_of(
    navs: pd.DataFrame, codes: list[str], dates: pd.DatetimeIndex, outliers: Outliers
) -> dict[int, np.ndarray]:
    """The 기준가격 of each fund with an episode, on the calendar rows (for its reason)."""
    out: dict[int, np.ndarray] = {}
    for i in outliers.episodes:
        if codes[i] in navs.columns:
            out[i] = navs[codes[i]].reindex(dates).to_numpy(dtype=float)
    return out
