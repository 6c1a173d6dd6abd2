"""Property-based fuzzing of every API operation from its own OpenAPI schema (schemathesis + hypothesis).

For each generated request (valid and invalid parameters, odd fund codes) the API is called with an
admin key, a client key and no key; no response may be a 5xx or carry a traceback. Runs on SQLite and a
real PostgreSQL server (PostgreSQL rejects NUL bytes in text, which a careless API turns into a 500).
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from service_fixtures import Loaded, auth, client_for, db_url, loaded, pg_server, report_folders  # noqa: F401

from evaluator.app.api.server import create_app
from evaluator.app.api.settings import Settings

NO_LIMIT = Settings(rate_per_minute=0)


def _check(case, keys: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    for headers in (auth(keys["admin"]), auth(keys["a"]), {}):
        response = case.call(headers=headers)
        what = (case.method, case.formatted_path, case.query, response.status_code, response.text[:300])
        assert response.status_code < 500, what
        assert "Traceback" not in response.text, what
        if response.status_code >= 400:
            assert response.json()["error"] in (
                "unauthorized", "not_found", "invalid_request", "method_not_allowed", "forbidden", "bad_request",
            ), what
        if not headers and case.path != "/healthz":
            assert response.status_code == 401, what


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_generated_request_gets_a_server_error(loaded: Loaded, mode: GenerationMode) -> None:
    """Valid and invalid requests for every operation, generated from the served OpenAPI document."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(engine=loaded.engine, settings=NO_LIMIT))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 11  # every operation is fuzzed: a new endpoint changes this count on purpose
    assert "GET /api/v1/funds/{code}/nav" in {op.label for op in operations}
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not (len(operation.query) or len(operation.path_parameters)):
            continue  # nothing to make invalid in an operation without parameters

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                  database=None)
        def fuzz(case) -> None:  # type: ignore[no-untyped-def]
            _check(case, loaded.keys)

        fuzz()


def test_the_schema_covers_every_endpoint(loaded: Loaded) -> None:
    paths = set(create_app(engine=loaded.engine, settings=NO_LIMIT).openapi()["paths"])
    assert paths == {
        "/healthz", "/api/v1/runs", "/api/v1/funds", "/api/v1/funds/{code}",
        "/api/v1/funds/{code}/history", "/api/v1/funds/{code}/nav", "/api/v1/summary", "/api/v1/evaluations",
        "/api/v1/jobs/{job_id}",
        "/api/v1/companies", "/api/v1/companies/{name}",
    }


def test_arbitrary_text_in_every_string_parameter_is_never_a_server_error(loaded: Loaded) -> None:
    """Any Unicode (NUL, control characters, quotes, %, path pieces) in filters and codes: 200, 404 or 422."""
    from hypothesis import strategies as st

    client = client_for(loaded)
    headers = auth(loaded.keys["a"])
    text = st.text(st.characters(codec="utf-8"), max_size=120) | st.sampled_from(
        ["\x00", "a\x00", "%", "_", "'", "../..", "%2F", "'; DROP TABLE runs; --", "가람", "\\"]
    )

    @given(value=text, name=st.sampled_from(["q", "type", "company"]))
    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def fuzz(value: str, name: str) -> None:
        r = client.get("/api/v1/funds", headers=headers, params={name: value})
        assert r.status_code in (200, 422), (name, value, r.text[:200])
        c = client.get(f"/api/v1/funds/{quote(value, safe='')}", headers=headers)
        assert c.status_code in (404, 200), (value, c.text[:200])
        m = client.get(f"/api/v1/companies/{quote(value, safe='')}", headers=headers)
        assert m.status_code in (404, 200), (value, m.text[:200])

    fuzz()
