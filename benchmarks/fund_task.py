"""Fund GRPO task costs: building the dataset, the tiny tokenizer's corpus, and scoring completions.

Run: ``.venv/bin/python benchmarks/fund_task.py [--completions 2000]``. The dataset time is the engine on
the default sample universe (300 funds) plus one prompt row per rated fund; the corpus time is what
``ensure_tiny`` pays for the fund pack (a budget of 2 s); the reward rate is all four rewards on distinct
completions (every one misses the parse caches), as TRL calls them during GRPO; first with every fund
new to the reward caches, then again once each fund's prompt has been seen (the steady state of a run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from evaluator.domains.fund.task import dataset as task
from evaluator.domains.fund.task.rewards import build_reward_functions
from evaluator.domains.registry import get_pack


def _completions(rows: list[dict], count: int, offset: int = 0) -> tuple[list[str], dict[str, list]]:
    """Distinct answers: reference answers with the score and rationale varied, plus broken ones."""
    pack = get_pack("fund")
    texts, columns = [], {"grade": [], "facts": []}
    for i in range(offset, offset + count):
        row = rows[i % len(rows)]
        doc = json.loads(pack.reference_solution(row))
        doc["score"] = round(doc["score"] + (i % 7) * 0.01, 2)
        doc["rationale_ko"] += f" 참고 지표 {i}개를 검토했습니다."
        text = json.dumps(doc, ensure_ascii=False)
        if i % 5 == 0:
            text = "평가: " + text
        elif i % 11 == 0:
            text = text[: len(text) // 2]
        texts.append(text)
        columns["grade"].append(row["grade"])
        columns["facts"].append(row["facts"])
    return texts, columns


COLD = (
    "import time; t = time.perf_counter(); from evaluator.domains.registry import get_pack; "
    "get_pack('fund').tokenizer_corpus(400); print(time.perf_counter() - t)"
)


def cold_corpus_seconds() -> float:
    """The corpus in a fresh interpreter, imports (pandas, the engine) included: the worst case for ensure_tiny."""
    out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--completions", type=int, default=2000)
    args = parser.parse_args()
    pack = get_pack("fund")

    t0 = time.perf_counter()
    rows = pack.dataset(None, "all").to_list()
    dataset_s = time.perf_counter() - t0

    task._rows_for.cache_clear()
    t0 = time.perf_counter()
    corpus = pack.tokenizer_corpus(400)
    corpus_s = time.perf_counter() - t0

    cold_s = cold_corpus_seconds()

    texts, columns = _completions(rows, args.completions)
    rewards = build_reward_functions()
    t0 = time.perf_counter()
    for fn in rewards.values():
        fn(texts, **columns)
    reward_s = time.perf_counter() - t0
    rate = len(texts) / reward_s

    # a second batch of new completions for the same funds: the per-fund prompt caches are warm, as in
    # a GRPO run past its first pass over the dataset
    texts2, columns2 = _completions(rows, args.completions, offset=args.completions)
    t0 = time.perf_counter()
    for fn in rewards.values():
        fn(texts2, **columns2)
    warm_rate = len(texts2) / (time.perf_counter() - t0)

    print(f"dataset: {len(rows)} rows (all splits) in {dataset_s:.2f} s")
    print(
        f"tokenizer corpus: {len(corpus)} texts, {sum(map(len, corpus)):,} characters in {corpus_s:.2f} s "
        f"({cold_s:.2f} s in a fresh interpreter, imports included)"
    )
    print(f"rewards: {len(texts)} completions × {len(rewards)} rewards in {reward_s:.2f} s")
    print(
        f"fund task: dataset {len(rows)} rows in {dataset_s:.2f} s · tokenizer corpus {cold_s:.2f} s cold "
        f"(budget 2 s) · 4 rewards at {rate:,.0f} completions/s ({warm_rate:,.0f}/s with the funds' prompts cached)"
    )


if __name__ == "__main__":
    main()
