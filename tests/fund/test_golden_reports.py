"""Reports of fixed gsm8k and fund completions keep every number of the reports recorded before contract 2.0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_reports import BUILDERS, GOLDEN, build, differences


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_report_matches_golden(name: str, tmp_path: Path) -> None:
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert differences(golden, build(name, tmp_path)) == []


def test_differences_sees_a_changed_number_and_a_missing_key() -> None:
    golden = {"a": {"value": 0.5, "ci95": [0.1, 0.9]}, "created_at": "x", "n": 3}
    assert differences(golden, {"a": {"value": 0.5, "ci95": [0.1, 0.9]}, "n": 3, "new": 1}) == []
    assert differences(golden, {"a": {"value": 0.5, "ci95": [0.1, 0.8]}, "n": 3}) == ["$.a.ci95[1]: 0.9 -> 0.8"]
    assert differences(golden, {"a": {"value": 0.5, "ci95": [0.1, 0.9]}}) == ["$.n: missing"]
    assert differences({"n": 1}, {"n": 1.0}) == ["$.n: 1 -> 1.0"]
