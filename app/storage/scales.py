"""Which grade scale the stored results a caller sees are on, so lists, filters, charts and labels follow it.

Every batch stores its rubric's scale (``runs.grade_scale``; none means five grades with 1 best). A view of
results (the newest per fund, or one as-of date) may span batches; when those batches use different scales
the view says so (``mixed``) instead of putting ★★★★★ and 5등급 in one column.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evaluator.app.storage.apikeys import Principal
from evaluator.app.storage.scopes import latest_for, visible
from evaluator.app.storage.tables import FundResult, Run
from evaluator.methodology.rubric_scale import DEFAULT_SCALE, GradeScale, scale_of

__all__ = ["ScaleView", "in_view", "label", "of_runs", "scale_of"]


@dataclass(frozen=True)
class ScaleView:
    """The scales of the batches behind one view; ``scale`` is the one to draw on (the newest batch's)."""

    scales: tuple[GradeScale, ...]

    @property
    def scale(self) -> GradeScale:
        return self.scales[0] if self.scales else DEFAULT_SCALE

    @property
    def mixed(self) -> bool:
        return len(self.scales) > 1

    def allowed_grades(self) -> list[int]:
        """Every grade of every scale in view, best first on the main scale (a filter accepts these)."""
        out = list(self.scale.best_first())
        out += sorted({g for s in self.scales[1:] for g in s.best_first()} - set(out))
        return out

    def message(self) -> str | None:
        """Korean note for pages and API answers when the batches in view use different scales."""
        if not self.mixed:
            return None
        names = ", ".join(s.describe() for s in self.scales)
        return (f"등급 체계가 서로 다른 평가가 섞여 있습니다({names}). 등급은 각 평가의 체계로 읽어야 하며, "
                "체계가 다른 평가끼리는 등급을 비교하지 않습니다.")

    @classmethod
    def of(cls, specs: Any) -> ScaleView:
        """The view of ``grade_scale`` documents, the first one's scale first."""
        seen: list[GradeScale] = []
        for spec in specs:
            s = scale_of(spec)
            if s not in seen:
                seen.append(s)
        return cls(tuple(seen))

    def document(self) -> dict[str, Any]:
        """The scale block of an API answer."""
        return {"grade_scale": self.scale.spec(), "mixed_scales": self.mixed,
                "grade_scales": [s.spec() for s in self.scales], "scale_note": self.message()}


def in_view(session: Session, who: Principal, as_of: dt.date | None = None) -> ScaleView:
    """Scales of the batches holding the caller's newest results (or those at ``as_of``), newest batch first."""
    holds = select(FundResult.run_id).where(visible(who), latest_for(as_of)).distinct().scalar_subquery()
    rows = session.execute(select(Run.grade_scale).where(Run.id.in_(holds)).order_by(Run.as_of.desc(),
                                                                                     Run.id.desc()))
    return ScaleView.of(spec for (spec,) in rows)


def of_runs(session: Session, run_ids: list[int]) -> dict[int, GradeScale]:
    """Each listed batch's scale."""
    if not run_ids:
        return {}
    rows = session.execute(select(Run.id, Run.grade_scale).where(Run.id.in_(sorted(set(run_ids)))))
    return {run_id: scale_of(spec) for run_id, spec in rows}


def label(scale: GradeScale, grade: int | None, status: str = "ok") -> str | None:
    """How the firm writes one stored grade: ``★★★``, ``3등급``, ``가3등급`` for a provisional one."""
    if grade is None or not scale.contains(grade):
        return None
    return scale.provisional_label(grade) if status == "provisional" else scale.label(grade)
