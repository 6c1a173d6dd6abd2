"""A tiny Qwen3 model and tokenizer, built offline, so every code path runs without the hub or a GPU.

The tokenizer is a byte-level BPE trained with ``tokenizers`` on text the caller supplies (the packs'
synthetic data), wrapped as a fast tokenizer with ChatML special tokens and a ChatML chat template.
Digits can be split one per token (``split_digits``), which small models need to learn arithmetic.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_BASE_TEXT = (
    "<reasoning> </reasoning> <answer> </answer> <THINK> </THINK> <SOLUTION> </SOLUTION> <think> </think> "
    "The answer is 0 1 2 3 4 5 6 7 8 9 . , $ % + - * / = ( ) #### system user assistant "
    '{"grade": 1, "score": 50.0, "criteria": {}, "rationale_ko": "수익률 샤프지수 변동성 최대낙폭 등급"} '
)


@dataclass(frozen=True)
class TinySpec:
    """Model dimensions. The default is the test-suite model (~0.1 M parameters)."""

    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    intermediate_size: int = 128
    vocab_size: int = 1024
    max_position_embeddings: int = 2048
    split_digits: bool = False
    seed: int = 0


DEMO_SPEC = TinySpec(
    hidden_size=256, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
    intermediate_size=768, vocab_size=512, max_position_embeddings=768, split_digits=True,
)
"""A ~2.5 M-parameter model with a digit-level tokenizer: small enough to learn on a laptop CPU."""

DEMO_2L_SPEC = TinySpec(
    hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    intermediate_size=768, vocab_size=512, max_position_embeddings=768, split_digits=True,
)
"""``DEMO_SPEC`` with 2 layers instead of 4, the candidate for a ~6-minute demo: on the demo's one-step problems
it starts copying the question's numbers sooner (seed 0: 40.8 % after 250 SFT steps against ~20 %), at ~0.45 s
per step instead of ~0.78 on 2 cores; how soon depends on the seed (``benchmarks/README.md``, "The demo")."""


def build_tokenizer(texts: Iterable[str], spec: TinySpec):
    """Train a byte-level BPE on ``texts`` and wrap it with ChatML tokens and template."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if spec.split_digits:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(r"\d"), behavior="isolated"), byte_level]
        )
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=spec.vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = [_BASE_TEXT, *texts]
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.padding_side = "left"
    return fast


def build_tiny(out_dir: str | os.PathLike[str], texts: Iterable[str], spec: TinySpec = TinySpec()) -> Path:
    """Build and save a random-init Qwen3ForCausalLM + tokenizer to ``out_dir`` (loadable by path)."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(texts, spec)
    torch.manual_seed(spec.seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        head_dim=spec.hidden_size // spec.num_attention_heads,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=False
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
