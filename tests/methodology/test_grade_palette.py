"""The grade palette is readable by everyone: every colour of every scale in the matrix (and every scale size a
rubric may declare) reaches 3:1 against white by the WCAG formula written here independently, and any two grades
of a scale stay apart for red–green colour-blind readers, simulated with colorspacious (Machado et al. 2009 at
full severity) and measured in CAM02-UCS. The 1등급 vs 5등급 pair that looked alike before is checked by name."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_grade_scale_matrix import SCALES

from evaluator.app.web.grade_styles import grades_css
from evaluator.methodology.rubric_scale import (
    DEFAULT_SCALE,
    ERROR_COLOR,
    NOT_RATED_COLOR,
    PROVISIONAL_COLOR,
    GradeScale,
    contrast_ratio,
    text_on,
)

colorspacious = pytest.importorskip("colorspacious")
MATRIX = {name: scale or DEFAULT_SCALE for name, scale in SCALES.items()}
EVERY_SIZE = {f"{n}-grades": GradeScale(n) for n in range(2, 11)}
CVD = ("deuteranomaly", "protanomaly")
APART = 10.0  # CAM02-UCS ΔE between any two grades of a matrix scale, as a red–green colour-blind reader sees them
APART_ANY_SIZE = 6.5  # the floor up to ten grades on one ramp (neighbours still apart side by side)


def _wcag_contrast(a: str, b: str) -> float:
    def lum(color: str) -> float:
        rgb = np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)]) / 255.0
        lin = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return float(lin @ np.array([0.2126, 0.7152, 0.0722]))

    la, lb = sorted((lum(a), lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _seen(color: str, cvd: str | None) -> np.ndarray:
    rgb = np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)]) / 255.0
    if cvd is not None:
        rgb = np.clip(colorspacious.cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100},
                                                   "sRGB1"), 0, 1)
    return colorspacious.cspace_convert(rgb, "sRGB1", "CAM02-UCS")


def _min_apart(colors: list[str], cvd: str | None) -> float:
    return min(float(np.linalg.norm(_seen(a, cvd) - _seen(b, cvd))) for a, b in itertools.combinations(colors, 2))


def test_the_contrast_formula_matches_known_pairs() -> None:
    assert _wcag_contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert _wcag_contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the well-known 4.48:1 grey
    assert contrast_ratio("#777777") == pytest.approx(_wcag_contrast("#777777", "#ffffff"), abs=1e-3)
    assert contrast_ratio("#fee08b") < 3  # the old 3등급 yellow fails, so the check can fail


@pytest.mark.parametrize("name", [*MATRIX, *EVERY_SIZE])
def test_every_grade_colour_reaches_3_to_1_on_white_and_its_badge_text_4_5(name: str) -> None:
    scale = {**MATRIX, **EVERY_SIZE}[name]
    for grade, color in scale.colors().items():
        assert _wcag_contrast(color, "#ffffff") >= 3.0, (scale.label(grade), color)
        assert _wcag_contrast(color, text_on(color)) >= 4.5, (scale.label(grade), color)


def test_status_colours_reach_3_to_1_and_stay_apart_from_every_grade() -> None:
    for color in (NOT_RATED_COLOR, ERROR_COLOR, PROVISIONAL_COLOR):
        assert _wcag_contrast(color, "#ffffff") >= 3.0, color
    grades = list(DEFAULT_SCALE.colors().values())
    for cvd in (None, *CVD):
        for status in (NOT_RATED_COLOR, PROVISIONAL_COLOR):
            assert min(float(np.linalg.norm(_seen(status, cvd) - _seen(g, cvd))) for g in grades) >= 10, (status, cvd)


@pytest.mark.parametrize("name", list(MATRIX))
def test_grades_of_every_matrix_scale_stay_apart_without_red_green_vision(name: str) -> None:
    colors = list(MATRIX[name].colors().values())
    for cvd in (None, *CVD):
        assert _min_apart(colors, cvd) >= APART, (name, cvd)


def test_every_scale_size_keeps_its_grades_apart() -> None:
    for name, scale in EVERY_SIZE.items():
        for cvd in (None, *CVD):
            assert _min_apart(list(scale.colors().values()), cvd) >= APART_ANY_SIZE, (name, cvd)


def test_best_and_worst_of_five_are_far_apart_for_red_green_colour_blindness() -> None:
    colors = DEFAULT_SCALE.colors()
    for cvd in CVD:
        assert float(np.linalg.norm(_seen(colors[1], cvd) - _seen(colors[5], cvd))) >= 30, cvd


def test_the_badge_stylesheet_holds_the_palette_for_every_size() -> None:
    css = grades_css().decode()
    for n in range(1, 11):
        scale = GradeScale(n)
        for grade, color in scale.colors().items():
            assert f".gs{n}-r{scale.rank(grade)} {{ background: {color}; color: {text_on(color)}; }}" in css
