"""`evaluator eval` with the real tiny model (and its GRPO adapter): generation, grading, files, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evaluator.app.cli import app
from evaluator.core.generation import GenerationSettings
from evaluator.core.schemas import schema_problems
from evaluator.domains.registry import get_pack
from evaluator.evaluation.backends import Generator
from evaluator.evaluation.harness import evaluate
from evaluator.evaluation.inputs import Items, ReportFolder
from evaluator.evaluation.report import report_schema, samples_schema

pytestmark = pytest.mark.slow
LIMIT, MAX_NEW = 10, 24
EVAL_ARGS = ["--domain", "gsm8k", "--model", "tiny", "--data", "synthetic", "--limit", str(LIMIT)]


def _text(result) -> str:
    return " ".join(result.output.split())


def _read(folder: Path) -> tuple[dict, list[dict]]:
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    samples = [json.loads(x) for x in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    return report, samples


def _rows() -> list[dict]:
    return get_pack("gsm8k").dataset("synthetic", "test", limit=LIMIT).to_list()


def _reference(model_dir: Path, prompts: list, max_new_tokens: int) -> list[tuple[str, int]]:
    """Greedy completions one prompt at a time with plain transformers: the independent reference."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    out = []
    for messages in prompts:
        ids = tok.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_tensors="pt", return_dict=True
        )
        with torch.inference_mode():
            seq = model.generate(
                **ids, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id
            )
        new = seq[0, ids["input_ids"].shape[1] :]
        out.append((tok.decode(new, skip_special_tokens=True), len(new)))
    return out


@pytest.fixture(scope="module")
def base_eval(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "base"
    args = ["eval", *EVAL_ARGS, "--max-new-tokens", str(MAX_NEW), "--batch-size", "4", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "accuracy (strict)" in result.output
    return out


def test_eval_writes_a_valid_report_and_one_sample_per_prompt(base_eval: Path) -> None:
    report, samples = _read(base_eval)
    assert schema_problems(report, report_schema()) == []
    assert all(schema_problems(s, samples_schema()) == [] for s in samples)
    rows = _rows()
    assert [s["id"] for s in samples] == [r["id"] for r in rows] == [it["id"] for it in report["items"]]
    assert [s["question"] for s in samples] == [r["question"] for r in rows]
    assert report["kind"] == "evaluation" and report["n_items"] == LIMIT and report["n_samples"] == 1
    for mode in ("strict", "flexible"):
        n_right = sum(s[f"correct_{mode}"] for s in samples)
        assert report["accuracy"][mode]["n_correct"] == n_right
        assert report["accuracy"][mode]["value"] == pytest.approx(n_right / LIMIT)
        assert [it[f"correct_{mode}"] for it in report["items"]] == [s[f"correct_{mode}"] for s in samples]
    assert report["format_rate"]["value"] == pytest.approx(sum(s["format_ok"] for s in samples) / LIMIT)
    assert set(report["reward_means"]) == {"correctness", "int", "strict_format", "soft_format", "xmlcount"}
    assert report["pass_at_k"] is None and report["maj_at_k"] is None
    assert report["domain_metrics"]["no_answer"] == sum(s["extracted"] is None for s in samples)

    gen = report["generation"]
    assert gen["backend"] == "hf" and gen["do_sample"] is False and gen["temperature"] == 0.0
    assert gen["batch_size"] == 4 and gen["max_new_tokens"] == MAX_NEW and gen["padding_side"] == "left"
    assert gen["quantize"] == "none" and gen["device"] == "cpu"
    ident = report["identity"]
    assert ident["model"] == "tiny" and ident["data"] == "synthetic" and ident["split"] == "test"
    assert ident["limit"] == LIMIT and ident["adapter"] is None
    timing = report["timing"]
    assert timing["n_generated_tokens"] == sum(s["n_tokens"] for s in samples) > 0
    assert timing["tokens_per_second"] == pytest.approx(
        timing["n_generated_tokens"] / timing["generation_seconds"], rel=0.05
    )
    assert all(1 <= s["n_tokens"] <= MAX_NEW for s in samples)
    assert sorted(p.name for p in base_eval.iterdir()) == ["report.json", "samples.jsonl"]


def test_batched_completions_equal_one_prompt_at_a_time(base_eval: Path, tiny_model_dir: Path) -> None:
    """Length-sorted left-padded batches must give each prompt its own greedy completion, in order."""
    _, samples = _read(base_eval)
    reference = _reference(tiny_model_dir, [r["prompt"] for r in _rows()], MAX_NEW)
    assert [s["completion"] for s in samples] == [text for text, _ in reference]
    assert [s["n_tokens"] for s in samples] == [n for _, n in reference]


def test_every_sample_verdict_is_the_packs_grade(base_eval: Path) -> None:
    pack = get_pack("gsm8k")
    _, samples = _read(base_eval)
    for row, sample in zip(_rows(), samples, strict=True):
        for mode in ("strict", "flexible"):
            verdict = pack.grade(sample["completion"], row, extract=mode)
            assert sample[f"extracted_{mode}"] == verdict.extracted
            assert sample[f"correct_{mode}"] is verdict.correct
            assert sample["scores"] == verdict.scores


def test_a_loaded_model_is_evaluated_in_place_and_left_as_it_was(tiny_model_dir: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model.train()
    tok.padding_side = "right"
    gen = Generator(model, tok, info={"model": "in-memory policy"})
    report = evaluate("gsm8k", gen, Items(data="synthetic", limit=4), GenerationSettings(max_new_tokens=8, batch_size=3))
    assert model.training is True and tok.padding_side == "right"
    assert report["identity"]["model"] == "in-memory policy" and report["samples_file"] is None
    assert schema_problems(report, report_schema()) == []

    import torch

    rng_before = torch.get_rng_state()
    sampled = GenerationSettings(samples=3, temperature=1.0, max_new_tokens=6, seed=7)
    first = evaluate("gsm8k", gen, Items(data="synthetic", limit=3), sampled)
    again = evaluate("gsm8k", gen, Items(data="synthetic", limit=3), sampled)
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's random stream is untouched
    assert first["n_completions"] == 9 and first["pass_at_k"]["k"] == 3 and first["maj_at_k"] is not None
    assert first["pass_at_k"]["strict"]["1"]["value"] == pytest.approx(first["accuracy"]["strict"]["value"])
    assert first["generation"]["do_sample"] is True and first["generation"]["temperature"] == 1.0
    assert (
        first["items"] == again["items"]
        and first["timing"]["n_generated_tokens"] == again["timing"]["n_generated_tokens"]
    )


class _FlakyModel:
    """The real tiny model behind a ``generate`` that fails for any batch holding more than one prompt
    (what an out-of-memory error looks like), and always for one poisoned prompt."""

    def __init__(self, model, poison: list[int]) -> None:
        self._model, self._poison = model, poison

    def __getattr__(self, name):
        return getattr(self._model, name)

    def generate(self, input_ids, **kwargs):
        if input_ids.shape[0] > 1:
            raise RuntimeError("CUDA out of memory (injected)")
        if input_ids[0].tolist() == self._poison:
            raise RuntimeError("device-side assert (injected)")
        return self._model.generate(input_ids, **kwargs)


def test_a_failing_batch_is_retried_per_prompt_and_one_bad_prompt_does_not_stop_the_run(
    tiny_model_dir: Path,
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    rows = _rows()[:5]
    plain = Generator(model, tok)
    poison = plain.render(rows[2]["prompt"])
    flaky = Generator(_FlakyModel(model, tok(poison, add_special_tokens=False)["input_ids"]), tok)
    settings = GenerationSettings(max_new_tokens=6, batch_size=5)
    expected = plain.generate([r["prompt"] for r in rows], settings)
    got = flaky.generate([r["prompt"] for r in rows], settings)
    assert set(got.errors) == {2} and "device-side assert" in got.errors[2]
    assert got.texts[2] == [""] and got.n_tokens[2] == [0]
    for i in (0, 1, 3, 4):
        assert got.texts[i] == expected.texts[i]

    report = evaluate("gsm8k", flaky, Items(rows=rows), settings)
    assert report["n_errors"] == 1 and report["errors"][0]["id"] == rows[2]["id"]
    assert report["items"][2]["correct_flexible"] is False and any(
        "failed to generate" in w for w in report["warnings"]
    )


def test_eval_with_the_grpo_adapter_and_compare_with_the_base(
    base_eval: Path, tiny_grpo_run: Path, tmp_path: Path
) -> None:
    adapter = tiny_grpo_run / "final"
    gen = Generator.load("tiny", adapter=adapter)
    from peft import PeftModel

    assert isinstance(gen.model, PeftModel) and not gen.model.training
    assert any("lora_A" in name for name, _ in gen.model.named_parameters())

    out = tmp_path / "adapter"
    args = [
        "eval",
        *EVAL_ARGS,
        "--max-new-tokens",
        str(MAX_NEW),
        "--batch-size",
        "4",
        "--adapter",
        str(adapter),
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report, samples = _read(out)
    assert schema_problems(report, report_schema()) == []
    assert report["identity"]["adapter"] == str(adapter) and len(report["identity"]["adapter_sha256"]) == 16
    assert len(samples) == LIMIT

    cmp_path = tmp_path / "compare.json"
    result = CliRunner().invoke(app, ["compare", str(base_eval), str(out), "--out", str(cmp_path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(cmp_path.read_text(encoding="utf-8"))
    base, _ = _read(base_eval)
    assert doc["n_common"] == LIMIT and doc["warnings"] == []
    for mode in ("strict", "flexible"):
        r = doc["results"][mode]
        assert r["delta"] == pytest.approx(
            report["accuracy"][mode]["value"] - base["accuracy"][mode]["value"]
        )
        assert (
            r["n_gained"] - r["n_lost"]
            == report["accuracy"][mode]["n_correct"] - base["accuracy"][mode]["n_correct"]
        )


def test_eval_in_4bit_on_cpu(tiny_model_dir: Path, tmp_path: Path) -> None:
    gen = Generator.load("tiny", quantize="4bit", device="cpu")
    layers = [m for m in gen.model.modules() if type(m).__name__ == "Linear4bit"]
    assert layers and all(m.support_avx512bf16_for_cpu is False for m in layers)
    report = evaluate(
        "gsm8k", gen, Items(data="synthetic", limit=3), GenerationSettings(max_new_tokens=8), out=ReportFolder(tmp_path / "q4")
    )
    assert report["generation"]["quantize"] == "4bit"
    _, samples = _read(tmp_path / "q4")
    assert len(samples) == 3 and all(s["n_tokens"] >= 1 for s in samples)


def test_eval_refuses_bad_requests_cleanly(tiny_model_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    cases = [
        (["--samples", "4", "--out", str(tmp_path / "a")], "temperature"),
        (["--out", str(busy)], "--force"),
        (["--adapter", str(tmp_path / "nope"), "--out", str(tmp_path / "b")], "does not exist"),
        (["--style", "haiku", "--out", str(tmp_path / "c")], "haiku"),
        (["--backend", "vllm", "--out", str(tmp_path / "d")], "vllm"),
        (["--limit", "0", "--out", str(tmp_path / "e")], "at least 1"),
        (["--extract", "loose", "--out", str(tmp_path / "f")], "strict or flexible"),
    ]
    for extra, needle in cases:
        result = runner.invoke(app, ["eval", *EVAL_ARGS, "--max-new-tokens", "4", *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert needle in _text(result) and "Traceback" not in result.output, (extra, result.output)
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
    result = runner.invoke(app, ["eval", *EVAL_ARGS, "--max-new-tokens", "4", "--out", str(busy), "--force"])
    assert result.exit_code == 0, result.output
    assert (busy / "report.json").exists() and (busy / "keep.txt").read_text() == "mine"
