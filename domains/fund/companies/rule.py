"""The 운용사 rating rule: the rubric's ``company_rating`` section, or the built-in rubric's when it has none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.domains.fund.rubric import default_rubric


@dataclass(frozen=True)
class Pillar:
    id: str
    name: str
    weight: float


@dataclass(frozen=True)
class CompanyRule:
    """What rates a company: minimum portfolios, what weighs them, the blend, the pillars and the bands."""

    min_funds: int
    size_field: str
    quantitative_weight: float
    qualitative_weight: float
    require_qualitative: bool
    pillars: tuple[Pillar, ...]
    bands: tuple[dict[str, Any], ...]
    source: str
    """``rubric`` when the rubric states the rule, ``default`` when the built-in rule was used."""

    @property
    def labels(self) -> dict[int, str]:
        return {int(b["grade"]): str(b["label"]) for b in self.bands}

    @property
    def scale(self) -> int:
        return len(self.bands)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "min_funds": self.min_funds,
            "size_field": self.size_field,
            "weights": {"quantitative": self.quantitative_weight, "qualitative": self.qualitative_weight},
            "require_qualitative": self.require_qualitative,
            "pillars": [{"id": p.id, "name": p.name, "weight": p.weight} for p in self.pillars],
            "bands": [dict(b) for b in self.bands],
        }


def company_rule(rubric: Mapping[str, Any], *, min_funds: int | None = None) -> CompanyRule:
    """The rule of ``rubric`` (validated already); ``min_funds`` overrides its minimum (e.g. ``--min-funds``)."""
    section = rubric.get("company_rating")
    source = "rubric"
    if not section:
        section, source = default_rubric()["company_rating"], "default"
    weights = section["weights"]
    return CompanyRule(
        min_funds=int(min_funds if min_funds is not None else section["min_funds"]),
        size_field=str(section["size_field"]),
        quantitative_weight=float(weights["quantitative"]),
        qualitative_weight=float(weights["qualitative"]),
        require_qualitative=bool(section.get("require_qualitative", False)),
        pillars=tuple(
            Pillar(str(p["id"]), str(p["name"]), float(p["weight"])) for p in section.get("pillars") or ()
        ),
        bands=tuple(dict(b) for b in section["bands"]),
        source=source,
    )
