"""The engine's tuning constants are declared once (``EngineParameters``) and both engines read that object:
the history engine keeps no number of its own that the single-date engine also decides."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from evaluator.domains.fund.engine import PARAMETERS, EngineParameters, calendar, checks, metrics, resets
from evaluator.domains.fund.history import metrics as history_metrics
from evaluator.domains.fund.history import prep as history_prep
from evaluator.domains.fund.history import resets as history_resets

FUND = Path(__file__).resolve().parents[2] / "domains" / "fund"
NAMES = {
    "TRADING_DAYS": "trading_days", "MRAR_GAMMA": "mrar_gamma", "FILL_LIMIT": "fill_limit",
    "MAX_GAP_DAYS": "max_gap_days", "MIN_DROP": "reset_min_drop", "Z_DROP": "reset_z_drop",
    "LANDING": "reset_landing", "STRIDE": "reset_stride", "WIDE": "reset_wide", "BASE": "reset_base",
    "PREFILTER": "reset_prefilter",
}  # fmt: skip


def test_every_parameter_is_read_by_the_engine() -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((FUND / "engine").glob("*.py")))
    fields = {f.name for f in dataclasses.fields(EngineParameters)}
    assert fields == set(NAMES.values())
    assert [f for f in sorted(fields) if f"PARAMETERS.{f}" not in text] == []


def test_both_engines_see_the_same_values() -> None:
    engine = {**vars(resets), **vars(calendar), **vars(checks), **vars(metrics)}
    history = {**vars(history_resets), **vars(history_prep), **vars(history_metrics)}
    for name, field in NAMES.items():
        value = getattr(PARAMETERS, field)
        assert engine[name] == value and type(engine[name]) is type(value), name
        if name in history:
            assert history[name] == value and type(history[name]) is type(value), name
    assert {"BASE", "Z_DROP", "STRIDE", "FILL_LIMIT", "MAX_GAP_DAYS", "TRADING_DAYS", "MRAR_GAMMA"} <= set(history)


def literal_constants(folder: Path) -> list[str]:
    """Module-level assignments of a number to one of the engine's constant names."""
    hits = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                targets = [t for n in node.targets for t in (n.elts if isinstance(n, ast.Tuple) else [n])]
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                for target, value in zip(targets, values, strict=False):
                    is_number = isinstance(value, ast.Constant) or (
                        isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant)
                    )
                    if isinstance(target, ast.Name) and target.id in NAMES and is_number:
                        hits.append(f"{path.name}:{node.lineno} {target.id}")
    return hits


@pytest.mark.parametrize("room", ["engine", "history"])
def test_no_room_declares_an_engine_constant_again(room: str) -> None:
    assert literal_constants(FUND / room) == []


def test_the_declaration_check_sees_a_copied_number(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("BASE = 1000.0\nTOL, PREFILTER = 1e-7, -0.005\nSTRIDE = P.stride\n", encoding="utf-8")
    assert literal_constants(tmp_path) == ["x.py:1 BASE", "x.py:2 PREFILTER"]


def test_the_parameters_cannot_be_changed_in_place() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PARAMETERS.reset_base = 500.0  # type: ignore[misc]
