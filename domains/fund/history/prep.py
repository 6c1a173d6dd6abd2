"""The grade history's one-time preparation, and each as-of date's statuses read from it.

``fund evaluate --as-of D`` truncates the data at D and rebuilds everything (calendar, total-return
levels, checks, reset detection). Most of that is the same for every D: on rows ≤ D the levels of a fund
that has its own NAV on D are exactly the levels built from the whole file, because the calendar, the
carrying-forward of short gaps and the distribution factors only look backwards. :class:`CrossDate`
builds them once; :meth:`CrossDate.flags` then gives a date's error / not-rated / eligible masks with
the engine's rules, reusing its functions where they are per fund (reset detection, the truncated
checks of funds without a NAV on D).

A fund whose distributions the truncated data dates differently (ex-date or one row early: the
decision weighs all its distributions so far) gets its levels rebuilt for that date, and the engine's
own metrics on them. Where a date breaks an assumption (its calendar is not a prefix of the whole
file's; a fund without a benchmark would be tested for resets against peer medians that the truncation
changes), :meth:`CrossDate.flags` returns None and the caller grades that date with the single-date
engine instead, so no answer changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluator.domains.fund.data import Universe
from evaluator.domains.fund.engine import (
    PARAMETERS,
    Events,
    FundFlags,
    MajorityByRow,
    align_distributions,
    apply_distributions,
    benchmark_matrix,
    benchmark_order,
    check_adjusted,
    check_matrix,
    clean_meta_text,
    detect_resets,
    distribution_events,
    family_codes,
    find_end_typos,
    find_outliers,
    fund_codes,
    fund_matrix,
    levels_for,
    market_calendar,
    meta_by_code,
    meta_column,
    peer_mean_returns,
    qualitative_scores,
    risk_free_rates,
    sample,
    set_amounts,
    visible,
    window_start_row,
)
from evaluator.domains.fund.history.flags import DateFlags
from evaluator.domains.fund.history.resets import ResetScreen
from evaluator.methodology.rubric import PERIODS, eligibility_for, peer_groups_of

FILL_LIMIT, MAX_GAP_DAYS = PARAMETERS.fill_limit, PARAMETERS.max_gap_days  # the engine's own limits


def _first_true(mask: np.ndarray, after: np.ndarray | None = None) -> np.ndarray:
    """Per column: the first row where ``mask`` holds (rows ≤ ``after`` ignored); len(mask) where none."""
    if after is not None:
        mask = mask & (np.arange(mask.shape[0])[:, None] > after[None, :])
    hit = mask.any(axis=0)
    return np.where(hit, mask.argmax(axis=0), mask.shape[0])


class CrossDate:
    """Everything the engine derives from the data, built once for all as-of dates (engine fund order)."""

    def __init__(
        self,
        universe: Universe,
        rubric: Mapping[str, Any],
        *,
        allow_unadjusted: bool = False,
        dates: Sequence[pd.Timestamp] | None = None,
        outliers: str = "error",
    ):
        self.rubric, self.allow = rubric, allow_unadjusted
        self._meta(universe)
        self._levels(universe, dates)
        self._market(universe)
        self.outlier_mode = outliers
        self.outliers = find_outliers(self.levels, self.groups, self.bench_levels, self.bench_of_fund)
        self._reset_screen()
        self._eligibility_rules()

    # ---- one-time pieces ------------------------------------------------------------------------
    def _meta(self, universe: Universe) -> None:
        """Fund codes in engine order, and what META says per fund (as the single-date engine reads it)."""
        issues = universe.issues or {}
        codes = fund_codes(universe.navs, issues)
        meta = meta_by_code(universe.meta)
        self.input_codes = codes
        self.codes = benchmark_order(codes, meta, universe.benchmark)
        where = {c: i for i, c in enumerate(self.codes)}
        self.to_input = np.array([where[c] for c in codes])
        self.types = clean_meta_text(meta_column(meta, self.codes, "type"))
        self.groups = np.array([t if t is not None else "" for t in self.types], dtype=object)
        flags = FundFlags()
        for code, reasons in issues.items():
            if reasons:
                flags.error(where[str(code)], str(reasons[0]))
        self.qualitative = qualitative_scores(dict(self.rubric), meta, self.codes, flags)
        self.static_error = np.zeros(len(self.codes), dtype=bool)
        self.static_error[list(flags.errors)] = True
        self.amounts = set_amounts(meta, self.codes)
        self.families = family_codes(meta, self.codes)

    def _levels(self, universe: Universe, dates: Sequence[pd.Timestamp] | None) -> None:
        """Total-return levels from the whole file, sampled onto its calendar, and where each fund's
        first hole, non-positive level and calendar gap fall (what each date's checks read)."""
        frame = universe.navs.copy(deep=False)
        frame.columns = [str(c) for c in frame.columns]
        self.navs = frame
        self.nav_dates = pd.DatetimeIndex(frame.index)
        self.raw = fund_matrix(frame, self.codes)  # row-major, as the engine builds it
        self.calendar_file = universe.calendar
        self.majority = MajorityByRow(np.isfinite(self.raw), self.nav_dates)  # every date's calendar, one pass
        self.adjustments = universe.adjustments
        self.benchmark = universe.benchmark
        self.cal, _ = self._calendar(len(self.nav_dates) - 1)
        self.ends = (
            None
            if dates is None
            else [int(self.cal.searchsorted(pd.Timestamp(d).normalize(), side="right")) - 1 for d in dates]
        )
        built = levels_for(self.raw.copy(), self.nav_dates, self.codes, self.adjustments, self.groups)
        self.source = built.source
        self.shifted = built.realigned
        lv = built.levels
        adjusted = self.source == "adjusted"
        with np.errstate(invalid="ignore"):
            none = np.full(len(self.codes), len(self.nav_dates))
            self.first_missing_adj = (
                _first_true(np.isfinite(self.raw) & ~np.isfinite(lv) & adjusted) if adjusted.any() else none
            )
            self.first_bad_adj = _first_true((lv <= 0) & adjusted) if adjusted.any() else none
        self._events(built)
        sampled = sample(lv, self.nav_dates, self.cal)
        self.nav_levels = lv
        """Total-return levels on the NAV dates (before sampling onto the calendar), engine fund order."""
        del built
        self.levels = sampled.values
        present = np.isfinite(self.levels)
        has_any = present.any(axis=0)
        self.first = np.where(has_any, present.argmax(axis=0), len(self.cal))
        self.first_hole = _first_true(~present, self.first)
        with np.errstate(invalid="ignore"):
            self.first_nonpos = _first_true(self.levels <= 0)
        gap_rows = (
            np.flatnonzero(np.diff(self.cal.to_numpy()).astype("timedelta64[D]").astype(int) > MAX_GAP_DAYS)
            + 1
        )
        nxt = np.searchsorted(gap_rows, self.first, side="right")  # the first calendar gap after the start
        padded = np.r_[gap_rows, len(self.cal)]
        self.next_gap = padded[nxt]

    def _market(self, universe: Universe) -> None:
        """Risk-free rates and benchmark levels (and returns) on the whole file's calendar."""
        self.rf = risk_free_rates(universe.risk_free, self.cal)
        bench_levels, bench_of_fund, _ = benchmark_matrix(self.benchmark, self.cal, self.types, FundFlags())
        self.bench_levels, self.bench_of_fund = bench_levels, bench_of_fund
        self.bench_returns = None
        if bench_levels is not None and bench_of_fund is not None:
            with np.errstate(all="ignore"):
                b = np.full_like(bench_levels, np.nan)
                b[1:] = bench_levels[1:] / bench_levels[:-1] - 1.0
            self.bench_returns = b
        self.no_bench_raw = np.zeros(len(self.codes), dtype=bool)

    def _calendar(self, k: int) -> tuple[pd.DatetimeIndex, str]:
        dates = self.nav_dates[: k + 1]
        cal, rule = market_calendar(self.raw[: k + 1], dates, self.calendar_file, self.majority.upto(k))
        if len(cal) == 0:
            cal, rule = dates, "union"
        return cal, rule

    def _events(self, built: Any) -> None:
        """The distribution events ``levels_for`` aligned, kept so each date's dating decision can be redone."""
        adj, dates, codes = self.adjustments, self.nav_dates, self.codes
        self.ev = Events.none()
        self.ev_rate = np.zeros(0, dtype=bool)
        if adj is None or adj.empty():
            return
        dist, _ = distribution_events(adj.distribution, dates, codes)
        rate, _ = distribution_events(adj.rate, dates, codes)
        use_dist, use_rate = self.source == "distribution", self.source == "rate"
        keep_d, keep_r = use_dist[dist.cols], use_rate[rate.cols]
        self.ev = Events(
            np.r_[dist.rows[keep_d], rate.rows[keep_r]],
            np.r_[dist.cols[keep_d], rate.cols[keep_r]],
            np.r_[dist.values[keep_d], rate.values[keep_r]],
        )
        self.ev_rate = np.r_[np.zeros(keep_d.sum(), dtype=bool), np.ones(keep_r.sum(), dtype=bool)]
        if self.ev.rows.size == 0:
            return
        pre = self.raw.copy()
        replaced = self.source == "adjusted"
        pre[:, replaced] = built.levels[:, replaced]  # what levels_for's peer means read
        means = peer_mean_returns(pre, self.groups, np.unique(self.ev.cols))
        del pre
        keys = list(means)
        self.ev_means = np.stack([means[g] for g in keys])
        index = {g: i for i, g in enumerate(keys)}
        self.ev_group = np.array([index[self.groups[c]] for c in self.ev.cols.tolist()])

    def _reset_screen(self) -> None:
        """Raw-NAV funds: from which row on the reset detector may find something (the screen's sums)."""
        n = len(self.codes)
        self.reset_cell_row = np.full(n, len(self.cal))
        self.screen: ResetScreen | None = None
        raw = np.flatnonzero(self.source == "raw")
        if raw.size == 0:
            return
        col = self.bench_of_fund if self.bench_of_fund is not None else np.full(n, -1)
        if self.bench_returns is None:
            col = np.full(n, -1)
        self.screen = ResetScreen(self.levels, raw, self.bench_returns, col[raw], self.ends)
        self.reset_cell_row[raw] = self.screen.first_row
        self.no_bench_raw = np.zeros(n, dtype=bool)
        self.no_bench_raw[raw] = col[raw] < 0

    def _eligibility_rules(self) -> None:
        rubric = self.rubric
        groups = set(peer_groups_of(rubric, self.types.tolist()))
        n = len(self.codes)
        self.bad_type = np.array([t is None or t not in groups for t in self.types], dtype=bool)
        self.min_years = np.zeros(n)
        self.min_amount = np.zeros(n)
        for t in set(self.types.tolist()):
            rules = eligibility_for(rubric, t)
            sel = np.array([x == t for x in self.types], dtype=bool)
            self.min_years[sel] = rules["min_history_years"]
            self.min_amount[sel] = rules["min_set_amount_krw"]
        self.type_code = pd.factorize(self.groups)[0]

    # ---- per date ---------------------------------------------------------------------------------
    def covers(self, e: int, years: float) -> np.ndarray:
        row = window_start_row(self.cal[: e + 1], self.cal[e], years)
        n = len(self.codes)
        return np.zeros(n, dtype=bool) if row is None else (self.first <= row)

    def flags(self, when: pd.Timestamp) -> DateFlags | None:
        """A date's masks, or None when the date must be graded by the single-date engine."""
        when = pd.Timestamp(when).normalize()
        e = int(self.cal.searchsorted(when, side="right")) - 1
        k = int(self.nav_dates.searchsorted(when, side="right")) - 1
        if e < 0 or k < 0 or self.cal[e] != when:
            return None
        cal_d, _ = self._calendar(k)
        if len(cal_d) != e + 1 or not cal_d.equals(self.cal[: e + 1]):
            return None
        redated = self._redated(k, e)
        n = len(self.codes)
        own = np.zeros(n, dtype=bool)
        if self.nav_dates[k] == when:  # a NAV of its own on the date (not carried forward onto it)
            own = np.isfinite(self.raw[k]) & np.isfinite(self.levels[e])
        errored = self.static_error | (self.first_missing_adj <= k) | (self.first_bad_adj <= k)
        errored |= (self.first_hole < e) | (self.first_nonpos <= e) | (self.next_gap <= e)
        others = np.flatnonzero(~own)
        errored[others] = self.static_error[others] | self._truncated_errors(others, k, e)
        tails = ~own & np.isfinite(self.levels[e])  # filled on the date in the whole file, not when truncated
        typos = self._outliers(e, tails)
        if typos is None:
            return None
        errored |= typos
        not_rated = ~own & ~errored
        changed = tails.copy()  # funds whose levels on rows ≤ e differ from the whole file's
        if redated is not None:
            changed[redated[0]] = True
        resets = self._resets(e, own & ~errored, changed)
        if resets is None:
            return None
        if not self.allow:
            not_rated |= resets
        not_rated |= self._ineligible(e, errored)
        eligible = ~errored & ~not_rated
        min_peers = int(self.rubric["eligibility"]["min_peer_group_size"])
        sizes = np.bincount(self.type_code[eligible], minlength=self.type_code.max() + 1)[self.type_code]
        eligible &= sizes >= min_peers
        return DateFlags(
            row=e,
            errored=errored,
            eligible=eligible,
            measured=own & ~errored,
            weights=self._weights(e),
            redated=redated,
        )

    def _outliers(self, e: int, tails: np.ndarray) -> np.ndarray | None:
        """Funds the date's evaluation finds in error for NAV outliers; None when only the single-date engine
        can say (a repaired or kept episode changes levels or reset rows; an episode so recent that a peer's
        carried-forward tail could move the peer median it was judged against)."""
        out = np.zeros(len(self.codes), dtype=bool)
        found = visible(self.outliers, self.cal, e, self.cal[e])
        bench = None if self.bench_levels is None else self.bench_levels[: e + 1]
        ends = find_end_typos(
            self.levels[: e + 1], self.groups, bench, self.bench_of_fund, set(found.episodes), self.first
        )
        if ends.funds():  # an end-of-series typo: the date's evaluation refuses it (or repairs or keeps it)
            if self.outlier_mode != "error" or tails.any():
                return None
            out[list(ends.funds())] = True
        if not found.episodes:
            return out
        if self.outlier_mode != "error":
            return None
        if tails.any() and max(end for eps in found.episodes.values() for _, end in eps) >= e - FILL_LIMIT:
            return None
        out[list(found.episodes)] = True
        return out

    def _redated(self, k: int, e: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Funds whose distribution dating (ex-date or one row early), decided on rows ≤ k, differs from the
        whole file's, with their levels on the date's calendar built the engine's way; None if there are none."""
        if self.ev.rows.size == 0:
            return None
        sel = self.ev.rows <= k
        if not sel.any():
            return None
        rows, cols = self.ev.rows[sel], self.ev.cols[sel]
        g = self.ev_group[sel]
        market = np.stack([self.ev_means[g, rows], self.ev_means[g, np.minimum(rows + 1, k)]])
        on_ex, realigned = align_distributions(
            self.raw[: k + 1], Events(rows, cols, self.ev.values[sel]), self.ev_rate[sel], market
        )
        touched = np.unique(cols)
        diff = touched[realigned[touched] != self.shifted[touched]]
        if diff.size == 0:
            return None
        keep = np.isin(on_ex.cols, diff)
        events = Events(on_ex.rows[keep], np.searchsorted(diff, on_ex.cols[keep]), on_ex.values[keep])
        nav = self.raw[: k + 1, diff].copy()
        levels = apply_distributions(nav, events, out=nav)
        return diff, sample(levels, self.nav_dates[: k + 1], self.cal[: e + 1]).values

    def _truncated_errors(self, cols: np.ndarray, k: int, e: int) -> np.ndarray:
        """Errors of funds without a NAV on the date, from the engine's own checks on the truncated data."""
        if cols.size == 0:
            return np.zeros(0, dtype=bool)
        codes = [self.codes[i] for i in cols.tolist()]
        nav = self.raw[: k + 1, cols].copy()
        dates = self.nav_dates[: k + 1]
        flags = FundFlags()
        built = levels_for(nav, dates, codes, self.adjustments, self.groups[cols], inplace=True)
        check_adjusted(built, dates, flags)
        sampled = sample(built.levels, dates, self.cal[: e + 1])
        check_matrix(sampled.values, self.cal[: e + 1], self.cal[e], flags)
        out = np.zeros(cols.size, dtype=bool)
        out[list(flags.errors)] = True
        return out

    def _resets(self, e: int, candidates: np.ndarray, changed: np.ndarray) -> np.ndarray | None:
        """Funds the reset detector flags on the date (run only on funds the screen cannot clear)."""
        run = candidates & (self.source == "raw") & (self.reset_cell_row <= e)
        if self.screen is not None:
            cols = self.screen.cols
            run[cols] &= self.screen.must_run(e)
        out = np.zeros(len(self.codes), dtype=bool)
        if not run.any():
            return out
        medians = run & self.no_bench_raw  # tested against their peer group's median return
        if medians.any() and changed.any() and set(self.groups[medians]) & set(self.groups[changed]):
            return None  # that median would read levels the truncated data does not have
        bench = None
        if self.bench_returns is not None and self.bench_of_fund is not None:
            bench = (self.bench_returns[: e + 1], self.bench_of_fund)
        found = detect_resets(self.levels[: e + 1], run, self.groups, bench)
        out[list(found.rows)] = True
        return out

    def _ineligible(self, e: int, errored: np.ndarray) -> np.ndarray:
        history_known = self.first <= e
        out = self.bad_type.copy()
        for years in np.unique(self.min_years):
            sel = self.min_years == years
            out |= sel & history_known & ~self.covers(e, float(years))
        with np.errstate(invalid="ignore"):
            out |= np.isfinite(self.amounts) & (self.amounts < self.min_amount)
        return out & ~errored

    def _weights(self, e: int) -> np.ndarray:
        names = list(PERIODS)
        out = np.zeros((len(self.codes), len(names)))
        for rule in self.rubric["period_weights"]:
            hit = self.covers(e, float(rule["min_history_years"]))
            out[hit] = np.array([float(rule["weights"].get(p, 0.0)) for p in names])
        return out
