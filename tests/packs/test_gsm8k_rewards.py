"""GSM8K rewards on hand-written completions, one table per prompt style, every value exact.

Each row: (case, completion, gold, correctness, int, strict_format, soft_format, xmlcount, strict answer,
flexible answer). The rows are what models really write — whitespace slips, Korean, markdown, units,
commas, negatives, fractions, text after the closing tag, duplicated/nested/empty tags — and the reward
hacks that must earn nothing (hedged answers, repeated slots with different values, an empty slot followed
by a number, a bare guess without the format).
"""

from __future__ import annotations

import pytest

from evaluator.domains.registry import get_pack

PACK = get_pack("gsm8k")
FNS = PACK.reward_functions()

R = "<reasoning>\nJanet sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = $18.\n</reasoning>\n"
OK = R + "<answer>\n18\n</answer>"

# fmt: off
XML = [
    ("perfect", OK, "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("trailing newline", OK + "\n", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("leading newline", "\n" + OK, "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("crlf newlines", OK.replace("\n", "\r\n"), "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("answer on one line", R + "<answer>18</answer>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("all on one line", "<reasoning>9*2=18</reasoning><answer>18</answer>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("spaces not newlines", "<reasoning> 9*2=18 </reasoning> <answer> 18 </answer>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("padded answer", R + "<answer>\n  18  \n</answer>", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("wrong answer", R + "<answer>\n17\n</answer>", "18", 0.0, 1.0, 1.0, 1.0, 1.0, "17", "17"),
    ("dollar sign", R + "<answer>\n$18\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("units and period", R + "<answer>\n18 dollars.\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("markdown bold", R + "<answer>\n**18**\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("boxed inside", R + "<answer>\n\\boxed{18}\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("decimal zero", R + "<answer>\n18.0\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("thousands comma", R + "<answer>\n1,234\n</answer>", "1234", 1.0, 0.0, 1.0, 1.0, 1.0, "1234", "1234"),
    ("negative", R + "<answer>\n-3\n</answer>", "-3", 1.0, 1.0, 1.0, 1.0, 1.0, "-3", "-3"),
    ("sign wrong", R + "<answer>\n-3\n</answer>", "3", 0.0, 1.0, 1.0, 1.0, 1.0, "-3", "-3"),
    ("unicode minus", R + "<answer>\n\u22123\n</answer>", "-3", 1.0, 0.0, 1.0, 1.0, 1.0, "-3", "-3"),
    ("money decimals", R + "<answer>\n$1,234.50\n</answer>", "1234.5", 1.0, 0.0, 1.0, 1.0, 1.0, "1234.5", "1234.5"),
    ("fraction", R + "<answer>\n3/4\n</answer>", "0.75", 1.0, 0.0, 1.0, 1.0, 1.0, "0.75", "0.75"),
    ("latex fraction", R + "<answer>\n\\frac{3}{4}\n</answer>", "0.75", 1.0, 0.0, 1.0, 1.0, 1.0, "0.75", "0.75"),
    ("percent sign", R + "<answer>\n18%\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("full-width digits", R + "<answer>\n１８\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("korean reasoning", "<reasoning>\n하루에 9개를 팔고 9 * 2 = 18달러를 법니다.\n</reasoning>\n<answer>\n18\n</answer>", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("korean unit", R + "<answer>\n18달러\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("x equals", R + "<answer>\nx = 18\n</answer>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("text after", OK + "\nHope this helps!", "18", 1.0, 1.0, 0.0, 1.0, 0.984, "18", "18"),
    ("number after", OK + "\n17", "18", 1.0, 1.0, 0.0, 1.0, 0.998, "18", "18"),
    ("preamble", "Sure! Let me solve it.\n" + OK, "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("truncated answer", R + "<answer>\n18", "18", 0.0, 0.0, 0.0, 0.0, 0.75, None, "18"),
    ("no reasoning", "<answer>\n18\n</answer>", "18", 1.0, 1.0, 0.0, 0.0, 0.5, "18", "18"),
    ("empty reasoning", "<reasoning>\n\n</reasoning>\n<answer>\n18\n</answer>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("answer first", "<answer>\n18\n</answer>\n<reasoning>\n9*2=18\n</reasoning>", "18", 1.0, 1.0, 0.0, 0.0, 0.969, "18", "18"),
    ("think tags", "<think>\n9*2=18\n</think>\n<answer>\n18\n</answer>", "18", 1.0, 1.0, 0.0, 0.0, 0.5, "18", "18"),
    ("capitalised tags", R + "<Answer>\n18\n</Answer>", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, "18"),
    ("reasoning only", R, "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, "18"),
    ("bare number", "18", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("bare sentence", "The answer is 18.", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("gsm8k marker", "She makes 9 * 2 = $18.\n#### 18", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    # reward hacks: every one reads as no answer
    ("empty answer then number", R + "<answer>\n</answer>\n18", "18", 0.0, 0.0, 0.0, 0.0, 0.998, None, None),
    ("empty answer tag", R + "<answer></answer>", "18", 0.0, 0.0, 0.0, 0.0, 1.0, None, None),
    ("hedge or", R + "<answer>\n17 or 18\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge comma", R + "<answer>\n17, 18\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge range", R + "<answer>\n17-18\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge list", R + "<answer>\n[17, 18]\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge between", R + "<answer>\nbetween 17 and 18\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("expression", R + "<answer>\n9 * 2 = 18\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("explained", R + "<answer>\n18 because 9 * 2 = 18\n</answer>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("two answers differ", R + "<answer>\n17\n</answer>\n<answer>\n18\n</answer>", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, None),
    ("two answers agree", R + "<answer>\n18\n</answer>\n<answer>\n18\n</answer>", "18", 1.0, 1.0, 0.0, 0.0, 0.5, "18", "18"),
    ("nested answers", R + "<answer><answer>18</answer></answer>", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, None),
]
# fmt: on

T = "<THINK>\nJanet sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = $18.\n</THINK>\n"
TOK = T + "<SOLUTION>18</SOLUTION>"

# fmt: off
THINK_SOLUTION = [
    ("perfect", TOK, "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("newlines inside", T + "<SOLUTION>\n18\n</SOLUTION>", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("trailing newline", TOK + "\n", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("crlf newlines", TOK.replace("\n", "\r\n"), "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("wrong answer", T + "<SOLUTION>17</SOLUTION>", "18", 0.0, 1.0, 1.0, 1.0, 1.0, "17", "17"),
    ("dollar sign", T + "<SOLUTION>$18</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("units", T + "<SOLUTION>18 dollars</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("markdown bold", T + "<SOLUTION>**18**</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("boxed inside", T + "<SOLUTION>\\boxed{18}</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("decimal zeros", T + "<SOLUTION>18.00</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("thousands comma", T + "<SOLUTION>1,234</SOLUTION>", "1234", 1.0, 0.0, 1.0, 1.0, 1.0, "1234", "1234"),
    ("negative", T + "<SOLUTION>-12</SOLUTION>", "-12", 1.0, 1.0, 1.0, 1.0, 1.0, "-12", "-12"),
    ("sign wrong", T + "<SOLUTION>-18</SOLUTION>", "18", 0.0, 1.0, 1.0, 1.0, 1.0, "-18", "-18"),
    ("decimal", T + "<SOLUTION>1234.50</SOLUTION>", "1234.5", 1.0, 0.0, 1.0, 1.0, 1.0, "1234.5", "1234.5"),
    ("fraction", T + "<SOLUTION>3/4</SOLUTION>", "0.75", 1.0, 0.0, 1.0, 1.0, 1.0, "0.75", "0.75"),
    ("percent sign", T + "<SOLUTION>18%</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("x equals", T + "<SOLUTION>x = 18</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("korean", "<THINK>\n9 곱하기 2는 18입니다.\n</THINK>\n<SOLUTION>18</SOLUTION>", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("korean unit", T + "<SOLUTION>18개</SOLUTION>", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("text after", TOK + " Done.", "18", 1.0, 1.0, 0.0, 1.0, 0.995, "18", "18"),
    ("blank line between", T + "\n<SOLUTION>18</SOLUTION>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("spaces not newlines", "<THINK> 9*2=18 </THINK>  <SOLUTION> 18 </SOLUTION>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("preamble", "Let me think.\n" + TOK, "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("empty think", "<THINK>\n\n</THINK>\n<SOLUTION>18</SOLUTION>", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("no think", "<SOLUTION>18</SOLUTION>", "18", 1.0, 1.0, 0.0, 0.0, 0.5, "18", "18"),
    ("solution first", "<SOLUTION>18</SOLUTION>\n<THINK>\n9*2=18\n</THINK>", "18", 1.0, 1.0, 0.0, 0.0, 0.977, "18", "18"),
    ("truncated solution", T + "<SOLUTION>18", "18", 0.0, 0.0, 0.0, 0.0, 0.75, None, "18"),
    ("xml tags instead", OK, "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("lowercase tags", "<think>\n9*2=18\n</think>\n<solution>18</solution>", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("bare number", "18", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("gsm8k marker", "9 * 2 = 18\n#### 18", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    # reward hacks
    ("empty then number", T + "<SOLUTION></SOLUTION> 18", "18", 0.0, 0.0, 0.0, 0.0, 0.998, None, None),
    ("blank solution", T + "<SOLUTION>  </SOLUTION>", "18", 0.0, 0.0, 0.0, 0.0, 1.0, None, None),
    ("hedge or", T + "<SOLUTION>17 or 18</SOLUTION>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge en dash", T + "<SOLUTION>17–18</SOLUTION>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge range", T + "<SOLUTION>17-18</SOLUTION>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge set", T + "<SOLUTION>{17, 18}</SOLUTION>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge and", T + "<SOLUTION>17 and 18</SOLUTION>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("expression", T + "<SOLUTION>9 * 2 = 18</SOLUTION>", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("two differ", T + "<SOLUTION>17</SOLUTION><SOLUTION>18</SOLUTION>", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, None),
    ("two agree", T + "<SOLUTION>18</SOLUTION><SOLUTION>18</SOLUTION>", "18", 1.0, 1.0, 0.0, 0.0, 0.5, "18", "18"),
    ("nested", T + "<SOLUTION><SOLUTION>18</SOLUTION></SOLUTION>", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, None),
]
# fmt: on

Q = "<think>\nJanet sells 16 - 3 - 4 = 9 eggs a day and makes 9 * 2 = 18 dollars.\n</think>\n\n"
QOK = Q + "The answer is \\boxed{18}."

# fmt: off
QWEN3 = [
    ("perfect", QOK, "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("box only", Q + "\\boxed{18}", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("crlf newlines", QOK.replace("\n", "\r\n"), "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("summary then box", Q + "Janet makes $18 per day.\n\n**Final Answer:** $\\boxed{18}$", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("bold latex box", Q + "**\\(\\boxed{18}\\)**", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("answer line", Q + "Answer: 18", "18", 1.0, 1.0, 1.0, 1.0, 0.5, "18", "18"),
    ("bold answer line", Q + "**Answer:** 18", "18", 1.0, 1.0, 1.0, 1.0, 0.5, "18", "18"),
    ("the answer is", Q + "The answer is 18.", "18", 1.0, 1.0, 1.0, 1.0, 0.5, "18", "18"),
    ("answer is colon bold", Q + "The answer is: **18**", "18", 1.0, 1.0, 1.0, 1.0, 0.5, "18", "18"),
    ("sentence answer", Q + "So Janet makes $18 every day. The answer is 18.", "18", 1.0, 1.0, 1.0, 1.0, 0.5, "18", "18"),
    ("korean answer line", Q + "정답: 18", "18", 1.0, 1.0, 1.0, 1.0, 0.5, "18", "18"),
    ("korean sentence", Q + "따라서 답은 18입니다.", "18", 1.0, 0.0, 1.0, 1.0, 0.5, "18", "18"),
    ("korean thinking", "<think>\n하루에 9개를 팔아 9 * 2 = 18달러를 법니다.\n</think>\n\n최종 답: \\boxed{18}", "18", 1.0, 1.0, 1.0, 1.0, 1.0, "18", "18"),
    ("wrong box", Q + "\\boxed{17}", "18", 0.0, 1.0, 1.0, 1.0, 1.0, "17", "17"),
    ("sign wrong", Q + "\\boxed{-18}", "18", 0.0, 1.0, 1.0, 1.0, 1.0, "-18", "-18"),
    ("dollar in box", Q + "\\boxed{\\$18}", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("text units in box", Q + "\\boxed{18 \\text{ dollars}}", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("thousands comma", Q + "\\boxed{1,234}", "1234", 1.0, 0.0, 1.0, 1.0, 1.0, "1234", "1234"),
    ("negative", Q + "\\boxed{-3}", "-3", 1.0, 1.0, 1.0, 1.0, 1.0, "-3", "-3"),
    ("latex fraction", Q + "\\boxed{\\frac{3}{4}}", "0.75", 1.0, 0.0, 1.0, 1.0, 1.0, "0.75", "0.75"),
    ("decimal", Q + "\\boxed{1234.50}", "1234.5", 1.0, 0.0, 1.0, 1.0, 1.0, "1234.5", "1234.5"),
    ("percent", Q + "\\boxed{18\\%}", "18", 1.0, 0.0, 1.0, 1.0, 1.0, "18", "18"),
    ("empty think", "<think>\n\n</think>\n\n\\boxed{18}", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("no newlines", "<think>9*2=18</think>\\boxed{18}", "18", 1.0, 1.0, 0.0, 1.0, 1.0, "18", "18"),
    ("prefilled think", "Janet sells 9 eggs and makes 18 dollars.\n</think>\n\n\\boxed{18}", "18", 1.0, 1.0, 0.0, 1.0, 0.75, "18", "18"),
    ("text after box", Q + "\\boxed{18}\nLet me double-check: 9 * 2 = 18. Yes.", "18", 1.0, 1.0, 0.0, 1.0, 0.974, "18", "18"),
    ("think never closed", "<think>\nJanet makes 18 dollars. \\boxed{18}", "18", 0.0, 0.0, 0.0, 0.0, 0.25, None, "18"),
    ("draft box in thinking", "<think>\nmaybe \\boxed{17}\n</think>\n\nJanet earns 18 dollars.", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, "18"),
    ("final line no marker", Q + "Janet makes 18 dollars.", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, "18"),
    ("xml tags instead", OK, "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("bare number", "18", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("bare sentence", "The answer is 18.", "18", 0.0, 0.0, 0.0, 0.0, 0.0, None, "18"),
    ("unclosed box", Q + "\\boxed{18", "18", 0.0, 0.0, 0.0, 0.0, 0.75, None, None),
    # reward hacks
    ("empty box", Q + "\\boxed{}", "18", 0.0, 0.0, 0.0, 0.0, 1.0, None, None),
    ("empty box then number", Q + "\\boxed{} 18", "18", 0.0, 0.0, 0.0, 0.0, 0.998, None, None),
    ("hedge or", Q + "\\boxed{17 \\text{ or } 18}", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge comma", Q + "\\boxed{17, 18}", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge range", Q + "\\boxed{17-18}", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge list", Q + "\\boxed{[17, 18]}", "18", 0.0, 0.0, 1.0, 1.0, 1.0, None, None),
    ("hedge answer line", Q + "Answer: 17 or 18", "18", 0.0, 0.0, 1.0, 1.0, 0.5, None, None),
    ("two boxes differ", Q + "\\boxed{17} or \\boxed{18}", "18", 0.0, 0.0, 0.0, 0.0, 0.5, None, None),
    ("two boxes agree", Q + "\\boxed{18}\n\nSo the final answer is \\boxed{18}.", "18", 1.0, 1.0, 0.0, 0.0, 0.5, "18", "18"),
    ("two think closes", Q + "\\boxed{17}\n</think>\n\\boxed{18}", "18", 0.0, 0.0, 0.0, 0.0, 0.25, None, None),
]
# fmt: on

TABLES = {"xml": XML, "think-solution": THINK_SOLUTION, "qwen3-think": QWEN3}
CASES = [pytest.param(style, row, id=f"{style}:{row[0]}") for style, table in TABLES.items() for row in table]
REWARD_ORDER = ("correctness", "int", "strict_format", "soft_format", "xmlcount")


@pytest.mark.parametrize("style", list(TABLES))
def test_every_table_has_at_least_40_completions(style: str) -> None:
    assert len(TABLES[style]) >= 40
    assert len({row[0] for row in TABLES[style]}) == len(TABLES[style])


@pytest.mark.parametrize("style", list(TABLES))
def test_rewards_in_one_trl_batch(style: str) -> None:
    """The TRL call shape: conversational completions plus every dataset column as a keyword."""
    table = TABLES[style]
    completions = [[{"role": "assistant", "content": row[1]}] for row in table]
    columns = {
        "prompts": [[{"role": "user", "content": "q"}]] * len(table),
        "completion_ids": [[0]] * len(table),
        "trainer_state": None,
        "answer": [row[2] for row in table],
        "style": [style] * len(table),
        "question": ["q"] * len(table),
        "id": [str(i) for i in range(len(table))],
    }
    for position, name in enumerate(REWARD_ORDER):
        got = FNS[name](completions=completions, **columns)
        expected = [row[3 + position] for row in table]
        mismatches = [
            (row[0], g, e)
            for row, g, e in zip(table, got, expected, strict=True)
            if g != pytest.approx(e, abs=1e-9)
        ]
        assert not mismatches, f"{name}: (case, got, expected) {mismatches}"


@pytest.mark.parametrize(("style", "row"), CASES)
def test_extraction_and_grade(style: str, row: tuple) -> None:
    _case, text, gold, correctness, *_, strict, flexible = row
    assert PACK.extract(text, style=style, mode="strict") == strict
    assert PACK.extract(text, style=style, mode="flexible") == flexible
    verdict = PACK.grade(text, {"answer": gold, "style": style, "question": "q"}, style=style)
    assert verdict.extracted == strict
    assert verdict.correct is (correctness == 1.0)
    assert verdict.format_ok is (strict is not None)
    assert [verdict.scores[n] for n in REWARD_ORDER] == pytest.approx(list(row[3:8]))
    flex = PACK.grade(text, {"answer": gold, "style": style}, style=style, extract="flexible")
    assert flex.correct is (flexible is not None and PACK.is_correct(flexible, {"answer": gold}))


def test_function_names_match_their_keys() -> None:
    """TRL logs rewards/<__name__>/mean, so a function's name must be its rubric name."""
    assert {name: fn.__name__ for name, fn in FNS.items()} == {name: name for name in FNS}
    assert set(FNS) == set(PACK.default_weights())


def test_style_column_defaults_to_pack_default_and_plain_strings_work() -> None:
    texts = [OK, TOK, QOK]
    assert FNS["strict_format"](texts) == [1.0, 0.0, 0.0]  # default style is xml
    assert FNS["strict_format"](texts, style=["xml", "think-solution", "qwen3-think"]) == [1.0, 1.0, 1.0]
    assert FNS["strict_format"](texts, style=[None, "think-solution", None]) == [1.0, 1.0, 0.0]


def test_correctness_is_none_without_gold() -> None:
    assert FNS["correctness"]([OK, OK]) == [None, None]
    assert FNS["correctness"]([OK, OK], answer=["18", None]) == [1.0, None]


def test_unknown_style_and_misaligned_columns_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="no prompt style 'yaml'"):
        FNS["int"]([OK], style=["yaml"])
    with pytest.raises(ValueError, match="2 values for 1 completions"):
        FNS["correctness"]([OK], answer=["18", "19"])
