"""The offline tiny models: built without the hub, loadable by path, with a working ChatML template."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli


def test_build_tiny_cli_builds_loadable_model_and_refuses_silent_rebuild(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "tiny"
    result = run_cli("model", "build-tiny", "--out", str(out))
    assert result.exit_code == 0, result.output
    model = AutoModelForCausalLM.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert model.config.model_type == "qwen3"
    assert 50_000 < sum(p.numel() for p in model.parameters()) < 500_000
    text = tok.apply_chat_template(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}],
        tokenize=False, add_generation_prompt=True,
    )
    assert text == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    # Byte-level BPE: any text round-trips, Korean included.
    sample = "수익률 12.5%, 샤프지수 0.8 — The answer is 42."
    assert tok.decode(tok(sample)["input_ids"]) == sample

    before = (out / "model.safetensors").stat().st_mtime_ns
    again = run_cli("model", "build-tiny", "--out", str(out))
    assert again.exit_code == 0 and "already built" in again.output
    assert (out / "model.safetensors").stat().st_mtime_ns == before


def test_demo_tokenizer_splits_digits(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from evaluator.models.loading import ensure_tiny

    path = ensure_tiny("tiny-demo", tmp_path / "demo")
    tok = AutoTokenizer.from_pretrained(path)
    pieces = tok.tokenize("He pays 1234 dollars")
    assert [p for p in pieces if any(c.isdigit() for c in p)] == ["1", "2", "3", "4"]
