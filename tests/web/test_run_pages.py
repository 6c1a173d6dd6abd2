"""The run viewer's pages over HTTP: admin only, stable names, corrupted folders shown (never a 500)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from run_folder_fixtures import (
    make_comparison,
    make_evaluation,
    make_experiment,
    make_training_run,
    write_lines,
)


def build_tree(root: Path) -> Path:
    make_training_run(root / "grpo" / "r1", steps=12, eval_every=4)
    make_evaluation(root / "eval-base", [True, False, False, True, False, False])
    make_evaluation(root / "eval-after", [True, True, False, False, True, False])
    make_comparison(root / "eval-base", root / "eval-after", root / "compare.json")
    make_experiment(root / "exp1", {"rules": root / "grpo" / "r1", "judge": root / "grpo" / "r1"})
    broken = make_training_run(root / "broken", steps=3, eval_every=0, judge=False)
    with open(broken / "completions.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"step": 4, "prompt": "cut')
    (broken / "run_config.yaml").unlink()
    (root / "half-eval").mkdir()
    write_lines(root / "half-eval" / "samples.jsonl", [{"id": "a"}])
    (root / "half-eval" / "report.json").write_text('{"schema_version": 2, "kind": "evalu', encoding="utf-8")
    return root


def runs_web_app(root: Path, db: Path):  # type: ignore[no-untyped-def]
    """The web app with the run viewer over ``root``; keys: an admin and a client."""
    from evaluator.app.api.settings import Settings
    from evaluator.app.storage.apikeys import create_key
    from evaluator.app.storage.database import open_database
    from evaluator.app.web.app import create_web_app
    from evaluator.app.web.extensions import Extensions
    from evaluator.app.web.run_pages import runs_page_set

    engine = open_database(f"sqlite:///{db}", migrate=True)
    _, admin = create_key(engine, client="lab", companies=[], funds=[], admin=True, expires_on=None)
    _, client = create_key(engine, client="가람", companies=["가람자산운용"], funds=[], admin=False, expires_on=None,
                           allow_unknown=True)
    app = create_web_app(engine=engine, settings=Settings(rate_per_minute=0),
                         extensions=Extensions(page_sets=[runs_page_set([root])]))
    return app, {"admin": admin, "client": client}


def signed_in(app, key: str):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    client = TestClient(app, raise_server_exceptions=False)
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    assert client.post("/login", data={"key": key, "csrf": token.group(1)}, follow_redirects=False).status_code == 303
    return client


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp("runpages")
    app, keys = runs_web_app(build_tree(base / "lab"), base / "e.db")
    return signed_in(app, keys["admin"]), signed_in(app, keys["client"])


def test_admin_sees_every_run_and_each_page_answers(site) -> None:  # type: ignore[no-untyped-def]
    admin, _ = site
    page = admin.get("/runs")
    assert page.status_code == 200 and 'href="/runs"' in page.text
    links = sorted(set(re.findall(r'href="(/runs/view/[^"]+)"', page.text)))
    assert links == ["/runs/view/lab/broken", "/runs/view/lab/compare.json", "/runs/view/lab/eval-after",
                     "/runs/view/lab/eval-base", "/runs/view/lab/exp1", "/runs/view/lab/grpo/r1",
                     "/runs/view/lab/grpo/r1/eval", "/runs/view/lab/half-eval"]
    for link in links:
        got = admin.get(link)
        assert got.status_code == 200, (link, got.text[-500:])
        for sub in set(re.findall(r'href="(/runs/(?:samples|view)/[^"]+)"', got.text)):
            assert admin.get(sub.replace("&amp;", "&")).status_code == 200, sub
    run = admin.get("/runs/view/lab/grpo/r1").text
    assert "step 12 · eval/accuracy 1" in run and run.count('data-chart="chart-') == 5
    exp = admin.get("/runs/view/lab/exp1").text
    assert 'href="/runs/view/lab/grpo/r1"' in exp and 'href="/runs/view/lab/grpo/r1/eval"' in exp
    assert "judge_bytes_sent" in exp and "holm (1개 비교)" in exp


def test_corrupted_runs_are_pages_that_name_what_is_missing(site) -> None:  # type: ignore[no-untyped-def]
    admin, _ = site
    broken = admin.get("/runs/view/lab/broken")
    assert broken.status_code == 200 and "run_config.yaml is missing" in broken.text
    samples = admin.get("/runs/samples/lab/broken")
    assert samples.status_code == 200 and "the last line is incomplete" in samples.text
    half = admin.get("/runs/view/lab/half-eval")
    assert half.status_code == 200 and "report.json is not valid JSON" in half.text


def test_filters_and_paging_over_http(site) -> None:  # type: ignore[no-untyped-def]
    admin, _ = site
    page = admin.get("/runs/samples/lab/grpo/r1", params={"reward": "correctness", "low": 1, "size": 5, "page": 2})
    assert page.status_code == 200 and "24개 (전체 48개 중)" in page.text and "2 / 5쪽" in page.text
    assert 'data-reward="correctness">2<' in page.text and 'data-reward="correctness">0<' not in page.text
    wrong = admin.get("/runs/samples/lab/eval-after", params={"correct": "no"})
    assert re.findall(r"item-\d{3}", wrong.text) == ["item-002", "item-003", "item-005"]
    assert admin.get("/runs/samples/lab/grpo/r1", params={"correct": "maybe"}).status_code == 422


def test_names_outside_the_roots_and_unknown_runs_are_404(site) -> None:  # type: ignore[no-untyped-def]
    admin, _ = site
    for url in ("/runs/view/lab/../../etc/passwd", "/runs/view/lab/%2e%2e/%2e%2e/etc", "/runs/view/lab/nope",
                "/runs/view/other/grpo/r1", "/runs/samples/lab/compare.json", "/runs/view/lab/grpo/r1/best_adapter"):
        assert admin.get(url).status_code == 404, url


def test_a_client_key_gets_no_run_pages(site) -> None:  # type: ignore[no-untyped-def]
    _, client = site
    home = client.get("/")
    assert home.status_code == 200 and "/runs" not in home.text
    for url in ("/runs", "/runs/view/lab/grpo/r1", "/runs/samples/lab/grpo/r1", "/runs/view/lab/exp1"):
        got = client.get(url)
        assert got.status_code == 404 and "grpo" not in got.text, url
    assert client.post("/runs/rescan", data={"csrf": "x"}).status_code in (403, 404)


def test_rescan_needs_the_form_token_and_finds_new_runs(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    make_evaluation(root / "first", [True])
    app, keys = runs_web_app(root, tmp_path / "e.db")
    admin = signed_in(app, keys["admin"])
    page = admin.get("/runs").text
    assert "lab/first" in page and "lab/second" not in page
    make_evaluation(root / "second", [False])
    assert admin.post("/runs/rescan", data={"csrf": "wrong"}).status_code == 403
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    done = admin.post("/runs/rescan", data={"csrf": token.group(1)}, follow_redirects=False)
    assert done.status_code == 303 and "lab/second" in admin.get("/runs").text


@pytest.mark.slow
def test_a_real_tiny_run_its_evaluations_and_comparison(tmp_path: Path, tiny_model_dir: Path) -> None:
    """What `evaluator train`, `eval` and `compare` really write, shown page by page (not fixture files)."""
    from conftest import run_cli

    root = tmp_path / "lab"
    run = root / "r1"
    common = ("--domain", "gsm8k", "--model", "tiny", "--data", "synthetic")
    result = run_cli("train", *common, "--max-steps", "2", "--logging-steps", "1", "--max-completion-length", "16",
                     "--eval-every", "1", "--eval-limit", "4", "--output-dir", str(run))
    assert result.exit_code == 0, result.output
    for name, extra in (("eval-base", ()), ("eval-after", ("--adapter", str(run / "final")))):
        result = run_cli("eval", *common, *extra, "--limit", "4", "--max-new-tokens", "16", "--out", str(root / name))
        assert result.exit_code == 0, result.output
    result = run_cli("compare", str(root / "eval-base"), str(root / "eval-after"), "--out", str(root / "cmp.json"))
    assert result.exit_code == 0, result.output

    app, keys = runs_web_app(root, tmp_path / "e.db")
    admin = signed_in(app, keys["admin"])
    listing = admin.get("/runs").text
    for key in ("lab/r1", "lab/eval-base", "lab/eval-after", "lab/cmp.json"):
        assert f">{key}<" in listing, key
    page = admin.get("/runs/view/lab/r1")
    assert page.status_code == 200 and "읽지 못한 부분" not in page.text  # a finished run lacks nothing
    assert page.text.count('data-chart="chart-') >= 4 and "rewards/correctness/mean" not in page.text
    assert '"name": "correctness"' in page.text or '"name":"correctness"' in page.text
    samples = admin.get("/runs/samples/lab/r1").text
    assert 'data-reward="correctness"' in samples and 'class="advantage"' in samples
    report = admin.get("/runs/view/lab/eval-after").text
    assert "accuracy ★" in report and "/runs/samples/lab/eval-after" in report
    assert admin.get("/runs/samples/lab/eval-after", params={"correct": "no"}).status_code == 200
    cmp = admin.get("/runs/view/lab/cmp.json").text
    assert 'href="/runs/view/lab/eval-base"' in cmp and 'href="/runs/view/lab/eval-after"' in cmp


def test_folder_names_with_spaces_hangul_and_url_characters_keep_their_links(tmp_path: Path) -> None:
    """Over a real server (the test client decodes a path twice: ``%2520`` would arrive as a space)."""
    import httpx
    from web_fixtures import live_server

    root = tmp_path / "lab"
    make_evaluation(root / "실험 #1 %20?x", [True, False])
    app, keys = runs_web_app(root, tmp_path / "e.db")
    with live_server(app) as base, httpx.Client(base_url=base) as admin:
        token = re.search(r'name="csrf" value="([^"]+)"', admin.get("/login").text)
        assert token is not None
        admin.post("/login", data={"key": keys["admin"], "csrf": token.group(1)})
        links = re.findall(r'href="(/runs/view/[^"]+)"', admin.get("/runs").text)
        assert links == ["/runs/view/lab/%EC%8B%A4%ED%97%98%20%231%20%2520%3Fx"]
        page = admin.get(links[0])
        assert page.status_code == 200 and "실험 #1 %20?x" in page.text
        samples = re.search(r'id="samples-link" href="([^"]+)"', page.text)
        assert samples is not None and admin.get(samples.group(1)).status_code == 200


def test_documents_of_the_wrong_shape_give_pages_not_errors(tmp_path: Path) -> None:
    """Every field of the wrong type (lists for objects, strings for numbers): each page still answers 200."""
    import json

    root = tmp_path / "lab"
    run = make_training_run(root / "odd-run", steps=2, eval_every=0, judge=False)
    (run / "run_summary.json").write_text(json.dumps({"seconds": "long", "global_step": "x"}), encoding="utf-8")
    (run / "best_adapter" / "best.json").write_text(json.dumps({"metric": 5, "value": "high", "step": []}))
    (run / "run_config.yaml").write_text("domain: [1, 2]\nmodel: {a: b}\nresolved: 7\nmax_steps: many\n")
    write_lines(run / "metrics.jsonl", [{"step": "3", "reward": "x"}, {"step": 4, "reward": [1], "eval/accuracy": {}},
                                        [1, 2], "text", None])
    write_lines(run / "completions.jsonl", [{"step": [], "rewards": [1, 2], "advantage": "a", "prompt": {"x": 1}},
                                            ["list"], 7])
    ev = root / "odd-eval"
    ev.mkdir()
    (ev / "report.json").write_text(json.dumps({
        "schema_version": 2, "domain": ["x"], "metrics": {"accuracy": {"value": "hi", "ci95": "wide"}, "b": 3},
        "accuracy": {"strict": [], "flexible": {"value": None, "ci95": [1]}}, "identity": "me", "timing": [],
        "warnings": "careful", "pass_at_k": {"strict": {"2": "x"}}, "maj_at_k": {"strict": 3}, "items": {}}))
    write_lines(ev / "samples.jsonl", [{"id": 1, "scores": [1], "metrics": "m", "correct": "yes"}, [], "x"])
    (root / "odd-compare.json").write_text(json.dumps({
        "schema_version": 2, "a": [], "b": "x", "results": {"strict": {"gained": "abc", "ci95": {"low": "a"}}},
        "metrics": {"m": {"ci95": [1, "x"]}, "n": 5}, "warnings": {"w": 1}}))
    exp = root / "odd-exp"
    exp.mkdir()
    (exp / "results.json").write_text(json.dumps({
        "arms": [{"name": ["x"], "mean": [], "ci": {"accuracy": "wide"}, "seeds": "none"},
                 {"name": "b", "mean": {"accuracy": "x"}, "seeds": [{"seed": "s", "metrics": [], "cost": "c",
                                                                      "run_dir": 5}, 7]}, "arm"],
        "comparisons": [{"arm": "b", "seeds": 5, "diff": "d"}, 3], "statistics": [], "failures": "f",
        "notes": "n", "warm_start": {"run_dir": ["x"]}}))
    app, keys = runs_web_app(root, tmp_path / "e.db")
    admin = signed_in(app, keys["admin"])
    listing = admin.get("/runs")
    assert listing.status_code == 200
    links = sorted(set(re.findall(r'href="(/runs/view/[^"]+)"', listing.text)))
    assert len(links) == 4, links
    for link in links:
        page = admin.get(link)
        assert page.status_code == 200, (link, page.text[-800:])
        for sub in set(re.findall(r'href="(/runs/samples/[^"]+)"', page.text)):
            for extra in ("", "&q=x", "&reward=correctness&low=0", "&correct=no"):
                url = sub.replace("&amp;", "&") + ("?" + extra[1:] if "?" not in sub and extra else extra)
                assert admin.get(url).status_code == 200, url
