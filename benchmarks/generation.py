"""Batched generation (the harness) against a per-prompt ``generate`` loop, on the same greedy prompts.

Runs a model (default: the offline ``tiny`` model) on N pack prompts twice — once through
``Generator.generate`` (length-sorted, left-padded batches, one ``generate`` call per batch) and once
prompt by prompt the way a notebook would — then compares the decoded greedy completions.

    python benchmarks/generation.py [--model tiny] [--n 256] [--max-new-tokens 64] [--batch-size 64]
                                    [--init-std 0.1]

The ``tiny`` model as built (initialiser std 0.02) writes the same token over and over for every prompt,
which makes "identical" easy; ``--init-std 0.1`` re-draws its weight matrices so each prompt gets its
own varied text, a much harder test of batched vs per-prompt agreement. The distinct-output count is
printed so the reader can tell which case a run measured.

Last line: ``generation speedup=<ratio> identical=<fraction of prompts with identical output>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def per_prompt(model, tokenizer, prompts, max_new_tokens: int) -> list[str]:
    """The seed-notebook loop: render, tokenize and generate one prompt at a time."""
    import torch

    tokenizer.padding_side = "left"
    outs = []
    for messages in prompts:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        inputs = tokenizer(text, return_tensors="pt", add_special_tokens=False)
        with torch.inference_mode():
            out = model.generate(
                **inputs, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
            )
        outs.append(tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True))
    return outs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--domain", default="gsm8k")
    parser.add_argument("--data", default="synthetic")
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--init-std", type=float, default=None, help="re-draw weight matrices from N(0, std)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import torch

    from evaluator.core.generation import GenerationSettings
    from evaluator.domains.registry import get_pack
    from evaluator.evaluation.backends import Generator

    pack = get_pack(args.domain)
    rows = pack.dataset(args.data, "test", limit=args.n, seed=0).to_list()
    prompts = [r["prompt"] for r in rows]
    gen = Generator.load(args.model, quantize="none", device="cpu")
    model, tokenizer = gen.model, gen.tokenizer
    if args.init_std is not None:
        torch.manual_seed(0)
        with torch.no_grad():
            for param in model.parameters():
                if param.dim() == 2:
                    param.normal_(0.0, args.init_std)
    print(
        f"model={args.model} params={sum(p.numel() for p in model.parameters())} prompts={len(prompts)} "
        f"max_new_tokens={args.max_new_tokens} batch_size={args.batch_size} init_std={args.init_std} "
        f"threads={torch.get_num_threads()}"
    )

    # Warm both paths once so neither pays first-call costs inside the timing.
    gen.generate(prompts[:2], GenerationSettings(max_new_tokens=4, batch_size=2))
    per_prompt(model, tokenizer, prompts[:1], 4)

    t0 = time.perf_counter()
    batched = gen.generate(prompts, GenerationSettings(max_new_tokens=args.max_new_tokens, batch_size=args.batch_size))
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    looped = per_prompt(model, tokenizer, prompts, args.max_new_tokens)
    t_loop = time.perf_counter() - t0

    texts = [t[0] for t in batched.texts]
    same = sum(a == b for a, b in zip(texts, looped, strict=True))
    lengths = [c[0] for c in batched.n_tokens]
    print(
        f"batched: {t_batched:.2f}s ({batched.total_tokens / t_batched:.0f} tokens/s)  "
        f"per-prompt loop: {t_loop:.2f}s ({batched.total_tokens / t_loop:.0f} tokens/s)"
    )
    print(
        f"completion tokens: mean={statistics.mean(lengths):.1f} min={min(lengths)} max={max(lengths)}  "
        f"distinct completions: {len(set(texts))}/{len(texts)}  stopped at eos: "
        f"{sum(n < args.max_new_tokens for n in lengths)}/{len(lengths)}"
    )
    print(f"generation speedup={t_loop / t_batched:.2f} identical={same / len(texts):.4f}")


if __name__ == "__main__":
    main()
