"""GSM8K datasets: real GSM8K files, JSONL the test writes, a hub-layout local folder through the real
``load_dataset`` call, a ``save_to_disk`` folder, the synthetic generator, and the offline fallback."""

from __future__ import annotations

import ast
import json
import operator
import re
from pathlib import Path

import pytest

from evaluator.domains.base import PackError
from evaluator.domains.gsm8k.sources import load_rows
from evaluator.domains.gsm8k.synthetic import TEMPLATES, SyntheticConfig, generate
from evaluator.domains.registry import get_pack

PACK = get_pack("gsm8k")
COLUMNS = ["id", "prompt", "question", "answer", "solution", "style"]
ANNOTATION = re.compile(r"<<([^=<>]+)=([^<>]+)>>")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(expr: str) -> float:
    """Evaluate a calculator annotation's arithmetic (numbers and + - * / only)."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        raise ValueError(f"unexpected expression {expr!r}")

    return walk(ast.parse(expr, mode="eval").body)


@pytest.fixture(autouse=True)
def _private_datasets_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets-cache")


def test_real_gsm8k_files(gsm8k_dir: Path) -> None:
    train = PACK.dataset(str(gsm8k_dir), "train")
    test = PACK.dataset(str(gsm8k_dir), "test", style="qwen3-think", language="ko")
    assert (len(train), len(test)) == (7473, 1319)
    assert train.column_names == COLUMNS
    first = test[0]
    assert first["answer"] == "18"
    assert first["solution"] == (
        "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day at the farmer\u2019s market."
    )
    assert first["style"] == "qwen3-think"
    assert first["prompt"][0]["role"] == "system" and "\\boxed{}" in first["prompt"][0]["content"]
    assert "단계별" in first["prompt"][0]["content"]
    assert first["prompt"][1] == {"role": "user", "content": first["question"]}
    assert not any("<<" in s or "####" in s for s in test["solution"])
    assert len(set(train["id"])) == 7473
    golds = train["answer"]
    assert "1080" in golds and "-7" in golds and not any("," in g for g in golds)


def test_real_jsonl_file_with_limit(gsm8k_dir: Path) -> None:
    ds = PACK.dataset(str(gsm8k_dir / "test.jsonl"), "test", limit=5)
    assert len(ds) == 5
    assert ds["answer"] == ["18", "3", "70000", "540", "20"]
    assert ds["id"][0] == "test-00000"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = [
    json.dumps(
        {"question": "Tom has 3 apples and buys 4 more. How many?", "answer": "3+4=<<3+4=7>>7\n#### 7"}
    ),
    "",
    json.dumps(
        {"id": "q-2", "question": "A pen costs $1,200.", "answer": "Price\n#### 1,200"}, ensure_ascii=False
    ),
]


def test_written_jsonl(tmp_path: Path) -> None:
    ds = PACK.dataset(str(_write(tmp_path / "mine.jsonl", GOOD)), "train", style="think-solution")
    assert ds["id"] == ["mine-00000", "q-2"]
    assert ds["answer"] == ["7", "1200"]
    assert ds["solution"] == ["3+4=7", "Price"]
    assert ds["style"] == ["think-solution", "think-solution"]


def test_folder_of_split_files(tmp_path: Path) -> None:
    _write(tmp_path / "train.jsonl", GOOD)
    _write(tmp_path / "test.jsonl", GOOD[:1])
    assert len(PACK.dataset(str(tmp_path), "train")) == 2
    assert PACK.dataset(str(tmp_path), "test")["answer"] == ["7"]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"question": "q", "answer": "#### 3"', "line 4 is not valid JSON"),
        ('{"question": "q"}', "line 4 has no 'answer'"),
        ('{"question": "", "answer": "#### 1"}', "line 4 has no 'question'"),
        ('["q", "#### 3"]', "line 4 is not a JSON object"),
        ('{"question": "q", "answer": "the answer is three"}', "line 4: no single final answer"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, bad_line: str, message: str) -> None:
    path = _write(tmp_path / "broken.jsonl", [*GOOD, bad_line])
    with pytest.raises(PackError) as info:
        PACK.dataset(str(path), "train")
    assert str(path) in str(info.value) and message in str(info.value)


def _hub_mirror(folder: Path) -> Path:
    """A local copy laid out like the hub repo openai/gsm8k: configs main and socratic, parquet per split."""
    from datasets import Dataset

    rows = {
        "main": [
            {"question": "Main question one?", "answer": "1+1=<<1+1=2>>2\n#### 2"},
            {"question": "Main question two?", "answer": "#### 5"},
        ],
        "socratic": [{"question": "Socratic question?", "answer": "How many? ** 9\n#### 9"}],
    }
    for config, data in rows.items():
        (folder / config).mkdir(parents=True)
        for split in ("train", "test"):
            Dataset.from_list(data).to_parquet(str(folder / config / f"{split}-00000-of-00001.parquet"))
    (folder / "README.md").write_text(
        "---\nconfigs:\n"
        "- config_name: main\n  data_files:\n  - split: train\n    path: main/train-*\n  - split: test\n    path: main/test-*\n"
        "- config_name: socratic\n  data_files:\n  - split: train\n    path: socratic/train-*\n"
        "  - split: test\n    path: socratic/test-*\n---\n",
        encoding="utf-8",
    )
    return folder


def test_hub_id_code_path_on_a_local_hub_layout_folder(tmp_path: Path) -> None:
    """The same ``load_dataset(source, "main", split=...)`` call the hub id takes, pointed at a local copy."""
    folder = _hub_mirror(tmp_path / "gsm8k-mirror")
    ds = PACK.dataset(str(folder), "test")
    assert ds["question"] == ["Main question one?", "Main question two?"]  # the "main" config, not socratic
    assert ds["answer"] == ["2", "5"]
    assert ds["id"] == ["gsm8k-test-00000", "gsm8k-test-00001"]
    assert ds["solution"] == ["1+1=2", ""]


def test_save_to_disk_folder(tmp_path: Path) -> None:
    from datasets import Dataset, DatasetDict

    data = Dataset.from_list([{"question": f"Q{i}?", "answer": f"work\n#### {i}"} for i in range(4)])
    DatasetDict({"train": data, "test": data.select([0])}).save_to_disk(str(tmp_path / "dd"))
    data.save_to_disk(str(tmp_path / "single"))
    assert PACK.dataset(str(tmp_path / "dd"), "train", limit=3)["answer"] == ["0", "1", "2"]
    assert len(PACK.dataset(str(tmp_path / "single"), "anything")) == 4
    with pytest.raises(PackError, match="has splits train, test, not 'validation'"):
        PACK.dataset(str(tmp_path / "dd"), "validation")


def test_dataset_without_gsm8k_columns_is_a_clear_error(tmp_path: Path) -> None:
    from datasets import Dataset

    Dataset.from_list([{"prompt": "x", "label": 1}]).save_to_disk(str(tmp_path / "other"))
    with pytest.raises(PackError, match="has no question, answer column"):
        PACK.dataset(str(tmp_path / "other"), "train")


def test_synthetic_is_reproducible_and_seeded() -> None:
    a = PACK.dataset("synthetic", "train", limit=50, seed=3)
    b = PACK.dataset("synthetic", "train", limit=50, seed=3)
    c = PACK.dataset("synthetic", "train", limit=50, seed=4)
    assert a.to_list() == b.to_list()
    assert a["question"] != c["question"]
    assert a.column_names == COLUMNS


def test_synthetic_arithmetic_checks_out() -> None:
    """Every calculator annotation evaluates to what it claims, and the last one is the answer."""
    problems = generate(600, "train", seed=1, config=SyntheticConfig(min_steps=1, max_steps=6, max_number=60))
    assert {p.template for p in problems} == set(TEMPLATES)
    for p in problems:
        notes = ANNOTATION.findall(p.answer_field)
        assert len(notes) == p.steps, p.answer_field
        for expr, result in notes:
            assert evaluate(expr) == float(result), (expr, result)
        assert int(notes[-1][1]) == p.answer > 0
        assert p.answer_field.endswith(f"#### {p.answer}")


def test_synthetic_splits_are_disjoint_and_deduplicated() -> None:
    train = PACK.dataset("synthetic", "train", limit=2000)
    test = PACK.dataset("synthetic", "test")
    assert len(test) == 300
    assert len(set(train["question"])) == 2000 and len(set(test["question"])) == 300
    assert not set(train["question"]) & set(test["question"])
    other_seed = PACK.dataset("synthetic", "test", seed=9, limit=300)
    assert not set(train["question"]) & set(other_seed["question"])


def test_synthetic_difficulty_is_adjustable() -> None:
    easy = generate(200, "train", config=SyntheticConfig())
    assert {p.steps for p in easy} == {1, 2, 3}
    assert max(p.answer for p in easy) < 1000
    hard = PACK.dataset("synthetic:steps=4-5,max=50,n=30", "train")
    assert len(hard) == 30
    assert all(len(re.findall(r"\d+ [-+*/] \d+", s)) >= 4 for s in hard["solution"])
    with pytest.raises(PackError, match="bad synthetic option 'depth=3'"):
        PACK.dataset("synthetic:depth=3", "train")
    with pytest.raises(PackError, match="1 <= min <= max <= 8"):
        PACK.dataset("synthetic:steps=3-1", "train")


def test_auto_falls_back_to_synthetic_offline_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    ds = PACK.dataset(None, "test", limit=4)
    err = capsys.readouterr().err
    assert "openai/gsm8k" in err and "synthetic" in err
    assert ds["id"][0].startswith("synthetic-test-")
    assert ds["question"] == PACK.dataset("synthetic", "test", limit=4)["question"]
    assert len(PACK.dataset("auto", "train", limit=2)) == 2


@pytest.mark.parametrize("source", ["openai/gsm8k", "gsm8k"])
def test_hub_id_offline_is_a_clear_error(source: str) -> None:
    with pytest.raises(PackError, match=r"could not load GSM8K from 'openai/gsm8k' \(split 'test'\)"):
        PACK.dataset(source, "test")


@pytest.mark.parametrize(
    ("source", "split", "message"),
    [
        ("no-such-thing", "train", "unknown GSM8K source 'no-such-thing'"),
        ("./missing.jsonl", "train", "does not exist"),
        ("synthetic", "validation", "splits train, test, not 'validation'"),
    ],
)
def test_unknown_sources_are_clear_errors(source: str, split: str, message: str) -> None:
    with pytest.raises(PackError, match=re.escape(message)):
        PACK.dataset(source, split)


def test_bad_style_language_and_limit(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="no prompt style 'yaml'"):
        PACK.dataset("synthetic", "train", style="yaml", limit=1)
    with pytest.raises(PackError, match="not 'fr'"):
        PACK.dataset("synthetic", "train", language="fr", limit=1)
    with pytest.raises(PackError, match="limit must be at least 1, not 0"):
        load_rows("synthetic", "train", limit=0)
    (tmp_path / "notes.txt").write_text("hi", encoding="utf-8")
    with pytest.raises(PackError, match=r"is not a \.jsonl file"):
        PACK.dataset(str(tmp_path / "notes.txt"), "train")
