"""The run viewer's data layer: scanning, line-indexed pages, corrupted and half-written folders, safe names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from run_folder_fixtures import (
    make_comparison,
    make_evaluation,
    make_experiment,
    make_training_run,
    write_lines,
)

from evaluator.app.run_folders import studies
from evaluator.app.run_folders.jsonl import IndexCache, last_row
from evaluator.app.run_folders.metrics import MetricsCache, thin
from evaluator.app.run_folders.samples import Filter, read_page
from evaluator.app.run_folders.viewer import RunViewer


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "lab"
    make_training_run(root / "grpo" / "r1", steps=12, eval_every=4)
    make_evaluation(root / "eval-base", [True, False, False, True, False, False])
    make_evaluation(root / "eval-after", [True, True, False, False, True, False])
    make_comparison(root / "eval-base", root / "eval-after", root / "compare.json")
    make_experiment(root / "exp1", {"rules": root / "grpo" / "r1", "judge": root / "grpo" / "r1"})
    return root


def test_scan_finds_every_kind_and_reads_without_writing(tree: Path) -> None:
    before = _snapshot(tree)
    viewer = RunViewer([tree])
    entries = {e.key: e for e in viewer.catalog.scan()}
    assert {k: e.kind for k, e in entries.items()} == {
        "lab/grpo/r1": "training", "lab/eval-base": "evaluation", "lab/eval-after": "evaluation",
        "lab/compare.json": "comparison", "lab/exp1": "experiment", "lab/grpo/r1/eval": "evaluation"}
    run = entries["lab/grpo/r1"]
    assert (run.domain, run.model, run.steps, run.best) == ("gsm8k", "tiny", 12, 1.0)
    assert entries["lab/eval-after"].facts["headline_value"] == pytest.approx(3 / 6)
    assert entries["lab/compare.json"].facts["delta"] == pytest.approx(1 / 6)
    for entry in entries.values():
        assert entry.problems == [], entry
    data = viewer.training(run)
    keys = {t["name"] for c in data["charts"] for t in c["traces"]}
    assert {"reward", "rewards/correctness/mean", "eval/accuracy", "completions/mean_length"} <= keys
    held = next(t for c in data["charts"] for t in c["traces"] if t["name"] == "eval/accuracy")
    assert held["x"] == [4, 8, 12] and held["ci_low"] == pytest.approx([1 / 3 - 0.2, 2 / 3 - 0.2, 0.8])
    assert data["best"]["step"] == 12 and data["completions"] == 48
    viewer.completions(run, Filter(q="apples"), 1, 10)
    viewer.eval_samples(entries["lab/eval-base"], Filter(correct="no"), 1, 10)
    assert _snapshot(tree) == before  # nothing written, nothing touched


def test_completions_page_filter_search_and_judge(tree: Path) -> None:
    viewer = RunViewer([tree])
    run = viewer.catalog.get("lab", "grpo/r1")
    assert run is not None
    page = viewer.completions(run, Filter(), 2, 5)
    assert page["page"].total == 48 and page["page"].pages == 10 and [i["line"] for i in page["items"]] == list(range(6, 11))
    first = viewer.completions(run, Filter(), 1, 5)["items"][0]
    assert first["rewards"]["correctness"] == 0.0 and first["extracted"] is not None
    assert first["explanation"].startswith("판정 0") and first["judge_score"] == 4
    assert viewer.completions(run, Filter(), 3, 5)["items"][0]["explanation"] is None  # line 11: not judged
    rows = [json.loads(x) for x in (run.path / "completions.jsonl").read_text().splitlines()]
    correct = [r for r in rows if r["rewards"]["correctness"] >= 1]
    got = viewer.completions(run, Filter(reward="correctness", low=1.0), 1, 200)
    assert got["page"].total == len(correct) == 24
    assert [i["completion"] for i in got["items"]] == [r["completion"] for r in correct]
    some = rows[17]["prompt"].split("(")[1].rstrip(")")  # "step 5 #1"
    found = viewer.completions(run, Filter(q=some.upper()), 1, 10)
    assert [i["prompt"] for i in found["items"]] == [rows[17]["prompt"]]
    assert viewer.completions(run, Filter(q="no such text"), 1, 10)["page"].total == 0


def test_eval_samples_correct_and_incorrect(tree: Path) -> None:
    viewer = RunViewer([tree])
    entry = viewer.catalog.get("lab", "eval-after")
    assert entry is not None
    ok = viewer.eval_samples(entry, Filter(correct="yes"), 1, 50)
    bad = viewer.eval_samples(entry, Filter(correct="no"), 1, 50)
    assert [i["id"] for i in ok["items"]] == ["item-000", "item-001", "item-004"]
    assert [i["id"] for i in bad["items"]] == ["item-002", "item-003", "item-005"]
    data = viewer.evaluation(entry)
    names = [m["name"] for m in data["metrics"]]
    assert "accuracy" in names and "accuracy (strict extraction)" in names
    assert all(m["ci"] is not None for m in data["metrics"])


def test_comparison_and_experiment_pages(tree: Path) -> None:
    viewer = RunViewer([tree])
    viewer.catalog.scan()
    comp = studies.comparison(viewer, viewer.catalog.get("lab", "compare.json"))
    strict = comp["modes"][0]
    assert strict["gained"] == ["item-001", "item-004"] and strict["lost"] == ["item-003"]
    assert comp["links"]["a"].rel == "eval-base" and comp["links"]["b"].rel == "eval-after"
    exp = studies.experiment(viewer, viewer.catalog.get("lab", "exp1"))
    assert [a["name"] for a in exp["arms"]] == ["rules", "judge"] and exp["metric_names"] == ["accuracy"]
    assert exp["arms"][1]["cost"]["judge_bytes_sent"] == 4096 and exp["arms"][0]["ci"]["accuracy"] == (0.4, 0.6)
    assert exp["arms"][0]["seeds"][0]["run"].rel == "grpo/r1" and exp["problems"] == []
    assert [e.rel for e in exp["arms"][0]["seeds"][0]["evals"]] == ["grpo/r1/eval"] and exp["correction"] == "holm"


def test_corrupted_and_half_written_folders_are_shown_with_what_is_missing(tmp_path: Path) -> None:
    root = tmp_path / "bad"
    run = make_training_run(root / "cut", steps=6, eval_every=3, judge=False, finished=False)
    with open(run / "metrics.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"step": 7, "loss": 0.1, "rew')  # the trainer died mid-line
    lines = (run / "completions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2][:40] + "\n"  # a truncated line in the middle
    (run / "completions.jsonl").write_text("".join(lines), encoding="utf-8")
    (run / "best_adapter" / "best.json").write_text('{"metric": "eval/acc', encoding="utf-8")
    bare = root / "no-metrics"
    bare.mkdir(parents=True)
    (bare / "run_config.yaml").write_text("domain: [unclosed\n", encoding="utf-8")
    ev = make_evaluation(root / "ev", [True, False])
    (ev / "report.json").write_text((ev / "report.json").read_text()[:500], encoding="utf-8")
    lonely = root / "samples-only"
    lonely.mkdir()
    write_lines(lonely / "samples.jsonl", [{"id": "x", "correct": True}])
    (root / "exp").mkdir()
    (root / "exp" / "results.json").write_text("[]", encoding="utf-8")

    viewer = RunViewer([root])
    entries = {e.rel: e for e in viewer.catalog.scan()}
    assert set(entries) == {"cut", "no-metrics", "ev", "samples-only", "exp"}
    assert any("best.json is not valid JSON" in p for p in entries["cut"].problems)
    assert entries["cut"].steps == 6  # the last complete metrics line
    assert any("run_config.yaml is not valid YAML" in p for p in entries["no-metrics"].problems)
    assert any("metrics.jsonl is missing" in p for p in entries["no-metrics"].problems)
    assert any("report.json is not valid JSON" in p for p in entries["ev"].problems)
    assert any("report.json is missing" in p for p in entries["samples-only"].problems)
    assert any("not a JSON/YAML object" in p for p in entries["exp"].problems)

    data = viewer.training(entries["cut"])
    assert any("metrics.jsonl: the last line is incomplete" in p for p in data["problems"])
    assert any("run_summary.json is missing" in p for p in data["problems"])
    page = viewer.completions(entries["cut"], Filter(), 1, 5)
    assert page["items"][2]["error"] == "line 3 is not valid JSON (Unterminated string starting at)"
    assert page["items"][3]["completion"] and any("could not be read" in p for p in page["problems"])
    assert viewer.evaluation(entries["ev"])["metrics"] == []
    assert viewer.evaluation(entries["samples-only"])["problems"]
    assert studies.experiment(viewer, entries["exp"])["arms"] == []
    no_comp = viewer.completions(entries["no-metrics"], Filter(), 1, 5)
    assert no_comp["page"] is None and "completions.jsonl is missing" in no_comp["problems"][0]


def test_names_cannot_escape_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    make_evaluation(root / "ev", [True])
    outside = make_evaluation(tmp_path / "secret", [True])
    os.symlink(outside, root / "link")
    viewer = RunViewer([root])
    viewer.catalog.scan()
    assert viewer.catalog.get("lab", "ev") is not None
    for rel in ("../secret", "ev/../../secret", "/etc", "link", "ev/./", "", "ev\\..", "..", "ev/\x00"):
        assert viewer.catalog.get("lab", rel) is None, rel
    assert viewer.catalog.get("other", "ev") is None
    assert "lab/link" not in viewer.catalog.entries  # symlinked folders are not followed by the scan


def test_index_grows_with_the_file_and_reindexes_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_lines(path, [{"n": i} for i in range(10)])
    cache = IndexCache()
    idx = cache.get(path)
    assert idx is not None and len(idx) == 10
    with open(path, "a") as fh:
        fh.write('{"n": 10}\n\n{"n": 11}\n{"n": 1')
    grown = cache.get(path)
    assert grown is not None and len(grown) == 12 and grown.partial_bytes == len('{"n": 1')
    assert [r.value["n"] for r in grown.read(9, 5)] == [9, 10, 11] and grown.read(11, 1)[0].line == 13
    assert len(idx) == 10  # a reader holding the old index is not disturbed
    path.write_text('{"n": "new"}\n', encoding="utf-8")
    again = cache.get(path)
    assert again is not None and len(again) == 1 and again.read(0, 1)[0].value == {"n": "new"}
    assert last_row(path) == {"n": "new"}
    page = read_page(cache, path, Filter(), 5, 10)
    assert page is not None and page.page == 1 and page.total == 1


def test_metrics_extend_incrementally(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    write_lines(path, [{"step": i, "reward": float(i)} for i in range(1, 4)])
    cache = MetricsCache(IndexCache())
    first = cache.get(path)
    assert first is not None and first.series["reward"].values == [1.0, 2.0, 3.0]
    write_lines(path, [{"step": 4, "reward": None, "eval/accuracy": 0.5}, {"nostep": 1}])
    table = cache.get(path)
    assert table is not None and table.series["reward"].values == [1.0, 2.0, 3.0, None]
    assert table.best("eval/accuracy") == (0.5, 4) and len(table.bad_lines) == 1
    steps, values, stride = thin(table.series["reward"], limit=2)
    assert stride == 2 and steps == [1, 3, 4] and values == [1.0, 3.0, None]


@pytest.mark.parametrize("block", [3, 7, 64, 1 << 22])
def test_line_index_matches_a_plain_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Blank, space-led, long and unfinished lines, at every block size, against splitlines()."""
    import random

    from evaluator.app.run_folders import jsonl

    monkeypatch.setattr(jsonl, "BLOCK", block)
    rng = random.Random(block)
    pieces = ['{"a": 1}', "", "   ", '  {"b": "x"}', "\t", '{"c": "' + "y" * 50 + '"}', "{broken", '{"한": "글"}']
    text = "\n".join(rng.choice(pieces) for _ in range(300)) + '\n{"tail": '
    path = tmp_path / "x.jsonl"
    path.write_bytes(text.encode("utf-8"))
    idx = IndexCache().get(path)
    assert idx is not None
    lines = text.split("\n")
    expected = [(n, ln) for n, ln in enumerate(lines[:-1], 1) if ln.strip()]
    assert list(idx.lines) == [n for n, _ in expected]
    assert [path.read_bytes()[s:e].decode() for s, e in zip(idx.starts, idx.ends, strict=True)] == [ln for _, ln in expected]
    assert idx.partial_bytes == len(b'{"tail": ')
    rows = list(idx.iter_rows(chunk=17))
    assert [r.error is not None for r in rows] == [ln.strip().startswith("{broken") for _, ln in expected]


@pytest.mark.parametrize("chunk", [1, 7, 2000])
def test_byte_level_shortcuts_agree_with_parsing_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           chunk: int) -> None:
    """Searches and reward ranges decided from raw bytes give exactly what parsing each line gives."""
    import random

    from evaluator.app.run_folders import jsonl

    monkeypatch.setattr(jsonl, "CHUNK_ROWS", chunk)

    rng = random.Random(3)
    texts = ["Tom has 3 apples", "KELVIN \u212a here", "İstanbul", "a/b path", "tab\there", "quote \" mark",
             "한국어 답", "ctrl \x05 char", "back\\slash", "<answer>42</answer>", "rewards: {fake}"]
    rows = []
    for i in range(400):
        text = " ".join(rng.sample(texts, 3))
        rows.append({"step": i, "prompt": f"p{i} {text}", "completion": rng.choice(texts),
                     "rewards": {"correctness": rng.choice([0.0, 1.0, 2.0, None]), "fmt": rng.random()},
                     "advantage": 0.0})
    path = tmp_path / "completions.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for n, row in enumerate(rows):  # three writers: plain UTF-8, ASCII escapes, escaped slashes
            line = json.dumps(row, ensure_ascii=n % 3 == 1)
            fh.write((line.replace("/", "\\/") if n % 3 == 2 else line) + "\n")
    cache = IndexCache()
    idx = cache.get(path)
    assert idx is not None
    filters = [Filter(q=q) for q in ("k", "KELVIN", "i", "a/b", "tom has", "42</", "answer", "zzz", "한국")]
    filters += [Filter(reward="correctness", low=1.0), Filter(reward="correctness", high=0.5),
                Filter(reward="fmt", low=0.3, high=0.6), Filter(reward="missing", low=0.0),
                Filter(q="apples", reward="correctness", low=1.0)]
    for n, flt in enumerate(filters):
        fast = list(cache.matching(idx, ("fast", n), flt.keep, flt.quick))
        slow = list(cache.matching(idx, ("slow", n), flt.keep))
        assert fast == slow, flt
        assert slow == [k for k, row in enumerate(rows) if _expected(flt, row)], flt


def _expected(flt: Filter, row: dict) -> bool:
    score = row["rewards"].get(flt.reward)
    if flt.reward and (not isinstance(score, float) or (flt.low is not None and score < flt.low)
                       or (flt.high is not None and score > flt.high)):
        return False
    return not flt.q or flt.q.lower() in f"{row['prompt']} {row['completion']}".lower()


def test_config_keys_read_alone_equal_the_whole_parse(tmp_path: Path) -> None:
    """The scan reads four keys of run_config.yaml without parsing the rest; they must equal a full parse."""
    import yaml

    from evaluator.app.run_folders.classify import CONFIG_KEYS
    from evaluator.app.run_folders.documents import DocCache
    from evaluator.training.config import TrainConfig, save_config

    saved = tmp_path / "saved.yaml"
    save_config(TrainConfig(domain="gsm8k", model="qwen3-0.6b", max_steps=7, rewards=["correctness", "int"]), saved,
                resolved={"kind": "sft", "style": "xml", "rewards": {"correctness": 2.0}, "chat_format": {"a": [1, 2]}})
    docs = {
        "saved": saved.read_text(encoding="utf-8"),
        "mix": "# a multi-pack run\ndomain:\n  gsm8k: 0.5\n  fund: 0.5\nmodel: 'tiny'\nmax_steps: 3\n",
        "flow": "domain: {gsm8k: 0.5,\n  fund: 0.5}\n\"model\": tiny\nresolved: {kind: grpo}\nlr: 1e-5\n",
        "list": "model: x\nresolved:\n  rewards:\n  - a\n  - b\n  kind: sft\nmax_steps: 10\n...\n",
        "doc": "---\ndomain: gsm8k\nnote: |\n  model: not this\n  max_steps: 99\nmodel: m\n",
    }
    cache = DocCache()
    for name, text in docs.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        full = yaml.safe_load(text)
        assert cache.read(path, CONFIG_KEYS).value == {k: v for k, v in full.items() if k in CONFIG_KEYS}, name


def test_a_multi_pack_rloo_run_is_listed_by_its_algorithm_and_claims_no_extraction(tmp_path: Path) -> None:
    """A run mixing packs names no single extractor: its answers are 'not available', not 'none found'."""
    import yaml

    run = make_training_run(tmp_path / "lab" / "mix", steps=3, eval_every=0, judge=False)
    cfg = yaml.safe_load((run / "run_config.yaml").read_text(encoding="utf-8"))
    cfg["domain"] = {"gsm8k": 0.5, "fund": 0.5}
    cfg["algorithm"] = "rloo"
    (run / "run_config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    viewer = RunViewer([tmp_path / "lab"])
    entry = viewer.catalog.scan()[0]
    assert (entry.kind, entry.domain, entry.facts["algorithm"]) == ("training", "gsm8k,fund", "rloo")
    item = viewer.completions(entry, Filter(), 1, 1)["items"][0]
    assert item["extracted_known"] is False and item["extracted"] is None
    single = make_training_run(tmp_path / "lab" / "one", steps=1, eval_every=0, judge=False)
    one = viewer.catalog.get("lab", "one")
    assert one is not None and one.path == single
    first = viewer.completions(one, Filter(), 1, 1)["items"][0]
    assert first["extracted_known"] is True and first["extracted"] == first["completion"].split("\n")[2]


def test_a_run_folder_given_as_a_root_is_named_by_its_parent_and_limited_to_itself(tmp_path: Path) -> None:
    make_training_run(tmp_path / "lab" / "r1", steps=2, eval_every=0, judge=False)
    make_evaluation(tmp_path / "lab" / "sibling", [True])
    viewer = RunViewer([tmp_path / "lab" / "r1", tmp_path / "lab" / "r1"])
    assert [e.key for e in viewer.catalog.scan()] == ["lab/r1"]
    assert viewer.catalog.get("lab", "r1") is not None and viewer.catalog.get("lab", "sibling") is None
    both = RunViewer([tmp_path / "lab" / "r1", tmp_path / "lab"])
    assert sorted(e.key for e in both.catalog.scan()) == ["lab-2/r1", "lab-2/sibling", "lab/r1"]
