"""SFT, GRPO with a local judge, and evaluation on the tiny model under Gemma 2, Qwen3 and ChatML templates.

TRL renders the training prompts itself; spies on TRL's own tokenisation (not on our code) show that the
text it trains on is exactly the text evaluation renders, folded and switched by the one rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from chat_templates import TEMPLATES

from evaluator.core.generation import GenerationSettings
from evaluator.domains.gsm8k.styles import get_style
from evaluator.domains.registry import get_pack
from evaluator.evaluation.backends import Generator
from evaluator.models.chat_format import chat_format
from evaluator.training.config import load_config
from evaluator.training.judges.config import JudgeSpec
from evaluator.training.judges.local import LocalJudge
from evaluator.training.judges.prompt import SYSTEM as JUDGE_SYSTEM

GSM8K = get_pack("gsm8k")
EMPTY_THINK = "<think>\n\n</think>\n\n"


def expected_record(kind: str, style: str) -> dict[str, Any]:
    kwargs = {"enable_thinking": style == "qwen3-think"} if kind == "qwen3" else {}
    return {"fold_system_into_user": kind == "gemma2", "chat_template_kwargs": kwargs}


@pytest.fixture(scope="module")
def loaded(template_models: dict[str, Path]) -> dict[str, tuple[Any, Any]]:
    from evaluator.models.loading import load_model

    return {kind: load_model(str(path), for_training=False)[:2] for kind, path in template_models.items()}


@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_the_generator_renders_and_records_by_the_rule(loaded: dict[str, tuple[Any, Any]], kind: str) -> None:
    model, tok = loaded[kind]
    gen = Generator(model, tok)
    row = GSM8K.dataset("synthetic", "test", style="xml", limit=1)[0]
    kwargs = chat_format(tok, "xml", GSM8K).template_kwargs
    text = gen.render(row["prompt"], kwargs)
    system, question = row["prompt"][0]["content"], row["prompt"][1]["content"]
    if kind == "gemma2":
        assert text == f"<|endoftext|><start_of_turn>user\n{system}\n\n{question}<end_of_turn>\n<start_of_turn>model\n"
    else:
        head = f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
        assert text == head + (EMPTY_THINK if kind == "qwen3" else "")
    record = gen.config(GenerationSettings(max_new_tokens=4, batch_size=1), chat_template_kwargs=kwargs)
    assert {k: record[k] for k in ("fold_system_into_user", "chat_template_kwargs")} == expected_record(kind, "xml")


@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_the_local_judge_renders_by_the_rule(loaded: dict[str, tuple[Any, Any]], kind: str) -> None:
    model, tok = loaded[kind]
    judge = LocalJudge(JudgeSpec.from_dict({"kind": "local", "model": "unused", "prefill": True}), model=model, tokenizer=tok)
    messages = [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": "Grade: 7"}]
    text = judge.render(messages)
    if kind == "gemma2":
        assert text == (
            f"<|endoftext|><start_of_turn>user\n{JUDGE_SYSTEM}\n\nGrade: 7<end_of_turn>\n"
            '<start_of_turn>model\n{"score": '
        )
    else:
        think = EMPTY_THINK if kind == "qwen3" else ""  # a judge never thinks: it must answer within its budget
        assert text == (
            f"<|im_start|>system\n{JUDGE_SYSTEM}<|im_end|>\n<|im_start|>user\nGrade: 7<|im_end|>\n"
            f'<|im_start|>assistant\n{think}{{"score": '
        )


@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_the_planner_counts_the_prompt_as_rendered(template_models: dict[str, Path], kind: str) -> None:
    from transformers import AutoTokenizer

    from evaluator.training.memory.plan import longest_prompt_tokens

    tok = AutoTokenizer.from_pretrained(template_models[kind])
    cfg = load_config(None, {"model": str(template_models[kind]), "data": "synthetic", "limit": 6, "style": "xml"})
    rows = GSM8K.dataset("synthetic", "train", style="xml", limit=6, seed=cfg.seed)
    system = get_style("xml").system_prompt("en")
    by_hand = []
    for row in rows:
        question = row["prompt"][1]["content"]
        if kind == "gemma2":
            text = f"<|endoftext|><start_of_turn>user\n{system}\n\n{question}<end_of_turn>\n<start_of_turn>model\n"
        else:
            text = f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
            text += EMPTY_THINK if kind == "qwen3" else ""
        by_hand.append(len(tok(text, add_special_tokens=False)["input_ids"]))
    assert longest_prompt_tokens(cfg) == max(by_hand)


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_sft_grpo_with_local_judge_and_eval_run_under_each_template(
    template_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    from transformers import AutoTokenizer
    from trl import GRPOTrainer, SFTTrainer

    from evaluator.core.generation import ModelRef
    from evaluator.evaluation.harness import evaluate
    from evaluator.evaluation.inputs import Items, ReportFolder
    from evaluator.training.grpo import train
    from evaluator.training.sft import sft

    path = str(template_models[kind])
    tok = AutoTokenizer.from_pretrained(path)
    style = "xml"
    fmt = chat_format(tok, style, GSM8K)
    rows = GSM8K.dataset("synthetic", "train", style=style, limit=4, seed=load_config().seed)  # the runs' data
    rendered = {fmt.render(tok, r["prompt"]) for r in rows}
    assert len(rendered) == 4

    sft_seen: list[tuple[list[int], list[int]]] = []
    sft_train = SFTTrainer.train

    def spy_sft(self: Any, *args: Any, **kwargs: Any) -> Any:
        sft_seen.extend((r["input_ids"], r["labels"]) for r in self.train_dataset)
        return sft_train(self, *args, **kwargs)

    grpo_seen: list[str] = []
    tokenize_prompts = GRPOTrainer._tokenize_prompts

    def spy_grpo(self: Any, prompts: list) -> Any:
        out = tokenize_prompts(self, prompts)
        grpo_seen.extend(self.processing_class.decode(ids) for ids in out[0])
        return out

    judge_seen: list[str] = []
    judge_render = LocalJudge.render

    def spy_judge(self: Any, messages: list[dict[str, str]]) -> str:
        text = judge_render(self, messages)
        judge_seen.append(text)
        return text

    monkeypatch.setattr(SFTTrainer, "train", spy_sft)
    monkeypatch.setattr(GRPOTrainer, "_tokenize_prompts", spy_grpo)
    monkeypatch.setattr(LocalJudge, "render", spy_judge)

    common = {"domain": "gsm8k", "model": path, "data": "synthetic", "limit": 4, "style": style, "max_steps": 1}
    sft_out = tmp_path / "sft"
    sft(load_config(None, {**common, "output_dir": str(sft_out), "max_seq_length": 512, "learning_rate": 1e-3}),
        progress=False)  # fmt: skip
    assert len(sft_seen) == 4
    for ids, labels in sft_seen:  # TRL trains on prompt + reference; the prompt part is our rendering exactly
        n_prompt = next(i for i, label in enumerate(labels) if label != -100)
        assert tok.decode(ids[:n_prompt]) in rendered
        assert tok.decode(ids[n_prompt:]).startswith("<reasoning>")

    grpo_out = tmp_path / "grpo"
    judge = {"kind": "local", "model": path, "max_new_tokens": 4, "batch_size": 4, "max_parse_retries": 0}
    summary = train(
        load_config(None, {**common, "output_dir": str(grpo_out), "init_from": str(sft_out),
                           "max_completion_length": 8, "judge": judge}),
        progress=False,
    )  # fmt: skip
    assert summary["global_step"] == 1
    assert grpo_seen and set(grpo_seen) <= rendered  # TRL generated from exactly the evaluated text
    assert judge_seen and all(JUDGE_SYSTEM in t for t in judge_seen)
    judged = [json.loads(x) for x in (grpo_out / "judge_evaluations.jsonl").read_text().splitlines()]
    assert judged and not any((r.get("error") or "").startswith("judge generation failed") for r in judged)
    for run in (sft_out, grpo_out):
        resolved = yaml.safe_load((run / "run_config.yaml").read_text())["resolved"]
        assert resolved["chat_format"] == expected_record(kind, style)

    report = evaluate(GSM8K, ModelRef(path, adapter=grpo_out / "final"), Items(data="synthetic", limit=2, style=style),
                      GenerationSettings(max_new_tokens=4), out=ReportFolder(tmp_path / "eval"))  # fmt: skip
    generation = report["generation"]
    assert {k: generation[k] for k in ("fold_system_into_user", "chat_template_kwargs")} == expected_record(kind, style)


@pytest.mark.slow
def test_fund_evaluate_with_a_model_whose_template_refuses_the_system_role(
    template_models: dict[str, Path], tmp_path: Path
) -> None:
    from conftest import run_cli

    out = tmp_path / "reports"
    result = run_cli(
        "fund", "evaluate", "--sample", "--sample-funds", "20", "--model", str(template_models["gemma2"]),
        "--max-new-tokens", "4", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    block = json.loads((out / "summary.json").read_text(encoding="utf-8"))["model_evaluation"]
    assert block["funds_evaluated"] > 0 and "got no model answer" not in result.output
    generation = block["generation"]
    assert generation["fold_system_into_user"] is True and generation["chat_template_kwargs"] == {}
