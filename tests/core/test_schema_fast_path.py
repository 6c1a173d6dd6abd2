"""The compiled validator (jsonschema-rs) never calls valid what jsonschema calls invalid.

``schema_problems`` trusts the compiled validator's "valid" (its "invalid" is checked again by jsonschema);
a more lenient verdict would let a broken document through. Real documents and many hostile mutations of
them are judged by both.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from jsonschema import Draft202012Validator

from evaluator.core.schemas import schema_problems
from evaluator.domains.fund.data.sample import sample_universe
from evaluator.domains.fund.engine.evaluate import evaluate_loaded
from evaluator.domains.fund.reports.batch import write_reports
from evaluator.domains.fund.reports.report import report_schema, summary_schema
from evaluator.domains.fund.rubric import resolve_rubric

ODD = [None, True, 0, -1, 1.5, 1e308, "", "가", "x" * 300, [], {}, [None], {"x": 1}, float("nan")]


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, rng: random.Random) -> Any:
    doc = copy.deepcopy(doc)
    path = rng.choice(_paths(doc)[1:])
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    choice = rng.random()
    if choice < 0.25 and isinstance(parent, dict):
        del parent[key]
    elif choice < 0.35 and isinstance(parent, dict):
        parent[f"extra_{rng.randint(0, 9)}"] = rng.choice(ODD)
    else:
        parent[key] = rng.choice(ODD)
    return doc


@pytest.fixture(scope="module")
def fund_docs(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    universe = sample_universe(funds=60, realistic=True)
    evaluation = evaluate_loaded(universe, resolve_rubric(None))
    out = tmp_path_factory.mktemp("batch") / "b"
    outcome = write_reports(evaluation, out)
    return [json.loads((out / name).read_text(encoding="utf-8")) for name in sorted(outcome.files.values())]


def _agree(doc: Any, schema: dict[str, Any]) -> None:
    slow = not list(Draft202012Validator(schema).iter_errors(doc))
    try:
        fast = jsonschema_rs.Draft202012Validator(schema).is_valid(doc)
    except (ValueError, TypeError):
        fast = None  # not taken by the compiled validator: schema_problems uses jsonschema alone
    # only "valid" is trusted: the compiled validator may be stricter (NaN …), never more lenient
    assert not (fast and not slow), json.dumps(doc, ensure_ascii=False, default=str)[:500]
    assert (schema_problems(doc, schema) == []) == slow


def test_both_validators_agree_on_fund_reports_and_their_mutations(fund_docs: list[dict[str, Any]]) -> None:
    rng = random.Random(0)
    schema = report_schema()
    statuses = {d["status"] for d in fund_docs}
    assert {"ok", "error"} <= statuses or {"ok", "not_rated"} <= statuses  # several kinds of report
    for doc in fund_docs:
        _agree(doc, schema)
        for _ in range(25):
            _agree(_mutate(doc, rng), schema)


def test_both_validators_agree_on_summaries_and_their_mutations(fund_docs: list[dict[str, Any]], tmp_path: Path) -> None:
    rng = random.Random(1)
    universe = sample_universe(funds=40, realistic=True)
    out = tmp_path / "b"
    write_reports(evaluate_loaded(universe, resolve_rubric(None)), out)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for _ in range(300):
        _agree(_mutate(summary, rng), summary_schema())


def test_an_invalid_document_keeps_the_readable_messages(fund_docs: list[dict[str, Any]]) -> None:
    doc = copy.deepcopy(fund_docs[0])
    doc["status"] = "maybe"
    problems = schema_problems(doc, report_schema())
    assert problems and all(p.startswith("at ") for p in problems)
