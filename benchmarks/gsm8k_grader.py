"""GSM8K grader throughput: completions graded per second (strict + flexible reading, every reward).

Run: ``.venv/bin/python benchmarks/gsm8k_grader.py [--repeats 5] [--limit N]``. Each completion goes through
``pack.grade(..., extract="flexible")`` — the call ``evaluator eval``/``score`` make: the five rewards (the
correctness reward reads the strict answer), the strict and the flexible reading and the gold comparison.

Completions: every real GSM8K test reference solution (``../shared/data/gsm8k`` or ``EVALUATOR_GSM8K_DIR``,
read in place) written in each of the three styles, plus seeded synthetic completions in English and Korean
(digits, Korean unit notation such as ``7만 2천 원``, hedges, two values, long reasoning). The figure is the
best of ``--repeats`` passes in CPU seconds of this process (``time.process_time``): on a shared machine the
wall time mostly measures the other jobs; both are printed. Lines before the last say how many of each
group were graded right (a check that the workload means what it says).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

from evaluator.domains.gsm8k.numbers import parse_gold
from evaluator.domains.gsm8k.styles import get_style
from evaluator.domains.registry import get_pack

REPO = Path(__file__).resolve().parents[1]
GSM8K = Path(os.environ.get("EVALUATOR_GSM8K_DIR", REPO.parent / "shared" / "data" / "gsm8k"))
STYLES = ("xml", "think-solution", "qwen3-think")


def real_completions(limit: int | None) -> list[tuple[str, str, str, str]]:
    """(group, style, completion, gold) for every real test solution in every style; [] without the data."""
    path = GSM8K / "test.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for row in rows[:limit]:
        solution = row["answer"].rsplit("####", 1)[0].strip()
        gold = parse_gold(row["answer"])
        out += [("real", style, get_style(style).render(solution, gold), row["answer"]) for style in STYLES]
    return out


def _korean(value: int, rng: random.Random) -> str:
    """``value`` in Korean unit notation, one of several ways people write it (``7만 2천``, ``7만2000``…)."""
    groups, rest = [], value
    for unit in ("", "만", "억", "조"):
        rest, part = divmod(rest, 10_000)
        if part:
            if rng.random() < 0.5 and part % 1000 == 0 and unit:
                text = f"{part // 1000}천"
            elif rng.random() < 0.3:
                text = f"{part:,}"
            else:
                text = str(part)
            groups.append(text + unit)
        if not rest:
            break
    return (" " if rng.random() < 0.7 else "").join(reversed(groups)) or "0"


def synthetic_completions(n: int, seed: int = 0) -> list[tuple[str, str, str, str]]:
    """Seeded completions a model might write, half of them Korean; every fifth one hedges or states two values."""
    rng = random.Random(seed)
    out = []
    filler = "먼저 각 상자의 개수를 구합니다. 12 * 3 = 36이고, 36 + 14 = 50입니다. " * 3
    for i in range(n):
        value = rng.choice(
            [rng.randint(1, 999), rng.randint(1, 99) * 1000, rng.randint(1, 9999) * 10_000 + 2000]
        )
        kind = i % 10
        unit = rng.choice(["원", "명", "개", "권", ""])
        if kind == 0:
            text, group = f"<reasoning>\n{filler}\n</reasoning>\n<answer>\n{value:,}\n</answer>", "digits"
        elif kind == 1:
            text, group = f"Step 1: 4 + 5 = 9.\nStep 2: 9 * 2 = 18.\nThe answer is {value}.", "digits"
        elif kind == 2:
            text, group = f"<reasoning>\n{filler}\n</reasoning>\n<answer>{value}{unit}</answer>", "digits"
        elif kind == 3:
            text, group = (
                f"<reasoning>\n{filler}\n</reasoning>\n<answer>{_korean(value, rng)} {unit}</answer>",
                "korean",
            )
        elif kind == 4:
            text, group = f"{filler}\n따라서 정답은 {_korean(value, rng)}{unit}입니다.", "korean"
        elif kind == 5:
            text, group = f"<think>\n{filler}\n</think>\n\n\\boxed{{{value}}}", "digits"
        elif kind == 6:
            text, group = (
                f"<reasoning>\n{filler}\n</reasoning>\n<answer>{value:,}원 ({_korean(value, rng)} 원)</answer>",
                "korean",
            )
        elif kind == 7:
            text, group = f"{filler}\n정답: {value}", "digits"
        elif kind == 8:
            text, group = f"<answer>{value} 또는 {value + 1}</answer>", "refused"
        else:
            text, group = f"<answer>약 {_korean(value, rng)}</answer>", "refused"
        style = "qwen3-think" if kind == 5 else "xml"
        out.append((group, style, text, str(value)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="real test rows to use (default: all 1,319)")
    parser.add_argument("--synthetic", type=int, default=2000)
    args = parser.parse_args()
    pack = get_pack("gsm8k")
    work = real_completions(args.limit) + synthetic_completions(args.synthetic)
    best, best_wall, verdicts = float("inf"), float("inf"), []
    for _ in range(args.repeats):
        started, started_wall = time.process_time(), time.perf_counter()
        verdicts = [
            pack.grade(text, {"answer": gold}, style=style, extract="flexible")
            for _, style, text, gold in work
        ]
        best = min(best, time.process_time() - started)
        best_wall = min(best_wall, time.perf_counter() - started_wall)
    for group in ("real", "digits", "korean", "refused"):
        graded = [v.correct for (g, _, _, _), v in zip(work, verdicts, strict=True) if g == group]
        print(f"{group:8s} completions={len(graded):5d} graded_right={sum(graded)}")
    print(
        f"gsm8k_grader completions={len(work)} wall_seconds={best_wall:.2f} "
        f"cpu_seconds={best:.2f} per_second={len(work) / best:.0f}"
    )


if __name__ == "__main__":
    main()
