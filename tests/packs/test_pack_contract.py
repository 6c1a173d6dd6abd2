"""Pack contract 2.0: typed rubric checked at load, declared metrics, scores, plots of version-1 and -2 reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.domains.base import ACCURACY, Metric, PackError, Score, check_metrics
from evaluator.domains.gsm8k.pack import GSM8KPack
from evaluator.domains.registry import get_pack, register, unregister


class _ForgetsAReward(GSM8KPack):
    name = "forgets"

    def rubric(self) -> dict[str, Any]:
        doc = super().rubric()
        del doc["rewards"]["xmlcount"]
        return doc


class _InventsAReward(GSM8KPack):
    name = "invents"

    def rubric(self) -> dict[str, Any]:
        doc = super().rubric()
        doc["rewards"]["politeness"] = {"weight": 1.0}
        return doc


class _BadWeight(GSM8KPack):
    name = "badweight"

    def rubric(self) -> dict[str, Any]:
        doc = super().rubric()
        doc["rewards"]["int"]["weight"] = "heavy"
        return doc


@pytest.mark.parametrize(
    ("cls", "words"),
    [
        (_ForgetsAReward, "missing xmlcount"),
        (_InventsAReward, "unknown politeness"),
        (_BadWeight, "rewards.int.weight must be a number ≥ 0, not 'heavy'"),
    ],
)
def test_a_rubric_that_does_not_name_exactly_the_rewards_fails_at_load(cls: type, words: str) -> None:
    register("broken", f"{__name__}:{cls.__name__}")
    try:
        with pytest.raises(PackError) as err:
            get_pack("broken")
        assert words in str(err.value) and "rewards" in str(err.value)
    finally:
        unregister("broken")


def test_shipped_packs_pass_the_contract_check() -> None:
    from evaluator.domains.registry import pack_names

    assert len(pack_names()) >= 3
    for name in pack_names():
        get_pack(name).check_contract()


def test_metric_declarations_are_checked() -> None:
    with pytest.raises(PackError, match="exactly one headline"):
        check_metrics([Metric("a"), Metric("b")], "p")
    with pytest.raises(PackError, match="twice"):
        check_metrics([ACCURACY, ACCURACY], "p")
    with pytest.raises(PackError, match="aggregation"):
        Metric("a", aggregation="median")


def test_score_values() -> None:
    assert Score(0.5).values([Metric("m", headline=True)]) == {"m": 0.5}
    assert Score({"a": 1, "b": None}).values([ACCURACY]) == {"a": 1.0}


def test_plot_reads_a_version_1_report_and_draws_declared_metrics(tmp_path: Path) -> None:
    from evaluator.evaluation.plots import plot_dir
    from evaluator.evaluation.plots_eval import measures

    v1 = json.loads((Path(__file__).parents[1] / "golden" / "gsm8k_score.json").read_text(encoding="utf-8"))
    assert v1["schema_version"] == 1
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text(json.dumps(v1), encoding="utf-8")
    written = plot_dir(run)
    assert [p.name for p in written] == ["eval_accuracy.png"] and written[0].stat().st_size > 1000
    v2 = {**v1, "schema_version": 2, "metrics": {
        "accuracy": {"value": 0.4, "ci95": [0.1, 0.7], "binary": True},
        "rouge1": {"value": 0.3, "ci95": [0.2, 0.4], "binary": False},
    }}  # fmt: skip
    names = [name for name, _ in measures([v2])]
    assert names[:3] == ["strict accuracy", "flexible accuracy", "rouge1"] and "accuracy" not in names


class _NewCorpus(GSM8KPack):
    name = "newcorpus"

    def tokenizer_corpus(self, limit: int = 400) -> list[str]:
        return ["새 팩의 말뭉치"]


def test_a_new_pack_changes_the_tiny_tokenizer_cache_key() -> None:
    from evaluator.domains.registry import corpus_fingerprint
    from evaluator.models.loading import tiny_corpus, tiny_dir

    before = tiny_dir("tiny")
    assert before.name == f"tiny-{corpus_fingerprint(tiny_corpus())}"
    register("newcorpus", f"{__name__}:_NewCorpus")
    try:
        after = tiny_dir("tiny")
        assert after != before and "새 팩의 말뭉치" in tiny_corpus()
    finally:
        unregister("newcorpus")
    assert tiny_dir("tiny") == before
    assert corpus_fingerprint(["a", "b"]) != corpus_fingerprint(["ab"])
