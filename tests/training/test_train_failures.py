"""Failures during training end with one actionable message, never a bare traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from evaluator.domains.base import DomainPack
from evaluator.domains.registry import register, unregister

pytestmark = pytest.mark.slow


class OOMPack(DomainPack):
    """A pack whose reward allocates "too much": it raises the error CUDA raises when memory runs out."""

    name = "oom"
    styles = ("plain",)

    def rubric(self):
        return {"rewards": {"greedy": {"weight": 1.0}}}

    def reward_functions(self):
        def greedy(completions, **kwargs):
            import torch

            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

        return {"greedy": greedy}

    def dataset(self, source, split, *, style=None, language="en", limit=None, seed=0):
        from datasets import Dataset

        rows = [
            {
                "id": str(i),
                "prompt": [{"role": "user", "content": f"{i}+1?"}],
                "answer": str(i + 1),
                "style": "plain",
            }
            for i in range(8)
        ]
        return Dataset.from_list(rows)

    def extract(self, text, *, style, mode="strict"):
        return text.strip() or None

    def is_correct(self, extracted, row):
        return extracted == row["answer"]


@pytest.fixture
def oom_pack():
    register("oom", "test_train_failures:OOMPack")
    yield
    unregister("oom")


def test_out_of_memory_ends_with_the_checklist(tmp_path: Path, tiny_model_dir: Path, oom_pack: None) -> None:
    result = run_cli(
        "train",
        "--domain",
        "oom",
        "--model",
        "tiny",
        "--max-steps",
        "1",
        "--max-completion-length",
        "8",
        "--output-dir",
        str(tmp_path / "run"),
    )
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "Out of GPU memory" in out and "Traceback" not in out
    order = [
        out.index(s) for s in ("--per-device-batch", "--grad-accum", "--lora-r", "--max-completion-length")
    ]
    assert order == sorted(order)  # the users' checklist, in its order
