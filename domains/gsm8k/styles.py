"""The three answer formats a GSM8K model can be trained to write, with their system prompts.

- ``xml``: the GRPO-GSM8K recipe format ``<reasoning>…</reasoning>`` then ``<answer>…</answer>``.
- ``think-solution``: ``<THINK>…</THINK>`` then ``<SOLUTION>N</SOLUTION>``.
- ``qwen3-think``: Qwen3's native ``<think>…</think>``; the final answer follows ``</think>`` in
  ``\\boxed{N}`` (preferred) or on a last line ``Answer: N`` / ``The answer is N`` / ``정답: N``.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluator.domains.base import PackError

LANGUAGES = ("en", "ko")


@dataclass(frozen=True)
class Style:
    """Tags of one output format. ``answer_open``/``answer_close`` are None when the answer is not tagged."""

    name: str
    think_open: str
    think_close: str
    answer_open: str | None
    answer_close: str | None
    prompts: dict[str, str]

    @property
    def tags(self) -> tuple[str, ...]:
        """The markers ``xmlcount`` looks for (qwen3-think counts ``\\boxed{`` and its closing brace)."""
        if self.answer_open and self.answer_close:
            return (self.think_open, self.think_close, self.answer_open, self.answer_close)
        return (self.think_open, self.think_close, "\\boxed{", "}")

    def system_prompt(self, language: str = "en") -> str:
        if language not in self.prompts:
            raise PackError(
                f"no {self.name!r} system prompt in language {language!r}; choose one of {', '.join(LANGUAGES)}"
            )
        return self.prompts[language]

    def render(self, solution: str, answer: str) -> str:
        """A worked solution written exactly in this format (what strict_format accepts)."""
        if self.name == "xml":
            return f"<reasoning>\n{solution}\n</reasoning>\n<answer>\n{answer}\n</answer>"
        if self.name == "think-solution":
            return f"<THINK>\n{solution}\n</THINK>\n<SOLUTION>{answer}</SOLUTION>"
        return f"<think>\n{solution}\n</think>\n\nThe answer is \\boxed{{{answer}}}."


_XML_EN = """You are a careful math tutor. Solve the problem step by step, then respond in exactly this format:
<reasoning>
your step-by-step reasoning
</reasoning>
<answer>
the final answer as a single number, with no units or other words
</answer>"""

_XML_KO = """당신은 꼼꼼한 수학 선생님입니다. 문제를 단계별로 푼 뒤, 정확히 다음 형식으로 답하세요:
<reasoning>
단계별 풀이
</reasoning>
<answer>
최종 답 (단위나 다른 말 없이 숫자 하나만)
</answer>"""

_TS_EN = """You are a careful math tutor. Work the problem out step by step, then respond in exactly this format:
<THINK>
your step-by-step working
</THINK>
<SOLUTION>the final answer as a single number</SOLUTION>"""

_TS_KO = """당신은 꼼꼼한 수학 선생님입니다. 문제를 단계별로 푼 뒤, 정확히 다음 형식으로 답하세요:
<THINK>
단계별 풀이
</THINK>
<SOLUTION>최종 답 (숫자 하나만)</SOLUTION>"""

_Q3_EN = """You are a careful math tutor. Think through the problem step by step inside <think> and </think>. \
After </think>, state the final answer as a single number inside \\boxed{}, for example: The answer is \\boxed{42}."""

_Q3_KO = """당신은 꼼꼼한 수학 선생님입니다. <think>와 </think> 사이에서 문제를 단계별로 생각하세요. \
</think> 다음에 최종 답을 숫자 하나로 \\boxed{} 안에 쓰세요. 예: 최종 답: \\boxed{42}"""

STYLES: dict[str, Style] = {
    "xml": Style(
        "xml", "<reasoning>", "</reasoning>", "<answer>", "</answer>", {"en": _XML_EN, "ko": _XML_KO}
    ),
    "think-solution": Style(
        "think-solution", "<THINK>", "</THINK>", "<SOLUTION>", "</SOLUTION>", {"en": _TS_EN, "ko": _TS_KO}
    ),
    "qwen3-think": Style("qwen3-think", "<think>", "</think>", None, None, {"en": _Q3_EN, "ko": _Q3_KO}),
}
STYLE_NAMES = tuple(STYLES)


def get_style(name: str) -> Style:
    try:
        return STYLES[name]
    except KeyError:
        raise PackError(
            f"gsm8k has no prompt style {name!r}; choose one of {', '.join(STYLE_NAMES)}"
        ) from None
