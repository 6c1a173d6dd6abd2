"""The grade badges' stylesheet, generated from the one palette (:meth:`GradeScale.colors`), served as an asset.

The Content-Security-Policy allows no inline style, so a badge cannot carry its colour in a ``style``
attribute; instead every (scale size, rank) pair gets a class, ``grade-badge gs5-r1``, written here once for
every scale size a rubric may declare. The badge's text colour is the one that contrasts more (WCAG), and the
grade is always written in the badge, so colour is never the only cue.
"""

from __future__ import annotations

from evaluator.methodology.rubric_scale import (
    ERROR_COLOR,
    NOT_RATED_COLOR,
    PROVISIONAL_COLOR,
    GradeScale,
    text_on,
)

MAX_GRADES = 10


def badge_class(scale: GradeScale, grade: int | None, status: str = "ok") -> str:
    """``grade-badge gs5-r1`` for a rated grade; the 미평가/오류/가등급 classes otherwise."""
    if status == "error":
        return "grade-badge grade-error"
    if grade is None or not scale.contains(grade) or status not in ("ok", "provisional"):
        return "grade-badge grade-none"
    extra = " grade-provisional" if status == "provisional" else ""
    return f"grade-badge gs{scale.grades}-r{scale.rank(grade)}{extra}"


def grades_css() -> bytes:
    """One rule per scale size and rank, plus 미평가, 오류 and 가등급."""
    lines = [".grade-badge { display: inline-block; padding: .05rem .45rem; border-radius: .6rem; font-weight: 700; }"]
    for n in range(1, MAX_GRADES + 1):
        scale = GradeScale(n)
        for grade, color in scale.colors().items():
            lines.append(f".gs{n}-r{scale.rank(grade)} {{ background: {color}; color: {text_on(color)}; }}")
    for name, color in (("none", NOT_RATED_COLOR), ("error", ERROR_COLOR)):
        lines.append(f".grade-{name} {{ background: {color}; color: {text_on(color)}; }}")
    lines.append(f".grade-provisional {{ outline: 2px dashed {PROVISIONAL_COLOR}; outline-offset: 1px; }}")
    lines.append(f".rank-best {{ color: {GradeScale().colors()[1]}; }}")  # the best grade's text, as its badge
    return ("\n".join(lines) + "\n").encode("utf-8")
