"""`evaluator export --merge`: merged weights generate exactly what base + adapter generate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import run_cli

PROMPTS = ["Tom has 3 apples and buys 4 more.", "What is 12 times 7?", "톰은 사과 3개를 샀다. 몇 개인가?"]


@pytest.fixture(scope="module")
def lora_run(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder whose adapter really changes the model (random, non-zero LoRA B), as training leaves it."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run = tmp_path_factory.mktemp("export") / "run"
    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    peft = get_peft_model(base, LoraConfig(r=4, lora_alpha=64, target_modules="all-linear", init_lora_weights=False))
    peft.save_pretrained(run / "final")
    AutoTokenizer.from_pretrained(tiny_model_dir).save_pretrained(run / "final")
    (run / "run_config.yaml").write_text(yaml.safe_dump({"model": "tiny", "resolved": {"quantize": "4bit"}}))
    return run


def _said(result) -> str:
    """The CLI's output with the console's line wrapping undone."""
    return " ".join(result.output.split())


def _greedy(model, tok, prompt: str) -> list[int]:
    import torch

    text = tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True)
    ids = tok(text, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        out = model.generate(**ids, max_new_tokens=12, do_sample=False, pad_token_id=tok.pad_token_id)
    return out[0, ids["input_ids"].shape[1]:].tolist()


def test_merged_model_generates_what_base_plus_adapter_generates(lora_run: Path, tiny_model_dir: Path, tmp_path: Path) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "merged"
    result = run_cli("export", str(lora_run), "--merge", "--out", str(out), "--dtype", "fp32")
    assert result.exit_code == 0, result.output
    assert "NF4" in _said(result)
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    assert not (out / "adapter_config.json").exists()
    readme = (out / "README.md").read_text()
    assert "not the NF4 model" in readme

    tok = AutoTokenizer.from_pretrained(out)
    assert tok.chat_template  # the chat template travels with the merged model
    merged = AutoModelForCausalLM.from_pretrained(out).eval()
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    base_only = [_greedy(base, tok, p) for p in PROMPTS]
    with_adapter = PeftModel.from_pretrained(base, str(lora_run / "final")).eval()
    expected = [_greedy(with_adapter, tok, p) for p in PROMPTS]
    assert [_greedy(merged, tok, p) for p in PROMPTS] == expected
    assert expected != base_only  # the adapter matters, so equality above means the merge kept it


def test_bf16_export_and_output_rules(lora_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "m16"
    assert run_cli("export", str(lora_run), "--merge", "--out", str(out)).exit_code == 0
    assert json.loads((out / "config.json").read_text())["dtype"] == "bfloat16"
    again = run_cli("export", str(lora_run), "--merge", "--out", str(out))
    assert again.exit_code != 0 and "--force" in _said(again)
    assert run_cli("export", str(lora_run), "--merge", "--out", str(out), "--force").exit_code == 0
    inside = run_cli("export", str(lora_run), "--merge", "--out", str(lora_run / "merged"))
    assert inside.exit_code != 0 and "inside the run folder" in _said(inside)


@pytest.mark.parametrize(("args", "message"), [
    (["--adapter", "best"], "no best LoRA adapter"),
    (["--adapter", "latest"], "final or best"),
    (["--dtype", "fp16"], "bf16 or fp32"),
])
def test_bad_export_requests(lora_run: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("export", str(lora_run), "--merge", "--out", str(tmp_path / "o"), *args)
    assert result.exit_code != 0 and message in _said(result) and "Traceback" not in result.output


def test_merge_flag_required_and_missing_run(lora_run: Path, tmp_path: Path) -> None:
    no_merge = run_cli("export", str(lora_run), "--out", str(tmp_path / "o"))
    assert no_merge.exit_code != 0 and "--merge" in _said(no_merge)
    missing = run_cli("export", str(tmp_path / "nope"), "--merge", "--out", str(tmp_path / "o"))
    assert missing.exit_code != 0 and "does not exist" in _said(missing)


def test_push_to_hub_offline_is_refused_before_any_work(lora_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "pushed"
    result = run_cli("export", str(lora_run), "--merge", "--out", str(out), "--push-to-hub", "me/model")
    assert result.exit_code != 0 and "HF_HUB_OFFLINE" in _said(result)
    assert not out.exists()
    bad = run_cli("export", str(lora_run), "--merge", "--out", str(out), "--push-to-hub", "not a repo")
    assert bad.exit_code != 0 and "user/name" in _said(bad)
