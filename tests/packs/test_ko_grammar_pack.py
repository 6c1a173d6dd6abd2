"""ko-grammar: synthetic rule families, contest-layout files, metrics (EM, Korean ROUGE-1, batched BERTScore) and
the grader, reports and comparisons they feed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evaluator.domains.base import PackError
from evaluator.domains.ko_grammar.answer import parse_answer
from evaluator.domains.ko_grammar.metrics import BertScorer, exact_match, final_score, rouge1
from evaluator.domains.ko_grammar.rules import FAMILIES
from evaluator.domains.ko_grammar.sources import load_items, synthetic
from evaluator.domains.registry import get_pack
from evaluator.evaluation.compare import compare_reports
from evaluator.evaluation.predictions import score_predictions

PACK = get_pack("ko-grammar")


# ------------------------------------------------------------------ data
def test_at_least_ten_rule_families_each_with_real_variants() -> None:
    assert len(FAMILIES) >= 10
    names = {f.name for f in FAMILIES}
    assert {"띄어쓰기", "되/돼", "안/않", "-로서/-로써", "사이시옷", "두음 법칙", "맞히다/맞추다", "-든지/-던지", "외래어 표기"} <= names
    for fam in FAMILIES:
        assert len(fam.entries) >= 3, fam.name
        for e in fam.entries:
            assert e.right != e.wrong and "{}" in e.sentence and e.reason and "{" not in e.reason


def test_synthetic_is_seeded_and_train_test_never_share_a_sentence() -> None:
    train, test = synthetic("train", 0), synthetic("test", 0)
    assert [i.id for i in synthetic("train", 0)] == [i.id for i in train]
    assert [i.id for i in synthetic("train", 1)] != [i.id for i in train]
    assert sorted(i.id for i in synthetic("train", 1)) == sorted(i.id for i in train)
    assert train and test and not {i.answer for i in train} & {i.answer for i in test}
    assert {i.question_type for i in train} == {"선택형", "교정형"}
    for item in train + test:
        sentence = parse_answer(item.answer).sentence or ""
        if item.question_type == "교정형":
            assert f'"{sentence}"' not in item.question  # the question shows the misspelt sentence
        else:
            assert "/" in item.question and "가운데 올바른 것을 선택하고" in item.question


def _contest_line(i: int, answer: str | None = '"너도 할 수 있다."가 옳다. 의존 명사는 띄어 쓴다.', **over) -> dict:
    doc = {"id": str(i), "input": {"question_type": "교정형", "question": '다음 문장을 고치세요.\n"너도 할수 있다."'}}
    if answer is not None:
        doc["output"] = {"answer": answer}
    doc.update(over)
    return doc


def _write_jsonl(path: Path, docs: list) -> Path:
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n", encoding="utf-8")
    return path


def test_contest_layout_jsonl_json_and_folder(tmp_path: Path) -> None:
    jsonl = _write_jsonl(tmp_path / "mine_train.jsonl", [_contest_line(1), _contest_line(2)])
    rows = PACK.dataset(str(jsonl), "train").to_list()
    assert [r["id"] for r in rows] == ["1", "2"] and rows[0]["question_type"] == "교정형"
    assert rows[0]["prompt"][-1]["content"].endswith('"너도 할수 있다."')
    (tmp_path / "mine_test.json").write_text(json.dumps([_contest_line(3)], ensure_ascii=False), encoding="utf-8")
    assert [r["id"] for r in PACK.dataset(str(tmp_path), "test").to_list()] == ["3"]
    assert len(PACK.dataset(str(tmp_path), "train").to_list()) == 2


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        (_contest_line(1, answer=None), "no output.answer"),
        (_contest_line(1, answer="할 수 있다가 맞다."), "does not follow"),
        (_contest_line(1, answer='"너도 할 수 있다."이 옳다. 이유.'), "받침"),
        (_contest_line(1, input={"question": "q"}), "no input.question_type"),
        (_contest_line(1, input={"question_type": "교정형"}), "no input.question"),
        ("not an object", "not a JSON object"),
    ],
)
def test_bad_contest_lines_are_refused_with_the_line(tmp_path: Path, doc, words: str) -> None:
    path = _write_jsonl(tmp_path / "x.jsonl", [_contest_line(0), doc])
    with pytest.raises(PackError) as err:
        load_items(str(path), "train")
    assert "line 2" in str(err.value) and words in str(err.value)


def test_unreadable_files_and_folders_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(PackError, match="line 1: not valid JSON"):
        load_items(str(bad), "train")
    dup = _write_jsonl(tmp_path / "dup.jsonl", [_contest_line(1), _contest_line(1)])
    with pytest.raises(PackError, match="appears twice"):
        load_items(str(dup), "train")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(PackError, match="expected one"):
        load_items(str(empty), "test")
    with pytest.raises(PackError, match="neither"):
        load_items(str(tmp_path / "missing"), "test")


# ------------------------------------------------------------------ metrics
def test_korean_rouge1_scores_partial_overlap_strictly_between_0_and_1() -> None:
    gold = "의존 명사는 앞말과 띄어 쓰므로 '할 수 있다' 형태로 적는다."
    partial = "의존 명사는 띄어 써야 하므로 이 표기가 맞다."
    for tokenizer in ("kiwi", "whitespace"):
        score = rouge1(partial, gold, tokenizer)
        assert 0.0 < score < 1.0, tokenizer
        assert rouge1(gold, gold, tokenizer) == pytest.approx(1.0)
        assert rouge1("커피 주문", gold, tokenizer) == 0.0
    from rouge_score import rouge_scorer  # why a tokenizer is passed: the default one zeroes Korean

    assert rouge_scorer.RougeScorer(["rouge1"]).score(gold, partial)["rouge1"].fmeasure == 0.0


def test_rouge1_whitespace_fallback_matches_a_hand_count() -> None:
    # tokens: a={가,나,다}, b={가,나,라,마}: overlap 2; P=2/4, R=2/3, F=2PR/(P+R)=4/7
    assert rouge1("가 나 라 마", "가 나 다", "whitespace") == pytest.approx(4 / 7)


def test_exact_match_is_whitespace_normalised() -> None:
    assert exact_match("너도  할 수 있다. ", "너도 할 수 있다.") == 1.0
    assert exact_match("너도 할수 있다.", "너도 할 수 있다.") == 0.0
    assert exact_match(None, "너도 할 수 있다.") == 0.0


def test_final_is_em_plus_mean_reason_metrics_over_two() -> None:
    assert final_score({"exact_match": 1.0, "rouge1": 0.5}) == pytest.approx(0.75)
    assert final_score({"exact_match": 0.0, "rouge1": 0.5, "bertscore": 0.9}) == pytest.approx(0.35)
    assert final_score({"exact_match": 1.0}) == pytest.approx(0.5)


# ------------------------------------------------------------------ grader and reports
ROW = {
    "id": "x",
    "answer": "\"너도 할 수 있다.\"가 옳다. 의존 명사는 앞말과 띄어 쓰므로 '할 수 있다' 형태로 적는다.",
    "question_type": "교정형",
    "style": "contest",
}


def test_grader_score_matches_the_rewards_and_the_final_formula() -> None:
    completion = '"너도 할 수 있다."가 옳다. 의존 명사는 띄어 써야 하므로 이 표기가 맞다.'
    verdict = PACK.grade(completion, ROW)
    values = PACK.score_of(verdict).values(PACK.metrics())
    fns = PACK.reward_functions()
    for name in ("format", "exact_match", "rouge1"):
        assert values[name] == pytest.approx(fns[name]([completion], answer=[ROW["answer"]])[0])
    assert values["exact_match"] == 1.0 and verdict.correct and 0 < values["rouge1"] < 1
    assert values["final"] == pytest.approx((1.0 + values["rouge1"]) / 2)
    wrong = PACK.grade('"너도 할수 있다."가 옳다. 붙여 쓴다.', ROW)
    assert not wrong.correct and PACK.score_of(wrong).values(PACK.metrics())["exact_match"] == 0.0
    bad_particle = PACK.grade('"너도 할 수 있다."이 옳다. 의존 명사는 띄어 쓴다.', ROW)
    assert bad_particle.correct and not bad_particle.format_ok  # the sentence is right; the format is not


def test_rubric_names_exactly_the_rewards_and_metrics_are_declared() -> None:
    assert set(PACK.default_weights()) == set(PACK.reward_functions()) == {"format", "exact_match", "rouge1"}
    heads = [m.name for m in PACK.metrics() if m.headline]
    assert heads == ["final"] and "bertscore" not in {m.name for m in PACK.metrics()}


def _predictions(tmp_path: Path, name: str, completions: list[str]) -> Path:
    rows = PACK.dataset(None, "test", limit=len(completions)).to_list()
    lines = [{**{k: r[k] for k in ("id", "question", "question_type", "answer")}, "completion": c}
             for r, c in zip(rows, completions, strict=True)]
    return _write_jsonl(tmp_path / name, lines)


def test_score_and_compare_iterate_over_declared_metrics(tmp_path: Path) -> None:
    rows = PACK.dataset(None, "test", limit=6).to_list()
    good = [r["answer"] for r in rows]
    half = [r["answer"] if i % 2 else '"틀린 문장."이 옳다. 모른다.' for i, r in enumerate(rows)]
    a, _ = score_predictions(PACK, _predictions(tmp_path, "a.jsonl", half))
    b, _ = score_predictions(PACK, _predictions(tmp_path, "b.jsonl", good))
    assert a["schema_version"] == 2 and a["headline"] == "final"
    assert set(a["metrics"]) == {"final", "exact_match", "rouge1", "format"}
    assert a["metrics"]["exact_match"]["value"] == pytest.approx(0.5)
    assert b["metrics"]["final"]["value"] == pytest.approx(1.0)
    assert any("BLEURT" in w for w in a["warnings"]) and any("bertscore skipped" in w for w in a["warnings"])
    per_item = [it["metrics"]["final"] for it in a["items"]]
    assert a["metrics"]["final"]["value"] == pytest.approx(sum(per_item) / len(per_item))
    result = compare_reports(a, b)
    m = result["metrics"]
    assert set(m) == {"final", "exact_match", "rouge1", "format"}
    assert m["exact_match"]["binary"] and m["exact_match"]["mcnemar_p"] is not None
    assert m["exact_match"]["n_better"] == 3 and m["exact_match"]["delta"] == pytest.approx(0.5)
    assert m["rouge1"]["mcnemar_p"] is None and m["final"]["mcnemar_p"] is None
    assert m["final"]["delta"] > 0 and m["final"]["ci95"][0] <= m["final"]["delta"] <= m["final"]["ci95"][1]


def test_compare_still_reads_version_1_reports() -> None:
    golden = Path(__file__).parents[1] / "golden" / "gsm8k_score.json"
    v1 = json.loads(golden.read_text(encoding="utf-8"))
    assert v1["schema_version"] == 1 and "metrics" not in v1
    flipped = json.loads(json.dumps(v1))
    for item in flipped["items"][:2]:
        item["correct_strict"] = not item["correct_strict"]
    result = compare_reports(v1, flipped)
    acc = result["metrics"]["accuracy"]
    assert acc["binary"] and acc["n"] == v1["n_items"]
    assert acc["delta"] == pytest.approx(result["results"]["strict"]["delta"])
    assert acc["mcnemar_p"] == pytest.approx(result["results"]["strict"]["mcnemar_p"])


# ------------------------------------------------------------------ BERTScore
@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT with a WordPiece vocabulary trained offline on the pack's own text."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("encoder")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(PACK.tokenizer_corpus(200), trainer)
    from tokenizers.processors import TemplateProcessing

    tok.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))]
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")
    fast.save_pretrained(out)
    import torch

    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=fast.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(out)
    return out


def test_bertscore_is_one_for_identical_reasons_and_runs_one_forward_per_batch(tiny_encoder: Path) -> None:
    scorer = BertScorer(str(tiny_encoder), num_layers=2, batch_size=4)
    refs = ["의존 명사는 앞말과 띄어 쓴다."] * 10
    cands = ["의존 명사는 앞말과 띄어 쓴다."] * 5 + ["외래어 표기법에 따른다."] * 4 + [""]
    scores = scorer.score(cands, refs)
    assert scorer.forwards == math.ceil(10 / 4)
    assert all(s == pytest.approx(1.0, abs=1e-5) for s in scores[:5])
    assert all(s < 0.999 for s in scores[5:9]) and scores[9] == 0.0
    with pytest.raises(ValueError, match="between 1 and 2"):
        BertScorer(str(tiny_encoder), num_layers=5)


def test_bertscore_joins_the_report_and_the_final(tiny_encoder: Path, tmp_path: Path) -> None:
    rows = PACK.dataset(None, "test", limit=4).to_list()
    path = _predictions(tmp_path, "p.jsonl", [r["answer"] for r in rows[:2]] + ['"틀린 문장."이 옳다. 모른다.'] * 2)
    pack = PACK.configure_metrics(bertscore_model=str(tiny_encoder), bertscore_num_layers=1)
    report, samples = score_predictions(pack, path)
    assert "bertscore" in report["metrics"] and not any("bertscore skipped" in w for w in report["warnings"])
    for s in samples:
        m = s["metrics"]
        assert m["final"] == pytest.approx((m["exact_match"] + (m["rouge1"] + m["bertscore"]) / 2) / 2)
    assert samples[0]["metrics"]["bertscore"] == pytest.approx(1.0, abs=1e-5)
    assert "bertscore" not in {m.name for m in PACK.metrics()}  # configuring made a copy


def test_packs_without_such_a_metric_refuse_the_option() -> None:
    with pytest.raises(PackError, match="--bertscore-model"):
        get_pack("gsm8k").configure_metrics(bertscore_model="/x")
