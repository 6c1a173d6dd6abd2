"""Which stored rows a caller sees: the scope filter (an admin sees all; a client its companies and funds) and
each fund's newest result (overall or at one as-of date). The queries and the scale view both filter with these,
so they sit below both."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, and_, false, func, or_, select, true
from sqlalchemy.orm import aliased

from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.tables import FundResult


def visible(principal: Principal, table: Any = FundResult) -> ColumnElement[bool]:
    if principal.admin:
        return true()
    terms = []
    if principal.companies:
        terms.append(table.company.in_(principal.companies))
    if principal.funds:
        terms.append(table.fund_code.in_(principal.funds))
    return or_(*terms) if terms else false()


def latest_for(as_of: dt.date | None) -> ColumnElement[bool]:
    """Rows that are each fund's newest result, overall or for one as-of date."""
    if as_of is None:
        return FundResult.is_current.is_(True)
    newer = aliased(FundResult)
    latest_run = (
        select(func.max(newer.run_id))
        .where(newer.fund_code == FundResult.fund_code, newer.as_of == as_of)
        .scalar_subquery()
    )
    return and_(FundResult.as_of == as_of, FundResult.run_id == latest_run)
