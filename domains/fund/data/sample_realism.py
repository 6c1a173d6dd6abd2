"""What makes the sample look like real exports: share-class families, yearly 결산 paid out of the NAV (and
how the file says so), an MMF priced on calendar days, rows repeated by overlapping downloads, and the
row-level defects a NAV matrix cannot show."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.sample_spec import CLASS_SUFFIXES, COMPANIES, SETTLE_INFO


def share_classes(
    rng: np.random.Generator, fund_ret: np.ndarray, kinds: np.ndarray, fee: np.ndarray, usable: int
) -> dict[int, list[int]]:
    """Turn some funds into classes of another's portfolio: same returns before fees, their own 총보수."""
    families: dict[int, list[int]] = {}
    order = rng.permutation(usable).tolist()
    target = max(2, usable // 6)
    used = 0
    while order and used < target:
        size = int(rng.integers(2, len(CLASS_SUFFIXES) + 1))
        if len(order) < size:
            break
        lead, *members = (order.pop() for _ in range(size))
        for k, m in enumerate(members):
            kinds[m] = kinds[lead]
            fee[m] = round(max(0.05, fee[lead] + (0.3 if k % 2 == 0 else -0.2) * (k + 1) / 2), 2)
            fund_ret[1:, m] = fund_ret[1:, lead] + (fee[lead] - fee[m]) / 100.0 / 252
        families[lead] = members
        used += size
    return families


def settle(
    rng: np.random.Generator, levels: np.ndarray, skip: set[int]
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[int, str]]:
    """Yearly 결산 for about a third of the funds: pay out the gain above 1,000, so 기준가격 resets.

    ``levels`` are the true total-return levels (what the metrics must see). The paid NAV follows
    ``NAV_t = NAV_{t−1}·(1 + r_t) − D_t``, so ``(NAV_t + D_t) / NAV_{t−1} − 1`` is exactly the true return.
    """
    funds = levels.shape[1]
    nav = levels.copy()
    adjusted = np.full_like(levels, np.nan)
    dist = np.full_like(levels, np.nan)
    rate = np.full_like(levels, np.nan)
    pool = [i for i in range(funds) if i not in skip]
    chosen = rng.permutation(pool)[: max(len(SETTLE_INFO), len(pool) // 3)].tolist()
    how: dict[int, str] = {}
    for n, i in enumerate(chosen):
        kind = SETTLE_INFO[n % len(SETTLE_INFO)]
        alive = np.flatnonzero(np.isfinite(levels[:, i]))
        if alive.size < 300:
            continue
        r = levels[alive[1:], i] / levels[alive[:-1], i] - 1.0
        x = nav[alive, i]
        d = np.zeros(alive.size)
        first = int(rng.integers(120, 252))
        paid = False
        for t in range(1, alive.size):
            x[t] = x[t - 1] * (1.0 + r[t - 1])
            if t >= first and (t - first) % 252 == 0 and x[t - 1] > 1010.0:
                d[t] = round(x[t - 1] - 1000.0, 2)
                x[t] -= d[t]
                paid = True
            x[t] = round(x[t], 2)
        if not paid:
            continue
        how[i] = kind
        nav[alive, i] = x
        events = np.flatnonzero(d > 0)
        if kind == "adjusted":
            adjusted[alive, i] = np.round(levels[alive, i], 2)
        elif kind in ("distribution", "distribution_early"):
            rows = events - 1 if kind == "distribution_early" else events
            dist[alive, i] = 0.0
            dist[alive[rows], i] = d[events]
        elif kind == "rate":
            rate[alive, i] = 0.0
            rate[alive[events], i] = np.round(d[events] / x[events - 1] * 100.0, 6)
    return nav, {"수정기준가격": adjusted, "분배금": dist, "분배율": rate}, how


def realistic_rows(
    rows: pd.DataFrame, codes: list[str], dates: pd.DatetimeIndex, kinds: np.ndarray, end: pd.Timestamp
) -> pd.DataFrame:
    """An MMF priced on every calendar day, and one fund's last 50 rows repeated (overlapping downloads)."""
    days = pd.date_range(dates[0], end, freq="D")
    mmf = pd.DataFrame(
        {
            "기준일자": days,
            "펀드코드": "KR5MMF000001",
            "펀드명": "가람 스마트 MMF",
            "운용회사": COMPANIES[0],
            "유형": "MMF",
            "기준가격": np.round(1000.0 * (1 + 0.03 / 365) ** np.arange(len(days)), 2),
            "설정원본": 5e11,
            "순자산총액": 5e11,
            "총보수": 0.1,
            "대표펀드코드": "KR5MMF000001",
        }
    )
    repeated = rows.loc[rows["펀드코드"] == codes[0]].tail(50)
    out = pd.concat(
        [
            rows.astype({c: object for c in rows.columns if isinstance(rows[c].dtype, pd.CategoricalDtype)}),
            mmf,
            repeated,
        ],
        ignore_index=True,
    )
    return out


def break_rows(rows: pd.DataFrame, broken: dict[str, str], days: int) -> pd.DataFrame:
    """Row-level defects a NAV matrix cannot show: a duplicated date with another NAV, a blank-NAV gap,
    rows out of order."""
    code = rows["펀드코드"]
    own = rows.index[code == broken["duplicate_date"]]
    dup = own[days // 3 if days // 3 < len(own) else len(own) // 3]  # a young fund: within its own rows
    twin = rows.loc[[dup]].copy()
    twin["기준가격"] = twin["기준가격"] + 1.0
    rows = pd.concat([rows.loc[:dup], twin, rows.loc[dup + 1 :]], ignore_index=True)
    own = rows.index[rows["펀드코드"] == broken["missing_nav_gap"]]
    half = days // 2 if days // 2 + 15 <= len(own) else len(own) // 2
    gap = own[half : half + 15]
    rows.loc[gap, "기준가격"] = np.nan
    own = rows.index[rows["펀드코드"] == broken["unsorted_dates"]]
    quarter = days // 4 if days // 4 + 2 <= len(own) else len(own) // 4
    swap = own[quarter : quarter + 2]
    rows.loc[[swap[0], swap[1]]] = rows.loc[[swap[1], swap[0]]].to_numpy()
    return rows.reset_index(drop=True)
