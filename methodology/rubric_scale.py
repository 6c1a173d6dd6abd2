"""Grade scales and provisional grades: how many grades a rubric has, which end is best, how they are written.

Firms publish 1등급–5등급 with 1 best, 1–5 stars with 5★ best, and other counts (3–10). Internally a grade
is always the integer the firm prints (the number of stars for a star scale); the rubric's bands are listed
from the best grade down, so ranking code never needs to know which end is best. Only the wording, the
distributions' column order and "one band off" read the scale, all through :class:`GradeScale`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STAR = "★"
DEFAULT_PREFIX = "가"


@dataclass(frozen=True)
class GradeScale:
    """``grades`` grades numbered 1..N; ``best`` ``low`` (1등급 best) or ``high`` (5★ best)."""

    grades: int = 5
    best: str = "low"
    style: str = "number"

    def best_first(self) -> tuple[int, ...]:
        """Every grade, best first (``1..5`` or ``5..1``): the order of bands, distributions and plots."""
        up = tuple(range(1, self.grades + 1))
        return up if self.best == "low" else up[::-1]

    def contains(self, grade: Any) -> bool:
        return isinstance(grade, int) and not isinstance(grade, bool) and 1 <= grade <= self.grades

    def label(self, grade: int) -> str:
        """How the firm writes it: ``3등급`` or ``★★★``."""
        return STAR * grade if self.style == "stars" else f"{grade}등급"

    def best_grade(self) -> int:
        return self.best_first()[0]

    def worst_grade(self) -> int:
        return self.best_first()[-1]

    def rank(self, grade: int) -> int:
        """1 for the best grade, N for the worst: what every "best first" order sorts on."""
        return grade if self.best == "low" else self.grades + 1 - grade

    def provisional_label(self, grade: int, prefix: str = DEFAULT_PREFIX) -> str:
        return f"{prefix}{self.label(grade)}"

    def spec(self) -> dict[str, Any]:
        """The ``grade_scale`` document (what summaries, reports and the database carry)."""
        return {"grades": self.grades, "best": self.best, "style": self.style}

    def describe(self) -> str:
        """Korean wording of the scale, for messages: ``★~★★★★★ (★★★★★ 최고)``."""
        return f"{self.label(self.best_grade())}~{self.label(self.worst_grade())} 체계({self.grades}단계)"

    def colors(self) -> dict[int, str]:
        """Each grade's colour by its rank from the best: dark blue (best) through grey to dark brown (worst).

        Every scale's colours are read off :data:`GRADE_COLORS` by rank (a few lines of arithmetic, so pages
        and API need no plotting library); the ramp keeps every colour at ≥ 3:1 against white and any two
        grades of a scale apart for red–green colour-blind readers (tests simulate it for 3–10 grades)."""
        n = self.grades
        out: dict[int, str] = {}
        for g in self.best_first():
            pos = (self.rank(g) - 1) / max(1, n - 1) * (len(GRADE_COLORS) - 1)
            lo = min(int(pos), len(GRADE_COLORS) - 2)
            out[g] = _mix(GRADE_COLORS[lo], GRADE_COLORS[lo + 1], pos - lo)
        return out

    def text_colors(self) -> dict[int, str]:
        """The text colour on each grade's badge: black or white, whichever contrasts more (WCAG)."""
        return {g: text_on(c) for g, c in self.colors().items()}


DEFAULT_SCALE = GradeScale()
GRADE_COLORS = ("#08306b", "#2171b5", "#6b8fb0", "#8c7f6a", "#c06a12", "#8c2d04")
"""The grade ramp, best (dark blue) to worst (dark brown): blue against orange-brown and a falling then
rising lightness, so grades stay apart without red–green vision; each ≥ 3:1 against white."""
NOT_RATED_COLOR = "#4d4d4d"
ERROR_COLOR = "#1a1a1a"
PROVISIONAL_COLOR = "#b0418f"
"""미평가, 오류 and 가등급 in charts: apart from every grade colour, each ≥ 3:1 against white."""


def relative_luminance(color: str) -> float:
    """WCAG 2.x relative luminance of ``#rrggbb``."""
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a: str, b: str = "#ffffff") -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_on(background: str) -> str:
    return "#ffffff" if contrast_ratio(background, "#ffffff") >= contrast_ratio(background, "#000000") else "#000000"


def _mix(a: str, b: str, t: float) -> str:
    ca, cb = (tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in (a, b))
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb, strict=True))


def scale_of(spec: Any) -> GradeScale:
    """The scale a ``grade_scale`` document names (a summary's, a stored batch's), or the default one."""
    return grade_scale({"grade_scale": spec} if isinstance(spec, Mapping) else None)


def grade_scale(rubric: Mapping[str, Any] | None) -> GradeScale:
    """The rubric's declared scale, or five grades with 1 best."""
    spec = (rubric or {}).get("grade_scale")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("grades"), int):
        return DEFAULT_SCALE  # absent, or malformed (the schema reports that)
    return GradeScale(int(spec["grades"]), str(spec.get("best", "low")), str(spec.get("style", "number")))


def band_label(rubric: Mapping[str, Any], grade: int) -> str:
    """The band's own label (``2등급``, ``★★★★``), else the scale's wording."""
    for band in rubric.get("grade_bands", ()):
        if band.get("grade") == grade:
            return str(band["label"])
    return grade_scale(rubric).label(grade)


def provisional_label(rubric: Mapping[str, Any], grade: int) -> str:
    """``가2등급``: the rubric's prefix (가 by default) before the band's label."""
    spec = rubric.get("provisional") or {}
    return f"{spec.get('label_prefix', DEFAULT_PREFIX)}{band_label(rubric, grade)}"


def band_problems(bands: list[Any], scale: GradeScale) -> list[str]:
    """Bands cover grades 1..N of the scale once each, best first."""
    problems: list[str] = []
    grades = [b.get("grade") for b in bands if isinstance(b, Mapping)]
    first, last = scale.label(scale.best_grade()), scale.label(scale.worst_grade())
    for g in scale.best_first():
        if g not in grades:
            problems.append(f"missing grade band for {scale.label(g)}; bands must cover {first} to {last} once each")
    for g in sorted({g for g in grades if isinstance(g, int) and not scale.contains(g)}):
        problems.append(f"grade band {g} is outside the rubric's scale of {scale.grades} grades")
    dupes = sorted({g for g in grades if grades.count(g) > 1 and isinstance(g, int)})
    for g in dupes:
        problems.append(f"grade band {scale.label(g)} is listed {grades.count(g)} times")
    order = list(scale.best_first())
    listed = not dupes and all(isinstance(g, int) for g in grades) and set(grades) <= set(order)
    if listed and grades != [g for g in order if g in grades]:
        problems.append(f"grade bands must be listed from {first} (best) to {last}")
    return problems


def provisional_problems(spec: Any, eligibility: Any, periods: Mapping[str, int]) -> list[str]:
    """A provisional rule an analyst can act on: a known window the young funds have, a range below the regular one."""
    if not isinstance(spec, Mapping):
        return []
    problems: list[str] = []
    lo, hi, window = spec.get("min_history_years"), spec.get("max_history_years"), spec.get("window")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (lo, hi)):
        return problems  # the schema reported it
    if lo >= hi:
        problems.append(f"the provisional (가등급) range starts at {lo:g} years but ends at {hi:g}; it must end later")
    if window not in periods:
        problems.append(f"the provisional (가등급) window {window!r} is unknown; use one of {', '.join(periods)}")
    elif periods[str(window)] > lo:
        problems.append(
            f"the provisional (가등급) window {window} is longer than the {lo:g} years of history its range starts at"
        )
    regular = eligibility.get("min_history_years") if isinstance(eligibility, Mapping) else None
    if isinstance(regular, (int, float)) and hi > regular:
        problems.append(
            f"the provisional (가등급) range ends at {hi:g} years, beyond the {regular:g} years from which funds get "
            "regular grades; a fund would fall under both rules"
        )
    return problems
