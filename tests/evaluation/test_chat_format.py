"""The one rendering rule: system folding (Gemma 2 refuses the system role) and the thinking switch (Qwen3).

Every expected text below is written out by hand from the template's own format, not produced by the rule.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from chat_templates import GEMMA2_TEMPLATE, QWEN3_TEMPLATE

from evaluator.domains.gsm8k.styles import get_style
from evaluator.domains.registry import get_pack
from evaluator.models.chat_format import (
    ChatTemplateError,
    chat_format,
    fold_dataset,
    fold_system,
    refuses_system_role,
    template_kwargs_for,
)

GSM8K = get_pack("gsm8k")
STYLES = ("xml", "think-solution", "qwen3-think")
QUESTION = "Tom has 3 apples and buys 4 more. How many apples does he have?"
EMPTY_THINK = "<think>\n\n</think>\n\n"


def tokenizer_of(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


@pytest.fixture(scope="module")
def toks(template_models: dict[str, Path]) -> dict[str, Any]:
    return {kind: tokenizer_of(path) for kind, path in template_models.items()}


def prompt(style: str, language: str = "en") -> list[dict[str, str]]:
    return [
        {"role": "system", "content": get_style(style).system_prompt(language)},
        {"role": "user", "content": QUESTION},
    ]


def expected(kind: str, style: str, language: str = "en") -> str:
    system = get_style(style).system_prompt(language)
    if kind == "gemma2":  # folded: system text, a blank line, the question, in one user turn
        return f"<|endoftext|><start_of_turn>user\n{system}\n\n{QUESTION}<end_of_turn>\n<start_of_turn>model\n"
    chatml = f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n"
    if kind == "qwen3" and style != "qwen3-think":
        return chatml + EMPTY_THINK
    return chatml


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("kind", ["gemma2", "qwen3", "chatml"])
def test_rendered_text_is_what_the_rule_says(toks: dict[str, Any], kind: str, style: str, language: str) -> None:
    tok = toks[kind]
    fmt = chat_format(tok, style, GSM8K)
    assert fmt.render(tok, prompt(style, language)) == expected(kind, style, language)
    assert fmt.fold_system is (kind == "gemma2")
    thinking = {"enable_thinking": style == "qwen3-think"} if kind == "qwen3" else {}
    assert fmt.template_kwargs == thinking
    assert fmt.record() == {"fold_system_into_user": kind == "gemma2", "chat_template_kwargs": thinking}


@pytest.mark.parametrize("style", STYLES)
def test_the_plain_template_is_left_untouched(toks: dict[str, Any], style: str) -> None:
    tok = toks["chatml"]
    fmt = chat_format(tok, style, GSM8K)
    messages = prompt(style)
    untouched = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert fmt.messages(messages) == messages and fmt.render(tok, messages) == untouched


def test_gemma2_still_raises_without_the_rule(toks: dict[str, Any]) -> None:
    from jinja2.exceptions import TemplateError

    with pytest.raises(TemplateError, match="System role not supported"):
        toks["gemma2"].apply_chat_template(prompt("xml"), tokenize=False, add_generation_prompt=True)


def test_a_judge_conversation_with_a_reask_alternates_on_gemma(toks: dict[str, Any]) -> None:
    tok = toks["gemma2"]
    convo = [
        {"role": "system", "content": "Grade it."},
        {"role": "user", "content": "Response: 7"},
        {"role": "assistant", "content": "hmm"},
        {"role": "user", "content": "Reply with JSON."},
    ]
    text = chat_format(tok).render(tok, convo)
    assert text == (
        "<|endoftext|><start_of_turn>user\nGrade it.\n\nResponse: 7<end_of_turn>\n"
        "<start_of_turn>model\nhmm<end_of_turn>\n<start_of_turn>user\nReply with JSON.<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


@pytest.mark.parametrize(
    ("messages", "folded"),
    [
        (
            [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
            [{"role": "user", "content": "S\n\nU"}],
        ),
        (  # two system messages, both kept in order
            [{"role": "system", "content": "A"}, {"role": "system", "content": "B"}, {"role": "user", "content": "U"}],
            [{"role": "user", "content": "A\n\nB\n\nU"}],
        ),
        (  # OpenAI-style developer role counts as system
            [{"role": "developer", "content": "D"}, {"role": "user", "content": "U"}],
            [{"role": "user", "content": "D\n\nU"}],
        ),
        (  # no user turn: the system text becomes one
            [{"role": "system", "content": "S"}],
            [{"role": "user", "content": "S"}],
        ),
        (  # an empty system message leaves the user text alone
            [{"role": "system", "content": ""}, {"role": "user", "content": "U"}],
            [{"role": "user", "content": "U"}],
        ),
        (  # nothing to fold: unchanged
            [{"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}],
            [{"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}],
        ),
        (  # only what precedes the first user turn is folded; later turns are kept as they are
            [
                {"role": "system", "content": "S"},
                {"role": "user", "content": "U1"},
                {"role": "assistant", "content": "A"},
                {"role": "user", "content": "U2"},
            ],
            [
                {"role": "user", "content": "S\n\nU1"},
                {"role": "assistant", "content": "A"},
                {"role": "user", "content": "U2"},
            ],
        ),
        (  # Korean text and extra keys survive
            [{"role": "system", "content": "당신은 선생님입니다."}, {"role": "user", "content": "3+4는?", "name": "q"}],
            [{"role": "user", "content": "당신은 선생님입니다.\n\n3+4는?", "name": "q"}],
        ),
    ],
)
def test_fold_system(messages: list[dict[str, str]], folded: list[dict[str, str]]) -> None:
    before = [dict(m) for m in messages]
    assert fold_system(messages) == folded
    assert messages == before  # the caller's messages are not changed


def test_a_template_that_drops_the_system_message_is_folded_too(toks: dict[str, Any]) -> None:
    tok = tokenizer_of(Path(toks["chatml"].name_or_path))
    tok.chat_template = (  # renders only user and assistant turns: a system prompt would vanish silently
        "{% for m in messages %}{% if m['role'] != 'system' %}<|im_start|>{{ m['role'] }}\n"
        "{{ m['content'] }}<|im_end|>\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    fmt = chat_format(tok, "xml", GSM8K)
    assert fmt.fold_system
    assert get_style("xml").system_prompt("en") in fmt.render(tok, prompt("xml"))


def test_a_template_that_renders_nothing_is_a_clear_error(toks: dict[str, Any]) -> None:
    tok = tokenizer_of(Path(toks["chatml"].name_or_path))
    tok.chat_template = "{{ raise_exception('this model has no chat format') }}"
    with pytest.raises(ChatTemplateError, match="cannot render a user message either"):
        chat_format(tok, "xml", GSM8K)


def test_the_decision_is_made_once_per_template_and_logged_once(
    toks: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    tok = tokenizer_of(Path(toks["gemma2"].name_or_path))
    tok.chat_template = GEMMA2_TEMPLATE + "{# a template text no other test uses #}"
    calls: list[int] = []
    original = tok.apply_chat_template

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    tok.apply_chat_template = counting
    with caplog.at_level(logging.WARNING, logger="evaluator.chat"):
        for _ in range(5):
            assert refuses_system_role(tok)
    assert len(calls) == 2  # the system probe, then the folded probe; never again
    records = [r for r in caplog.records if r.name == "evaluator.chat"]
    assert len(records) == 1 and "System role not supported" in records[0].getMessage()


def test_the_decision_follows_the_template_not_the_name(toks: dict[str, Any]) -> None:
    tok = tokenizer_of(Path(toks["gemma2"].name_or_path))
    assert refuses_system_role(tok)
    tok.chat_template = QWEN3_TEMPLATE  # same folder name ("gemma2"), a template that takes system turns
    assert not refuses_system_role(tok)
    tok.name_or_path = "google/gemma-2-9b-it"
    assert not refuses_system_role(tok)


class _HookPack:
    """A pack that declares its own thinking style and overrides one style's arguments."""

    thinking_styles = ("deliberate",)

    def chat_template_kwargs(self, style: str | None) -> dict[str, Any] | None:
        return {"enable_thinking": True, "custom": 1} if style == "forced" else None


@pytest.mark.parametrize(
    ("style", "expected_kwargs"),
    [
        ("deliberate", {"enable_thinking": True}),
        ("plain", {"enable_thinking": False}),
        ("forced", {"enable_thinking": True, "custom": 1}),
        (None, {"enable_thinking": False}),
    ],
)
def test_a_pack_declares_its_thinking_styles_and_may_override(
    toks: dict[str, Any], style: str | None, expected_kwargs: dict[str, Any]
) -> None:
    assert template_kwargs_for(toks["qwen3"], style, _HookPack()) == expected_kwargs


def test_the_hook_applies_even_where_the_template_has_no_thinking_flag(toks: dict[str, Any]) -> None:
    assert template_kwargs_for(toks["chatml"], "forced", _HookPack()) == {"enable_thinking": True, "custom": 1}
    assert template_kwargs_for(toks["chatml"], "plain", _HookPack()) == {}


def test_the_fund_style_does_not_think(toks: dict[str, Any]) -> None:
    assert template_kwargs_for(toks["qwen3"], "json", get_pack("fund")) == {"enable_thinking": False}


def test_folding_a_dataset_changes_only_the_prompt_column(toks: dict[str, Any]) -> None:
    data = GSM8K.dataset("synthetic", "train", style="xml", limit=4)
    folded = fold_dataset(data, chat_format(toks["gemma2"], "xml", GSM8K))
    assert folded.column_names == data.column_names
    for before, after in zip(data, folded, strict=True):
        assert after["prompt"] == [
            {"role": "user", "content": before["prompt"][0]["content"] + "\n\n" + before["prompt"][1]["content"]}
        ]
        assert {k: v for k, v in after.items() if k != "prompt"} == {k: v for k, v in before.items() if k != "prompt"}
    assert fold_dataset(data, chat_format(toks["chatml"], "xml", GSM8K)) is data


def test_model_presets_says_what_happens_to_each_template() -> None:
    from conftest import run_cli

    result = run_cli("model", "presets")
    flat = " ".join(result.output.split())  # wrapped cells continue on the next lines
    assert "atomicgpt-gemma2-9b KAERI-MLP/AtomicGPT-gemma2-9B gemma2 system prompt folded into user turn" in flat
    for size, hub in (("0.6b", "0.6B"), ("1.7b", "1.7B"), ("4b", "4B"), ("8b", "8B"), ("14b", "14B")):
        assert f"qwen3-{size} Qwen/Qwen3-{hub} qwen3 thinking off (on for qwen3-think)" in flat
    assert "gpt-oss-20b openai/gpt-oss-20b gpt_oss - tiny tiny qwen3 -" in flat
