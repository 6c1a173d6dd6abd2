"""The quantitative side of every 운용사 rating at every as-of date of a grade history, in one numpy pass.

:func:`~evaluator.domains.fund.companies.rating.rate_companies` rates one date with pandas group-bys; a
history of 60 dates × 15,000 funds spent most of its company time in their per-call overhead. Here every
(date, portfolio) and every (date, company) is one group of flat arrays, so all dates are summed together.

Equal to the single-date rating to the bit: pandas adds a group's values in row order with Kahan
compensation, and :func:`kahan_sums` repeats that arithmetic exactly, vectorised over the groups (round r adds
every group's r-th value); the portfolios of a company are added in the order their first counted class
appears, as pandas' ``groupby(sort=False)`` lists them. ``tests/fund/test_company_history.py`` compares the
two on varied universes. Hand-written, not a library: no library reproduces pandas' summation order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def kahan_sums(group: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """Per group id (``0 … groups − 1``) the sum of its values in array order, as pandas' group-by sums them."""
    total = np.zeros(groups)
    comp = np.zeros(groups)
    if group.size == 0:
        return total
    order = np.argsort(group, kind="stable")
    g = group[order]
    start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.arange(g.size) - np.repeat(start, np.diff(np.r_[start, g.size]))
    by_round = order[np.argsort(rank, kind="stable")]  # each group's 1st values, then its 2nd values, …
    bounds = np.r_[0, np.cumsum(np.bincount(rank))]
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        at = by_round[lo:hi]
        ids = group[at]  # distinct within a round
        old = total[ids]
        with np.errstate(invalid="ignore"):
            y = values[at] - comp[ids]
            t = old + y
            c = (t - old) - y
        c[np.isnan(c)] = 0.0  # an infinite value: pandas resets the compensation so the sum stays infinite
        comp[ids] = c
        total[ids] = t
    return total


@dataclass
class CompanySums:
    """Per (date, company) cell, ``date · companies + company``: what the funds counted there add up to."""

    quantitative: np.ndarray
    """Size-weighted mean of the portfolios' scores (NaN where no fund counts)."""
    portfolios: np.ndarray
    classes: np.ndarray
    size: np.ndarray
    """Summed size of the counted portfolios (NaN where no fund counts)."""


def company_sums(
    day: np.ndarray,
    company: np.ndarray,
    portfolio: np.ndarray,
    score: np.ndarray,
    size: np.ndarray,
    days: int,
    companies: int,
) -> CompanySums:
    """The sums of :func:`rate_companies` for the counted fund rows of all dates at once.

    Rows come date by date, each date's rows in the order the single-date rating reads them. ``company``:
    company ids; ``portfolio``: ids of (company, portfolio) pairs; ``size``: each class's size (1 when the
    rule weighs portfolios equally).
    """
    cells = days * companies
    pairs = int(portfolio.max()) + 1 if portfolio.size else 1
    key = day.astype(np.int64) * pairs + portfolio
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    label = np.empty(uniq.size, dtype=np.int64)
    seen = np.argsort(first)  # portfolios in the order their first counted class appears
    label[seen] = np.arange(uniq.size)
    gid = label[inverse.ravel()]
    port_size = kahan_sums(gid, size, uniq.size)
    k = np.bincount(gid, minlength=uniq.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        port_score = kahan_sums(gid, score, uniq.size) / k
    rows = first[seen]  # each portfolio's first row: its date and company
    cell = day[rows].astype(np.int64) * companies + company[rows]
    total = kahan_sums(cell, port_size, cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = port_size / total[cell]
        quant = kahan_sums(cell, weight * port_score, cells)
    n = np.bincount(cell, minlength=cells)
    classes = np.bincount(cell, weights=k, minlength=cells).astype(int)
    some = n > 0
    return CompanySums(
        quantitative=np.where(some, quant, np.nan),
        portfolios=n,
        classes=classes,
        size=np.where(some, total, np.nan),
    )
