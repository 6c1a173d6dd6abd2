"""The pack registry as users see it: `evaluator domains list`, and clean errors for unknown names."""

from __future__ import annotations

import pytest
from conftest import run_cli

from evaluator.domains.base import PackError
from evaluator.domains.registry import get_pack


def test_domains_list_shows_gsm8k_rewards_and_weights() -> None:
    result = run_cli("domains", "list")
    assert result.exit_code == 0, result.output
    out = result.output
    for reward in ("correctness", "int", "strict_format", "soft_format", "xmlcount"):
        assert reward in out
    assert "gsm8k" in out and "fund" in out
    weights = get_pack("gsm8k").default_weights()
    assert weights["correctness"] > weights["xmlcount"] > 0


def test_unknown_domain_and_style_are_clear_errors() -> None:
    with pytest.raises(PackError, match="known domains"):
        get_pack("chess")
    with pytest.raises(PackError, match="no prompt style"):
        get_pack("gsm8k").check_style("yaml")


def test_trainer_and_harness_never_import_a_pack() -> None:
    """Floors: training/ and evaluation/ receive packs from the registry, never by import."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    for folder in ("training", "evaluation"):
        for path in (repo / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "domains.gsm8k" not in text and "domains.fund" not in text, path
