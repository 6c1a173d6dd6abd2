"""The trainer's own per-step work, made cheaper for the overhead benchmark, still keeps every guarantee:
best-adapter saves (tokenizer files serialized once), the completions sample (one write per step) and the
Rich progress display (fewer redraws)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def policy(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    from evaluator.training.config import load_config
    from evaluator.training.run_setup import load_policy

    out = tmp_path_factory.mktemp("cb")
    cfg = load_config(None, {"domain": "gsm8k", "model": "tiny", "data": "synthetic", "output_dir": str(out)})
    return load_policy(cfg)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in folder.rglob("*") if f.is_file()}


def test_tokenizer_files_are_the_bytes_save_pretrained_writes(policy, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from evaluator.training.callbacks import TokenizerFiles

    policy.tokenizer.save_pretrained(tmp_path / "direct")
    cached = TokenizerFiles(policy.tokenizer)
    cached.save_pretrained(tmp_path / "first")  # serializes
    cached.save_pretrained(tmp_path / "second")  # copies the bytes kept from the first
    direct = _files(tmp_path / "direct")
    assert "tokenizer.json" in direct and "tokenizer_config.json" in direct
    assert _files(tmp_path / "first") == direct
    assert _files(tmp_path / "second") == direct
    again = AutoTokenizer.from_pretrained(tmp_path / "second")
    text = "<|im_start|>user\nThe answer is 42 <answer> 7 </answer><|im_end|>"
    assert again(text)["input_ids"] == policy.tokenizer(text)["input_ids"]
    assert again.chat_template == policy.tokenizer.chat_template


def _state(step: int):
    from transformers import TrainerState

    state = TrainerState()
    state.global_step = step
    return state


def test_best_adapter_saved_on_each_new_best_only_and_loadable(policy, tiny_model_dir: Path, tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerControl, TrainingArguments

    from evaluator.training.callbacks import BestAdapterSaver, read_best

    saver = BestAdapterSaver(tmp_path, policy.tokenizer, "reward")
    args = TrainingArguments(output_dir=str(tmp_path / "args"), use_cpu=True, report_to=[])
    lora_b = [p for n, p in policy.model.named_parameters() if "lora_B" in n]
    seen: dict[int, float] = {}
    with torch.no_grad():
        for step, reward in [(1, 0.1), (2, 0.3), (3, 0.2), (4, 0.5), (5, 0.5)]:
            for p in lora_b:
                p.fill_(step / 100)  # each step's weights are told apart by their value
            saver.on_log(args, _state(step), TrainerControl(), logs={"reward": reward}, model=policy.model)
            best = read_best(tmp_path)
            seen[step] = best["step"]
        for p in lora_b:
            p.zero_()
    assert seen == {1: 1, 2: 2, 3: 2, 4: 4, 5: 4}  # a tie or a drop keeps the earlier best
    best = read_best(tmp_path)
    assert best["metric"] == "reward" and best["value"] == 0.5 and best["reward"] == 0.5
    folder = tmp_path / "best_adapter"
    saved = [v for k, v in load_file(str(folder / "adapter_model.safetensors")).items() if "lora_B" in k]
    assert saved and all(torch.allclose(v, torch.full_like(v, 0.04)) for v in saved)
    assert "Best `reward` of the run: 0.5 at step 4" in (folder / "README.md").read_text()
    assert not (tmp_path / ".best_adapter.tmp").exists() and not (tmp_path / ".best_adapter.old").exists()
    # the folder a third save left (tokenizer from the kept bytes) is a complete adapter + tokenizer
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model_dir), str(folder))
    assert any("lora_B" in n for n, _ in model.named_parameters())
    assert AutoTokenizer.from_pretrained(folder)("42")["input_ids"] == policy.tokenizer("42")["input_ids"]


def test_append_jsonl_rows_one_line_each_and_nothing_for_none(tmp_path: Path) -> None:
    from evaluator.core.outputs import append_jsonl, append_jsonl_rows, read_jsonl

    path = tmp_path / "sub" / "completions.jsonl"
    append_jsonl_rows(path, [])
    assert not path.exists()
    append_jsonl(path, {"step": 1, "completion": "첫 줄"})
    append_jsonl_rows(path, [{"step": 2, "completion": "a\nb"}, {"step": 2, "completion": "수익률 {\"x\": 1}"}])
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") == 3 and "수익률" in text  # Korean stays readable
    assert [r["step"] for r in read_jsonl(path)] == [1, 2, 2]
    assert read_jsonl(path)[1]["completion"] == "a\nb"


def test_rich_progress_still_shows_step_reward_and_per_reward_means() -> None:
    from rich.console import Console
    from transformers import TrainerControl, TrainingArguments

    from evaluator.training.callbacks import RichProgress

    buf = io.StringIO()
    bar = RichProgress(Console(file=buf, force_terminal=True, width=120))
    state = _state(0)
    state.max_steps = 3
    args = TrainingArguments(output_dir="unused", use_cpu=True, report_to=[])
    bar.on_train_begin(args, state, TrainerControl())
    assert bar.live.refresh_per_second == 2
    for step in (1, 2, 3):
        state.global_step = step
        bar.on_step_end(args, state, TrainerControl())
        logs = {"reward": 0.25 * step, "rewards/correctness/mean": 0.5, "rewards/xmlcount/mean": 0.125}
        bar.on_log(args, state, TrainerControl(), logs=logs)
    bar.on_train_end(args, state, TrainerControl())  # the final redraw shows the last state
    out = buf.getvalue()
    assert "3/3" in out and "reward 0.750" in out
    assert "correctness 0.50" in out and "xmlcount 0.12" in out
