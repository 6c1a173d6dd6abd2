"""Shared fixtures: an isolated cache with the offline tiny model, and the real GSM8K files when present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_GSM8K = Path(os.environ.get("EVALUATOR_GSM8K_DIR", REPO.parent / "shared" / "data" / "gsm8k"))


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test session builds its own tiny model into a fresh cache, never touching ~/.cache."""
    cache = tmp_path_factory.mktemp("evaluator-cache")
    os.environ["EVALUATOR_CACHE"] = str(cache)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return cache


@pytest.fixture(scope="session")
def tiny_model_dir(_isolated_cache: Path) -> Path:
    """The test-suite ``tiny`` model (built once per session, offline)."""
    from evaluator.models.loading import ensure_tiny

    return ensure_tiny("tiny")


@pytest.fixture(scope="session")
def gsm8k_dir() -> Path:
    """The real GSM8K JSONL files beside the checkout; tests using it skip where it is absent."""
    if not (SHARED_GSM8K / "test.jsonl").exists():
        pytest.skip(f"real GSM8K not found at {SHARED_GSM8K}")
    return SHARED_GSM8K


def run_cli(*args: str):
    """Invoke the ``evaluator`` CLI in-process and return the click Result."""
    from typer.testing import CliRunner

    from evaluator.app.cli import app

    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="session")
def tiny_warm_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model after a short full-weight SFT on synthetic GSM8K (its ``final/`` is a full model).

    A random model scores 0 on every reward, so GRPO has nothing to learn from (all advantages 0); after
    this warm start it emits tag fragments often enough for the format rewards to vary within a group.
    """
    out = tmp_path_factory.mktemp("warm") / "sft"
    result = run_cli(
        "sft", "--domain", "gsm8k", "--model", "tiny", "--data", "synthetic:steps=1", "--limit", "400",
        "--no-lora", "--max-steps", "60", "--learning-rate", "1e-2", "--per-device-batch", "8",
        "--max-seq-length", "160", "--output-dir", str(out),
    )
    assert result.exit_code == 0, result.output
    return out / "final"


@pytest.fixture(scope="session")
def tiny_grpo_run(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-step GRPO run of the tiny model on synthetic GSM8K; its ``final/`` holds the adapter."""
    out = tmp_path_factory.mktemp("grpo") / "run"
    result = run_cli(
        "train",
        "--domain",
        "gsm8k",
        "--model",
        "tiny",
        "--data",
        "synthetic",
        "--max-steps",
        "2",
        "--max-completion-length",
        "24",
        "--output-dir",
        str(out),
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="session")
def template_models(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny model under three chat templates: Gemma 2 (refuses system), Qwen3 (thinking switch), ChatML."""
    from chat_templates import TEMPLATES, tiny_with_template

    root = tmp_path_factory.mktemp("templates")
    return {kind: tiny_with_template(tiny_model_dir, root / f"tiny-{kind}", kind) for kind in TEMPLATES}
