"""A synthetic Korean fund universe the project generates itself (seeded, so every run is identical).

Several 유형 with their own benchmark (a KOSPI-like equity index, a global equity index, bond indices, a
balanced mix), several fictional 운용회사, daily NAVs starting at 1,000원 whose returns follow the
benchmark (fund beta, alpha after fees, tracking error), some younger funds (3–5 years of history) and
a handful of deliberately broken ones so reports show ``error`` and ``not_rated``:
a duplicated date, a negative NAV, a blank-NAV gap, dates out of order, a too-short history, a tiny
fund below the minimum 설정액, and a 유형 the methodology does not rate.

With ``realistic=True`` (what ``--sample`` and ``generate-sample`` use) it is shaped like real exports
too: about a third of the funds settle (결산) once a year, paying out their gain above 1,000 so that
기준가격 resets, and say so in a 수정기준가격, 분배금 (some dated on the 결산일, one row early) or
분배율 column, or not at all (those are the funds the reset detector must catch); some portfolios come
as share-class families (대표펀드코드, classes A / C / C-e / S differing only in fees); an MMF is priced on
every calendar day; and one fund's rows are repeated as by overlapping downloads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.core.outputs import atomic_write_text, ensure_new_file
from evaluator.domains.fund.data.loaders import (
    Universe,
    benchmark_from_table,
    check_universe,
    parse_risk_free,
    read_navs_frame,
    series_from_frame,
)

END_DATE = "2025-06-30"
COMPANIES = (
    "가람자산운용",
    "누리자산운용",
    "다온투자신탁운용",
    "미르자산운용",
    "바른자산운용",
    "새솔자산운용",
    "한결자산운용",
    "하늘투자운용",
)


@dataclass(frozen=True)
class _Type:
    name: str
    share: float
    drift: float  # benchmark annual drift
    vol: float  # benchmark annual volatility
    te: tuple[float, float]  # fund tracking error range
    fee: tuple[float, float]  # 총보수 (% a year) range
    suffix: str
    themes: tuple[str, ...]


TYPES = (
    _Type(
        "국내주식형",
        0.34,
        0.06,
        0.18,
        (0.03, 0.08),
        (0.6, 1.6),
        "증권투자신탁[주식]",
        ("코리아밸류", "성장주", "배당", "중소형", "코스피200인덱스", "리더스", "퀀트", "가치"),
    ),
    _Type(
        "해외주식형",
        0.20,
        0.08,
        0.15,
        (0.03, 0.07),
        (0.7, 1.8),
        "증권자투자신탁[주식-재간접]",
        ("글로벌성장", "미국S&P500", "차이나", "글로벌배당", "유럽", "아시아", "베트남", "인도"),
    ),
    _Type(
        "채권형",
        0.20,
        0.03,
        0.025,
        (0.004, 0.012),
        (0.15, 0.5),
        "증권투자신탁[채권]",
        ("국공채", "단기채", "우량회사채", "크레딧", "장기국채"),
    ),
    _Type(
        "해외채권형",
        0.10,
        0.035,
        0.05,
        (0.008, 0.02),
        (0.3, 0.8),
        "증권자투자신탁[채권-재간접]",
        ("글로벌채권", "미국채", "이머징채권", "하이일드"),
    ),
    _Type(
        "혼합형",
        0.16,
        0.045,
        0.09,
        (0.015, 0.04),
        (0.4, 1.2),
        "증권투자신탁[주식혼합]",
        ("밸런스", "자산배분", "인컴", "배당혼합", "멀티에셋"),
    ),
)
SETTLE_INFO = ("adjusted", "distribution", "distribution_early", "rate", "none")
"""How a settling fund's file describes its 결산 (cycled over the settling funds)."""
CLASS_SUFFIXES = ("A", "A-e", "C", "C-e", "S", "P")
KOREAN_COLUMNS = (
    "기준일자",
    "펀드코드",
    "펀드명",
    "운용회사",
    "유형",
    "기준가격",
    "설정원본",
    "순자산총액",
    "총보수",
)
BROKEN = (
    "duplicate_date",
    "negative_nav",
    "missing_nav_gap",
    "unsorted_dates",
    "short_history",
    "tiny_fund",
    "unrated_type",
)


@dataclass(frozen=True)
class Sample:
    """The generated universe: NAV rows in KOFIA-style long form, and one benchmark column per 유형."""

    rows: pd.DataFrame
    benchmark: pd.DataFrame
    broken: dict[str, str]
    """Which fund code carries which deliberate defect."""
    settling: dict[str, str] | None = None
    """Realistic sample: settling fund code → how its file describes the 결산 (see ``SETTLE_INFO``)."""
    families: dict[str, list[str]] | None = None
    """Realistic sample: portfolio code → its class fund codes (families of two or more)."""
    true_levels: pd.DataFrame | None = None
    """Realistic sample: the total-return levels every fund really had (dates × codes)."""


def _benchmarks(rng: np.random.Generator, days: int) -> np.ndarray:
    """Daily benchmark returns (days × types) with equity indices correlated through a common factor."""
    common = rng.standard_normal(days)
    out = np.empty((days, len(TYPES)))
    for k, t in enumerate(TYPES):
        link = 0.6 if t.vol > 0.08 else 0.2
        shock = link * common + np.sqrt(1 - link**2) * rng.standard_normal(days)
        out[:, k] = t.drift / 252 + t.vol / np.sqrt(252) * shock
    return out


def planted_skill(seed: int, te: np.ndarray, share: float, ir: float) -> np.ndarray:
    """Annual alpha of a skill universe: ``share`` of the funds earn ``ir`` × their tracking error a year
    (an information ratio of ``ir``), the others 0; drawn apart from the main stream (same seed, same
    universe otherwise)."""
    rng = np.random.default_rng([seed, 1])
    return np.where(rng.random(len(te)) < share, ir * te, 0.0)


def generate_sample(
    funds: int = 300,
    years: int = 6,
    seed: int = 7,
    end: str = END_DATE,
    realistic: bool = False,
    skill: tuple[float, float] | None = None,
) -> Sample:
    """``funds`` funds (at least 20) over ``years`` years of business days ending at ``end``.

    ``skill=(share, ir)`` replaces the default alpha (spread N(0, 0.5)·TE minus fees, which every fund
    keeps for good) by a planted one: ``share`` of the funds with information ratio ``ir``, the rest
    none, with beta 1, one tracking error per 유형 and no fee drag, so nothing else persists; ``(0, 0)``
    is a no-skill universe.
    """
    if funds < 20 or years < 1:
        raise ValueError("the sample needs at least 20 funds and 1 year")
    funds = funds - 1 if realistic else funds  # the realistic sample's last fund is a calendar-day MMF
    rng = np.random.default_rng(seed)
    end_ts = pd.Timestamp(end)
    dates = pd.bdate_range(end_ts - pd.DateOffset(years=years), end_ts)
    days = len(dates)
    bench_ret = _benchmarks(rng, days)
    bench_ret[0] = 0.0
    bench_levels = 1000.0 * np.cumprod(1 + bench_ret, axis=0)

    kinds = rng.choice(len(TYPES), size=funds, p=[t.share for t in TYPES])
    beta = np.clip(rng.normal(1.0, 0.12, funds), 0.6, 1.4)
    te = np.array([rng.uniform(*TYPES[k].te) for k in kinds])
    fee = np.round(np.array([rng.uniform(*TYPES[k].fee) for k in kinds]), 2)
    alpha = rng.normal(0.0, 0.5, funds) * te - fee / 100.0
    if skill is not None:  # one tracking error per 유형 too, or low-TE funds would win on volatility drag
        te = np.array([sum(TYPES[k].te) / 2 for k in kinds])
        alpha, beta = planted_skill(seed, te, *skill), np.ones(funds)
    noise = rng.standard_normal((days, funds)) * (te / np.sqrt(252))
    fund_ret = alpha / 252 + beta * bench_ret[:, kinds] + noise
    fund_ret[0] = 0.0
    families: dict[int, list[int]] = {}
    if realistic:
        families = _share_classes(rng, fund_ret, kinds, fee, funds - len(BROKEN))
    nav = np.round(1000.0 * np.cumprod(1 + fund_ret, axis=0), 2)
    low, high = max(1, int(days * (1 - 5 / years)) + 5), int(days * (1 - 3 / years)) - 5
    young = (
        rng.random(funds) < 0.2 if high > low else np.zeros(funds, dtype=bool)
    )  # 3–5 years: rated on 3 only
    start = np.where(young, rng.integers(low, max(high, low + 1), funds), 0)
    for lead, members in families.items():  # classes of one portfolio start together
        start[members] = start[lead]
    offset = np.take_along_axis(nav, start[None, :], axis=0)[0]
    nav = np.round(nav / offset * 1000.0, 2)
    nav[np.arange(days)[:, None] < start[None, :]] = np.nan

    codes = [f"KR5{230100000 + 7919 * i:09d}"[:12] for i in range(funds)]
    company_idx = rng.integers(0, len(COMPANIES), funds)
    names = [
        f"{COMPANIES[c][:2]} {rng.choice(TYPES[k].themes)} {TYPES[k].suffix} {rng.choice(['A', 'C', 'C-e'])}"
        for c, k in zip(company_idx, kinds, strict=True)
    ]
    family_of = list(codes)
    for lead, members in families.items():
        base = names[lead].rsplit(" ", 1)[0]
        for j, m in enumerate([lead, *members]):
            names[m], family_of[m] = f"{base} {CLASS_SUFFIXES[j]}", codes[lead]
            company_idx[m] = company_idx[lead]
    set_amount = np.round(np.exp(rng.normal(np.log(4e10), 1.0, funds)), -6)
    broken = dict(zip(BROKEN, codes[-len(BROKEN) :], strict=True))
    b = {kind: codes.index(code) for kind, code in broken.items()}
    nav[: days - 2 * 252, b["short_history"]] = np.nan  # two years only
    set_amount[b["tiny_fund"]] = 2.0e9
    kinds_names = [TYPES[k].name for k in kinds]
    kinds_names[b["unrated_type"]] = "부동산형"
    nav[days // 2, b["negative_nav"]] = -nav[days // 2, b["negative_nav"]]
    true_levels = nav.copy()
    extra: dict[str, np.ndarray] = {}
    settling: dict[str, str] = {}
    if realistic:
        nav, extra, settle_idx = _settle(
            rng, nav, set(b.values()) | set(families) | {m for ms in families.values() for m in ms}
        )
        settling = {codes[i]: how for i, how in settle_idx.items()}

    f_idx, t_idx = np.nonzero(np.isfinite(nav).T)  # fund-major order, dates ascending within a fund
    rows = pd.DataFrame(
        {
            "기준일자": dates[t_idx],
            "펀드코드": pd.Categorical.from_codes(f_idx, codes),
            "펀드명": pd.Categorical(np.asarray(names, dtype=object)[f_idx]),
            "운용회사": pd.Categorical.from_codes(company_idx[f_idx], COMPANIES),
            "유형": pd.Categorical(np.asarray(kinds_names, dtype=object)[f_idx]),
            "기준가격": nav[t_idx, f_idx],
            "설정원본": set_amount[f_idx],
            "순자산총액": np.round(set_amount[f_idx] * nav[t_idx, f_idx] / 1000.0, -3),
            "총보수": fee[f_idx],
            **(
                {"대표펀드코드": pd.Categorical(np.asarray(family_of, dtype=object)[f_idx])}
                if realistic
                else {}
            ),
            **{name: values[t_idx, f_idx] for name, values in extra.items()},
        }
    )
    rows = _break_rows(rows, broken, days)
    if realistic:
        rows = _realistic_rows(rows, codes, dates, kinds, end_ts)
    bench = pd.DataFrame({"기준일자": dates})
    for k, t in enumerate(TYPES):
        bench[t.name] = np.round(bench_levels[:, k], 4)
    if not realistic:
        return Sample(rows=rows, benchmark=bench, broken=broken)
    return Sample(
        rows=rows,
        benchmark=bench,
        broken=broken,
        settling=settling,
        families={codes[lead]: [codes[m] for m in [lead, *ms]] for lead, ms in families.items()},
        true_levels=pd.DataFrame(true_levels, index=dates, columns=codes),
    )


def _share_classes(
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


def _settle(
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


def _realistic_rows(
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


def _break_rows(rows: pd.DataFrame, broken: dict[str, str], days: int) -> pd.DataFrame:
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


def sample_universe(
    funds: int = 300,
    years: int = 6,
    seed: int = 7,
    risk_free: str | float = 0.0,
    realistic: bool = False,
    skill: tuple[float, float] | None = None,
) -> Universe:
    """The sample as engine inputs, read through the same row checks as a user's file."""
    sample = generate_sample(funds=funds, years=years, seed=seed, realistic=realistic, skill=skill)
    navs, issues, meta, warnings, layout, adjustments = read_navs_frame(sample.rows, "the sample")
    rf, rf_info = parse_risk_free(risk_free)
    bench = benchmark_from_table(series_from_frame(sample.benchmark, "the sample benchmark"))
    universe = Universe(
        navs=navs,
        meta=meta,
        issues=issues,
        benchmark=bench,
        risk_free=rf,
        warnings=warnings,
        sources={
            "data": {
                "kind": "sample",
                "funds": funds,
                "years": years,
                "seed": seed,
                "layout": layout,
                "realistic": realistic,
            },
            "risk_free": rf_info,
        },
        adjustments=adjustments,
    )
    check_universe(universe)
    return universe


def write_sample(sample: Sample, path: str | os.PathLike[str], *, force: bool = False) -> tuple[Path, Path]:
    """Write the NAV rows to ``path`` (.csv, .parquet or .xlsx) and the benchmark beside it
    (``<stem>.benchmark.<ext>``). The Excel variant looks like a KOFIA download: title rows above the header."""
    nav_path = Path(path)
    bench_path = nav_path.with_name(f"{nav_path.stem}.benchmark{nav_path.suffix}")
    for p in (nav_path, bench_path):
        ensure_new_file(p, force=force)
    for frame, target in ((sample.rows, nav_path), (sample.benchmark, bench_path)):
        if target.suffix.lower() == ".parquet":
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, target)
        elif target.suffix.lower() == ".xlsx":
            _write_xlsx(frame, target)
        else:
            atomic_write_text(target, frame.to_csv(index=False, date_format="%Y-%m-%d"))
    return nav_path, bench_path


def _write_xlsx(frame: pd.DataFrame, target: Path) -> None:
    """An .xlsx with KOFIA-style title rows ("펀드 기준가격 일별 조회", "조회기간: …") above the header."""
    import openpyxl

    target.parent.mkdir(parents=True, exist_ok=True)
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("기준가격")
    dates = pd.to_datetime(frame["기준일자"])
    sheet.append(["펀드 기준가격 일별 조회"])
    sheet.append([f"조회기간: {dates.min():%Y.%m.%d} ~ {dates.max():%Y.%m.%d}"])
    sheet.append([])
    sheet.append([str(c) for c in frame.columns])
    columns = [frame[c].to_numpy(dtype=object) for c in frame.columns]
    columns[list(frame.columns).index("기준일자")] = dates.dt.to_pydatetime()
    for row in zip(*columns, strict=True):
        sheet.append([None if isinstance(v, float) and v != v else v for v in row])
    tmp = target.with_name(f".{target.name}.tmp")
    book.save(tmp)
    os.replace(tmp, target)
