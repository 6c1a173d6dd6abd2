"""A NAV file's rows checked one fund at a time, and turned into matrices: the NAV matrix, the descriptive
columns on the rows (KOFIA exports carry 펀드명, 유형, 설정원본 on every row) and the adjustment tables.

A broken row never stops the batch: the fund it belongs to gets a Korean reason in ``issues`` (and an
``error`` report); a blank price is a date without a NAV.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data.readers import clean_text, is_blank, parse_dates, parse_numbers
from evaluator.domains.fund.types import Adjustments, DataError

META_COLUMNS = ("fund_name", "company", "type", "set_amount", "net_assets", "total_fee", "family_code")
ADJUSTMENT_COLUMNS = {"adjusted_nav": "수정기준가격", "distribution": "분배금", "distribution_rate": "분배율"}


def first_per_fund(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """The first flagged row of each fund, with how many rows of that fund were flagged."""
    hit = frame.loc[mask]
    if hit.empty:
        return hit.assign(count=pd.Series(dtype=int))
    counts = hit.groupby("fund_code", sort=False).size().rename("count")
    return hit.drop_duplicates("fund_code").set_index("fund_code").join(counts).reset_index()


def add_issue(issues: dict[str, list[str]], code: str, msg: str) -> None:
    """One more reason for a fund's ``error`` status."""
    issues.setdefault(code, []).append(msg)


def day_text(ts: Any) -> str:
    """A date as YYYY-MM-DD, for the reasons and warnings."""
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


def long_from_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Dates × fund-code columns → long rows (blank cells are simply "no NAV that day")."""
    frame = frame.reset_index(drop=True)
    value_cols = [c for c in frame.columns if c != "date"]
    if not value_cols:
        raise DataError("DATA has a date column but no fund columns")
    long = frame.melt(
        id_vars=["date"], value_vars=value_cols, var_name="fund_code", value_name="nav", ignore_index=False
    )
    long["row"] = long.index.to_numpy() + 2
    long = long.loc[~is_blank(long["nav"])]
    return long.reset_index(drop=True)


def check_rows(
    long: pd.DataFrame, *, blank_nav_is_error: bool = True
) -> tuple[pd.DataFrame, dict[str, list[str]], list[str]]:
    """Validate long rows (``date``, ``fund_code``, ``nav``, ``row``); return clean rows, issues, warnings."""
    issues: dict[str, list[str]] = {}
    warnings: list[str] = []
    long = long.copy()
    long["fund_code"] = clean_text(long["fund_code"])
    no_code = (long["fund_code"] == "").to_numpy()
    if no_code.any():
        warnings.append(
            f"{int(no_code.sum())} row(s) have no fund code and were skipped (first at line {int(long['row'][no_code].iloc[0])})"
        )
        long = long.loc[~no_code]
    raw_dates, raw_nav = long["date"], long["nav"]
    long["date"] = parse_dates(raw_dates)
    blank = is_blank(raw_nav)
    long["nav"] = parse_numbers(raw_nav)
    bad_date = long["date"].isna().to_numpy()
    for _, r in first_per_fund(long.assign(raw=raw_dates.to_numpy()), bad_date).iterrows():
        add_issue(
            issues,
            r["fund_code"],
            f"읽을 수 없는 기준일자 '{r['raw']}' ({int(r['row'])}행, 총 {int(r['count'])}건)",
        )
    unreadable = long["nav"].isna().to_numpy() & ~blank & ~bad_date
    for _, r in first_per_fund(long.assign(raw=raw_nav.to_numpy()), unreadable).iterrows():
        add_issue(
            issues,
            r["fund_code"],
            f"숫자가 아닌 기준가격 '{r['raw']}' ({day_text(r['date'])}, 총 {int(r['count'])}건)",
        )
    if blank_nav_is_error:
        for _, r in first_per_fund(long, blank & ~bad_date).iterrows():
            add_issue(
                issues,
                r["fund_code"],
                f"기준가격이 비어 있습니다 ({day_text(r['date'])} 등 {int(r['count'])}건)",
            )
    else:
        _blank_prices(long, blank & ~bad_date, issues, warnings)
    dated = long.loc[~bad_date]
    dup = dated.duplicated(["fund_code", "date"], keep=False).to_numpy()
    for _, r in first_per_fund(dated, dup).iterrows():
        add_issue(
            issues,
            r["fund_code"],
            f"기준일자 {day_text(r['date'])}이 중복되어 있습니다 (중복 행 {int(r['count'])}건)",
        )
    back = (dated.groupby("fund_code", sort=False)["date"].diff() < pd.Timedelta(0)).to_numpy()
    for _, r in first_per_fund(dated, back).iterrows():
        add_issue(
            issues,
            r["fund_code"],
            f"기준일자가 오름차순이 아닙니다 ({int(r['row'])}행의 {day_text(r['date'])}이 앞 행의 날짜보다 이릅니다)",
        )
    clean = dated.loc[dated["nav"].notna()].drop_duplicates(["fund_code", "date"], keep="first")
    return clean, issues, warnings


def _blank_prices(
    long: pd.DataFrame, blank: np.ndarray, issues: dict[str, list[str]], warnings: list[str]
) -> None:
    """A price written as blank, ``-``, ``—``, ``N/A`` … is a date without a NAV (the calendar's fill rule
    applies); a fund with no price at all is an error, so it never disappears from the batch."""
    if not blank.any():
        return
    hit = long.loc[blank]
    first = hit.iloc[0]
    warnings.append(
        f"{int(blank.sum())} row(s) have no 기준가격 (blank, '-', 'N/A' …) and are read as dates without a NAV "
        f"(first: {first['fund_code']} {day_text(first['date'])}); each fund's report says which dates were filled"
    )
    priced = set(long.loc[~blank & long["nav"].notna().to_numpy(), "fund_code"])
    for code, rows in hit.groupby("fund_code", sort=False):
        if code not in priced:
            add_issue(
                issues,
                str(code),
                f"기준가격이 모두 비어 있습니다 ({day_text(rows['date'].iloc[0])} 등 {len(rows)}건)",
            )


def nav_matrix(clean: pd.DataFrame) -> pd.DataFrame:
    """Long clean rows → dates × funds (NaN where a fund has no NAV that day)."""
    navs = clean.pivot(index="date", columns="fund_code", values="nav").sort_index()
    navs.columns = navs.columns.astype(str)
    navs.columns.name = None
    return navs


def meta_from_rows(long: pd.DataFrame) -> pd.DataFrame:
    """Descriptive columns carried on NAV rows (KOFIA exports): each fund's last non-blank value."""
    cols = [c for c in META_COLUMNS if c in long.columns]
    if not cols:
        return pd.DataFrame(index=pd.Index([], name="fund_code"))
    part = long[["fund_code", *cols]].copy()
    for c in cols:
        part[c] = part[c].where(~is_blank(part[c]), None)
    meta = part.groupby("fund_code", sort=False)[cols].last()
    meta.index = meta.index.astype(str)
    return meta


def apply_units(
    meta: pd.DataFrame, units: dict[str, tuple[str, str, float]], source: str, notes: list[str]
) -> pd.DataFrame:
    """Money columns as numbers in 원: a header unit (설정원본(억원)) multiplies; text like 1,234 is read."""
    for col in ("set_amount", "net_assets"):
        if col not in meta.columns:
            continue
        values = parse_numbers(meta[col].astype(object))
        header, unit, factor = units.get(col, (col, "원", 1.0))
        if col in units:
            notes.append(f"{source}: column {header!r} read in {unit} and converted to 원 (× {factor:,.0f})")
        meta[col] = values * factor
    return meta


def adjustments_from_rows(clean: pd.DataFrame, issues: dict[str, list[str]]) -> Adjustments | None:
    """Adjusted-NAV and distribution tables (dates × funds) from clean long rows; bad cells are fund issues.

    A value that is not a number, or a negative distribution, makes that fund an ``error``.
    """
    present = [c for c in ADJUSTMENT_COLUMNS if c in clean.columns]
    if not present:
        return None
    tables: dict[str, pd.DataFrame] = {}
    for col in present:
        raw = clean[col]
        values = parse_numbers(raw)
        blank = is_blank(raw)
        name = ADJUSTMENT_COLUMNS[col]
        unreadable = values.isna().to_numpy() & ~blank
        for _, r in first_per_fund(clean.assign(raw=raw.to_numpy()), unreadable).iterrows():
            add_issue(
                issues,
                r["fund_code"],
                f"숫자가 아닌 {name} '{r['raw']}' ({day_text(r['date'])}, 총 {int(r['count'])}건)",
            )
        if col != "adjusted_nav":
            negative = (values < 0).to_numpy()
            for _, r in first_per_fund(clean.assign(v=values.to_numpy()), negative).iterrows():
                add_issue(
                    issues,
                    r["fund_code"],
                    f"음수 {name} {r['v']:g} ({day_text(r['date'])}); 분배금은 0 이상이어야 합니다",
                )
        part = pd.DataFrame({"date": clean["date"], "fund_code": clean["fund_code"], "v": values})
        part = part.loc[part["v"].notna()]
        if not part.empty:
            table = part.pivot(index="date", columns="fund_code", values="v").sort_index()
            table.columns = table.columns.astype(str)
            tables[col] = table
    if not tables:
        return None
    return Adjustments(
        adjusted=tables.get("adjusted_nav"),
        distribution=tables.get("distribution"),
        rate=tables.get("distribution_rate"),
    )
