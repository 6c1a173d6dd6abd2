"""A real 2-process gloo DDP run of the tiny model on CPU: one run folder, ranks in sync after the steps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.slow


def test_two_process_gloo_run_writes_one_consistent_folder(tiny_warm_model: Path, tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from evaluator.training.distributed import parameter_digest

    out = tmp_path / "ddp"
    result = run_cli(
        "train", "--domain", "gsm8k", "--model", "tiny", "--init-from", str(tiny_warm_model),
        "--data", "synthetic:steps=1", "--max-steps", "2", "--max-completion-length", "16",
        "--learning-rate", "5e-3", "--num-processes", "2", "--output-dir", str(out),
    )
    assert result.exit_code == 0, result.output
    # the launching command reports once (done, or finished with its health verdict), children stay quiet
    assert len(re.findall(r"(done|finished, not learning \(\w+\)) step 2 ·", result.output)) == 1
    assert result.output.count("run health:") == 1

    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["world_size"] == 2
    digests = summary["rank_parameter_digests"]
    assert len(digests) == 2 and digests[0] == digests[1] and summary["ranks_in_sync"] is True

    # one writer: each step logged once, completions only from rank 0's logging
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    steps = [json.loads(line)["step"] for line in (out / "completions.jsonl").read_text().splitlines()]
    assert steps and len(steps) <= 2 * 4 and sorted(set(steps)) == [1, 2]
    assert not list(out.glob(".*.tmp"))
    cfg = (out / "run_config.yaml").read_text()
    assert "num_processes: 2" in cfg

    # the adapter moved, and what rank 0 saved is exactly the parameters both ranks ended with
    state = load_file(str(out / "final" / "adapter_model.safetensors"))
    assert any(torch.count_nonzero(v) > 0 for k, v in state.items() if "lora_B" in k)
    base = AutoModelForCausalLM.from_pretrained(tiny_warm_model)
    saved = PeftModel.from_pretrained(base, str(out / "final"), is_trainable=True)
    assert parameter_digest(saved) == digests[0]
