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
from evaluator.domains.fund.data.sample_realism import break_rows, realistic_rows, settle, share_classes
from evaluator.domains.fund.data.sample_spec import BROKEN, CLASS_SUFFIXES, COMPANIES, END_DATE, TYPES


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

    Every step draws from one random stream in a fixed order, so the same seed gives the same universe.
    """
    if funds < 20 or years < 1:
        raise ValueError("the sample needs at least 20 funds and 1 year")
    funds = funds - 1 if realistic else funds  # the realistic sample's last fund is a calendar-day MMF
    rng = np.random.default_rng(seed)
    end_ts = pd.Timestamp(end)
    dates = pd.bdate_range(end_ts - pd.DateOffset(years=years), end_ts)
    days = len(dates)
    m = _returns(rng, funds, days, seed, skill)
    families = share_classes(rng, m.fund_ret, m.kinds, m.fee, funds - len(BROKEN)) if realistic else {}
    nav = _nav_paths(rng, m.fund_ret, families, years)
    codes = [f"KR5{230100000 + 7919 * i:09d}"[:12] for i in range(funds)]
    who = _identities(rng, codes, m.kinds, families)
    broken = dict(zip(BROKEN, codes[-len(BROKEN) :], strict=True))
    kinds_names = _plant_defects(
        nav, who, m.kinds, {kind: codes.index(code) for kind, code in broken.items()}
    )
    true_levels = nav.copy()
    extra: dict[str, np.ndarray] = {}
    settling: dict[str, str] = {}
    if realistic:
        in_families = set(families) | {x for ms in families.values() for x in ms}
        nav, extra, settle_idx = settle(rng, nav, set(codes.index(c) for c in broken.values()) | in_families)
        settling = {codes[i]: how for i, how in settle_idx.items()}
    rows = _long_rows(nav, dates, codes, who, kinds_names, m.fee, extra, realistic)
    rows = break_rows(rows, broken, days)
    if realistic:
        rows = realistic_rows(rows, codes, dates, m.kinds, end_ts)
    bench = pd.DataFrame({"기준일자": dates})
    for k, t in enumerate(TYPES):
        bench[t.name] = np.round(m.bench_levels[:, k], 4)
    if not realistic:
        return Sample(rows=rows, benchmark=bench, broken=broken)
    return Sample(
        rows=rows,
        benchmark=bench,
        broken=broken,
        settling=settling,
        families={codes[lead]: [codes[x] for x in [lead, *ms]] for lead, ms in families.items()},
        true_levels=pd.DataFrame(true_levels, index=dates, columns=codes),
    )


@dataclass
class _Market:
    bench_levels: np.ndarray
    kinds: np.ndarray
    fee: np.ndarray
    fund_ret: np.ndarray


def _returns(
    rng: np.random.Generator, funds: int, days: int, seed: int, skill: tuple[float, float] | None
) -> _Market:
    """Benchmark levels per 유형, and each fund's 유형, 총보수 and daily returns (beta, alpha, tracking error)."""
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
    return _Market(bench_levels, kinds, fee, fund_ret)


def _nav_paths(
    rng: np.random.Generator, fund_ret: np.ndarray, families: dict[int, list[int]], years: int
) -> np.ndarray:
    """NAVs from 1,000원; about a fifth of the funds start 3–5 years before the end (rated on 3 years only)."""
    days, funds = fund_ret.shape
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
    return nav


@dataclass
class _Identities:
    company_idx: np.ndarray
    names: list[str]
    family_of: list[str]
    set_amount: np.ndarray


def _identities(
    rng: np.random.Generator, codes: list[str], kinds: np.ndarray, families: dict[int, list[int]]
) -> _Identities:
    """운용회사, 펀드명 and 설정원본 per fund; a family's classes share the lead's company and name."""
    funds = len(codes)
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
    return _Identities(company_idx, names, family_of, set_amount)


def _plant_defects(nav: np.ndarray, who: _Identities, kinds: np.ndarray, b: dict[str, int]) -> list[str]:
    """The matrix-level defects (short history, tiny fund, unrated 유형, negative NAV), in place; returns the
    유형 name per fund."""
    days = nav.shape[0]
    nav[: days - 2 * 252, b["short_history"]] = np.nan  # two years only
    who.set_amount[b["tiny_fund"]] = 2.0e9
    kinds_names = [TYPES[k].name for k in kinds]
    kinds_names[b["unrated_type"]] = "부동산형"
    nav[days // 2, b["negative_nav"]] = -nav[days // 2, b["negative_nav"]]
    return kinds_names


def _long_rows(
    nav: np.ndarray,
    dates: pd.DatetimeIndex,
    codes: list[str],
    who: _Identities,
    kinds_names: list[str],
    fee: np.ndarray,
    extra: dict[str, np.ndarray],
    realistic: bool,
) -> pd.DataFrame:
    """KOFIA-style long rows, fund-major, dates ascending within a fund."""
    f_idx, t_idx = np.nonzero(np.isfinite(nav).T)
    set_amount = who.set_amount
    return pd.DataFrame(
        {
            "기준일자": dates[t_idx],
            "펀드코드": pd.Categorical.from_codes(f_idx, codes),
            "펀드명": pd.Categorical(np.asarray(who.names, dtype=object)[f_idx]),
            "운용회사": pd.Categorical.from_codes(who.company_idx[f_idx], COMPANIES),
            "유형": pd.Categorical(np.asarray(kinds_names, dtype=object)[f_idx]),
            "기준가격": nav[t_idx, f_idx],
            "설정원본": set_amount[f_idx],
            "순자산총액": np.round(set_amount[f_idx] * nav[t_idx, f_idx] / 1000.0, -3),
            "총보수": fee[f_idx],
            **(
                {"대표펀드코드": pd.Categorical(np.asarray(who.family_of, dtype=object)[f_idx])}
                if realistic
                else {}
            ),
            **{name: values[t_idx, f_idx] for name, values in extra.items()},
        }
    )


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
