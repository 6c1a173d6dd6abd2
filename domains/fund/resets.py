"""Detecting 결산 resets in NAVs that were not adjusted for distributions.

When a fund settles, its gain is paid out and reinvested and 기준가격 drops back to about 1,000; on raw
기준가격 that looks like a one-day loss. Without an adjusted NAV or a distribution column the engine
cannot compute the true return, so such a fund must not be graded as if it had lost money.

A candidate reset on day t (all conditions must hold):

* the fund's return that day, less its beta times its market's (the benchmark's return, else its peer
  group's median return), is below ``−max(MIN_DROP, Z_DROP · σ)``, σ being a robust (median-absolute-deviation) estimate
  of the fund's ordinary daily excess-return spread;
* the NAV lands within ``LANDING`` of where 1,000 (the base a 결산 resets to) would be after that day's
  market move, ``1,000 · (1 + β·market)``.

Limits (documented in ``domains/fund/README.md``): funds that retain gains (유보) never reset; monthly or
quarterly payers (월지급식) pay amounts too small to stand out; a drop smaller than the thresholds, or a
fund whose base is not 1,000, is not seen. Only an adjusted column makes those exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

MIN_DROP = 0.01
"""Smallest unexplained one-day drop read as a reset (1 %)."""
Z_DROP = 6.0
"""…and at least this many robust standard deviations of the fund's ordinary excess returns."""
LANDING = 0.03
WIDE = 0.10
"""First, cheap pass: NAVs within 10 % of 1,000."""
"""A reset lands within 3 % of 1,000."""
BASE = 1000.0
PREFILTER = -0.005


@dataclass(frozen=True)
class Resets:
    """Per fund column: the rows of the candidate resets (only funds with at least one)."""

    rows: dict[int, list[int]]


def _robust_sd(x: np.ndarray) -> np.ndarray:
    """Per column: 1.4826 · median absolute deviation, NaNs skipped (pandas' median is vectorised)."""
    frame = pd.DataFrame(x)
    med = frame.median(axis=0).to_numpy()
    return 1.4826 * pd.DataFrame(np.abs(x - med)).median(axis=0).to_numpy()


class _Market:
    """Market returns per fund: its benchmark's, else its peer group's median (computed once per group)."""

    def __init__(
        self, nav: np.ndarray, groups: np.ndarray, bench_returns: tuple[np.ndarray, np.ndarray] | None
    ) -> None:
        self.nav, self.groups, self.bench = nav, groups, bench_returns
        self.medians: dict[object, np.ndarray] = {}

    def _median(self, g: object) -> np.ndarray:
        if g not in self.medians:
            peers = np.flatnonzero(self.groups == g)
            out = np.zeros(self.nav.shape[0] - 1)
            if peers.size > 2:
                with np.errstate(all="ignore"):
                    peer = self.nav[1:, peers] / self.nav[:-1, peers] - 1.0
                out = np.nan_to_num(pd.DataFrame(peer).median(axis=1).to_numpy(), nan=0.0)
            self.medians[g] = out
        return self.medians[g]

    def returns(self, cols: np.ndarray) -> np.ndarray:
        """(dates − 1) × cols market returns for rows 1.. of ``nav``."""
        out = np.zeros((self.nav.shape[0] - 1, cols.size))
        of = np.full(cols.size, -1) if self.bench is None else self.bench[1][cols]
        if self.bench is not None and (of >= 0).any():
            out[:, of >= 0] = np.nan_to_num(self.bench[0][1:, of[of >= 0]], nan=0.0)
        for j in np.flatnonzero(of < 0).tolist():
            out[:, j] = self._median(self.groups[cols[j]])
        return out


def _beta(r: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Per column: the slope of the fund's returns on its market's (0…2), so a low-beta fund is not
    charged its market's full moves. A few resets barely move it: they are unrelated to the market."""
    ok = np.isfinite(r) & np.isfinite(m)
    n = np.maximum(ok.sum(axis=0), 1)
    rc = np.where(ok, r, 0.0)
    mc = np.where(ok, m, 0.0)
    rm, mm = rc.sum(axis=0) / n, mc.sum(axis=0) / n
    cov = (np.where(ok, (rc - rm) * (mc - mm), 0.0)).sum(axis=0)
    var = (np.where(ok, (mc - mm) ** 2, 0.0)).sum(axis=0)
    with np.errstate(all="ignore"):
        beta = np.where(var > 0, cov / var, 0.0)
    return np.clip(np.nan_to_num(beta), 0.0, 2.0)


def detect_resets(
    nav: np.ndarray,
    candidates: np.ndarray,
    groups: np.ndarray,
    bench_returns: tuple[np.ndarray, np.ndarray] | None = None,
    chunk: int = 512,
) -> Resets:
    """Candidate resets for the funds where ``candidates`` is true.

    ``nav``: dates × funds (NaN where none); ``groups``: each fund's peer group; ``bench_returns``: dates ×
    benchmarks returns aligned to ``nav``'s rows with each fund's benchmark column (−1 for none), or None.
    Works on blocks of ``chunk`` funds so the temporaries stay small.
    """
    found: dict[int, list[int]] = {}
    market = _Market(nav, groups, bench_returns)
    todo = np.flatnonzero(candidates)
    for lo in range(0, todo.size, chunk):
        cols = todo[lo : lo + chunk]
        x = nav[:, cols]
        with np.errstate(all="ignore"):
            drop = x[1:] / x[:-1] - 1.0
            cells = (np.abs(x[1:] - BASE) <= WIDE * BASE) & (drop <= PREFILTER)
        some = cells.any(axis=0)
        if not some.any():
            continue
        cols, drop, cells = cols[some], drop[:, some], cells[:, some]
        move = _beta(drop, market_ret := market.returns(cols)) * market_ret
        excess = drop - move
        with np.errstate(all="ignore"):
            lands = np.abs(x[1:, some] / (BASE * (1.0 + move)) - 1.0) <= LANDING
        cells &= lands & (excess <= -MIN_DROP)  # a reset needs an unexplained drop of at least MIN_DROP
        some = cells.any(axis=0)
        if not some.any():
            continue
        cols, excess, cells = cols[some], excess[:, some], cells[:, some]
        limit = -np.maximum(MIN_DROP, Z_DROP * np.nan_to_num(_robust_sd(excess), nan=0.0))
        cells &= excess <= limit[None, :]
        for j in np.flatnonzero(cells.any(axis=0)).tolist():
            found[int(cols[j])] = (np.flatnonzero(cells[:, j]) + 1).tolist()
    return Resets(rows=found)


def describe(rows: list[int], dates: pd.DatetimeIndex, nav: np.ndarray) -> str:
    """Korean detail for a report: the dates and sizes of the drops found."""
    parts = [f"{dates[r]:%Y-%m-%d} {nav[r] / nav[r - 1] - 1:+.1%}" for r in rows[:5]]
    more = f" 외 {len(rows) - 5}건" if len(rows) > 5 else ""
    return ", ".join(parts) + more
