"""JSON Schemas the product ships, and validation that explains each violation in plain words."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError


class SchemaError(ValueError):
    """A document does not match its schema; ``problems`` lists every violation."""

    def __init__(self, what: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{what} is not valid:\n" + "\n".join(f"  - {p}" for p in problems))


@cache
def load_schema(package: str, filename: str) -> dict[str, Any]:
    """Load a schema shipped as package data, e.g. ``load_schema("evaluator.evaluation", "report.schema.json")``."""
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return schema


def explain(error: ValidationError) -> str:
    """One readable sentence for a jsonschema error, naming where in the document it is."""
    where = "/".join(str(p) for p in error.absolute_path) or "(document root)"
    return f"at {where}: {error.message}"


def schema_problems(doc: Any, schema: dict[str, Any]) -> list[str]:
    """All violations of ``schema`` in ``doc``, sorted by location; empty when valid."""
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    return [explain(e) for e in errors]


def validate_or_raise(doc: Any, schema: dict[str, Any], what: str = "document") -> None:
    """Raise :class:`SchemaError` listing every violation."""
    problems = schema_problems(doc, schema)
    if problems:
        raise SchemaError(what, problems)
