"""`evaluator sft/train/eval/score --domain ko-grammar` on CPU with the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from evaluator.domains.registry import get_pack


@pytest.mark.slow
def test_sft_train_eval_and_score_run_on_cpu(tmp_path: Path, tiny_model_dir: Path) -> None:
    sft = tmp_path / "sft"
    result = run_cli("sft", "--domain", "ko-grammar", "--model", "tiny", "--max-steps", "3",
                     "--output-dir", str(sft))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (sft / "final" / "adapter_config.json").is_file()

    grpo = tmp_path / "grpo"
    result = run_cli("train", "--domain", "ko-grammar", "--model", "tiny", "--max-steps", "1",
                     "--max-completion-length", "16", "--output-dir", str(grpo))  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (grpo / "metrics.jsonl").read_text().splitlines()]
    assert rows and all(k in rows[0] for k in ("rewards/format/mean", "rewards/exact_match/mean", "rewards/rouge1/mean"))

    ev = tmp_path / "eval"
    result = run_cli("eval", "--domain", "ko-grammar", "--model", "tiny", "--adapter", str(sft / "final"),
                     "--limit", "3", "--max-new-tokens", "12", "--out", str(ev))  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((ev / "report.json").read_text(encoding="utf-8"))
    assert report["domain"] == "ko-grammar" and report["headline"] == "final" and report["n_items"] == 3
    assert report["identity"]["language"] == "ko"

    rows = get_pack("ko-grammar").dataset(None, "test", limit=3).to_list()
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(json.dumps({"id": r["id"], "answer": r["answer"], "completion": r["answer"]},
                                          ensure_ascii=False) for r in rows), encoding="utf-8")  # fmt: skip
    result = run_cli("score", "--domain", "ko-grammar", "--predictions", str(preds), "--out", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    scored = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert scored["metrics"]["final"]["value"] == pytest.approx(1.0)
    assert "final" in result.output and "bertscore skipped" in result.output


def test_bertscore_flag_is_refused_by_a_pack_without_it(tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"answer": "#### 1", "completion": "1"}\n', encoding="utf-8")
    result = run_cli("score", "--domain", "gsm8k", "--predictions", str(preds), "--out", str(tmp_path / "s.json"),
                     "--bertscore-model", str(tmp_path))  # fmt: skip
    assert result.exit_code != 0 and "has no metric that takes --bertscore-model" in result.output
    result = run_cli("score", "--domain", "ko-grammar", "--predictions", str(preds), "--out", str(tmp_path / "s.json"),
                     "--bertscore-layers", "2")  # fmt: skip
    assert result.exit_code != 0 and "--bertscore-layers needs --bertscore-model" in result.output
