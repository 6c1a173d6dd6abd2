"""Fixtures for the database and API tests: sample report folders, a SQLite or real PostgreSQL database
(the same tests run on both), and a loaded database with keys for two clients and an admin.

Import the fixtures a module uses by name (``from service_fixtures import db_url  # noqa: F401``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from pg_server import PostgresServer, unavailable_reason

AS_OF_EARLY = "2025-03-31"
AS_OF_LATE = "2025-06-30"
CLIENT_A_COMPANY = "가람자산운용"
CLIENT_B_COMPANY = "누리자산운용"


@pytest.fixture(scope="session")
def report_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two batches of the sample universe (40 funds) at two as-of dates, written by `fund evaluate`."""
    base = tmp_path_factory.mktemp("reports")
    out: dict[str, Path] = {}
    for as_of in (AS_OF_EARLY, AS_OF_LATE):
        folder = base / as_of
        result = run_cli("fund", "evaluate", "--sample", "--sample-funds", "40", "--as-of", as_of, "--out", str(folder))
        assert result.exit_code == 0, result.output
        out[as_of] = folder
    return out


def reports_in(folder: Path) -> list[dict[str, Any]]:
    """Every report document in a folder, read independently of the storage code."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json")) if p.name != "summary.json"]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: a SQLite file, or a fresh database on the test's own PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'evaluator.db'}"
    return request.getfixturevalue("pg_server").create_database()


@dataclass
class Loaded:
    url: str
    engine: Any
    keys: dict[str, str]  # "a", "b", "admin" → full key
    key_ids: dict[str, str]
    b_extra_fund: str  # a fund of another company that client B may also see


@pytest.fixture
def loaded(db_url: str, report_folders: dict[str, Path]) -> Iterator[Loaded]:
    """Both batches stored; keys: client A (one company), client B (another company + one extra fund), admin."""
    from evaluator.app.storage.apikeys import create_key
    from evaluator.app.storage.batches import store_folder
    from evaluator.app.storage.database import open_database

    engine = open_database(db_url, migrate=True)
    for folder in report_folders.values():
        assert store_folder(engine, folder).created
    late = reports_in(report_folders[AS_OF_LATE])
    extra = next(r["fund_code"] for r in late if r["company"] not in (CLIENT_A_COMPANY, CLIENT_B_COMPANY)
                 and r["status"] == "ok")
    keys, ids = {}, {}
    for name, kwargs in {
        "a": {"companies": [CLIENT_A_COMPANY], "funds": []},
        "b": {"companies": [CLIENT_B_COMPANY], "funds": [extra]},
        "admin": {"companies": [], "funds": [], "admin": True},
    }.items():
        key_id, key = create_key(engine, client=f"client-{name}", admin=kwargs.pop("admin", False),
                                 expires_on=None, **kwargs)
        keys[name], ids[name] = key, key_id
    try:
        yield Loaded(db_url, engine, keys, ids, extra)
    finally:
        engine.dispose()


def client_for(loaded: Loaded, settings: Any = None):  # type: ignore[no-untyped-def]
    """A test client for the API app; the per-key rate limit is off unless ``settings`` turn it on."""
    from fastapi.testclient import TestClient

    from evaluator.app.api.server import create_app
    from evaluator.app.api.settings import Settings

    app = create_app(engine=loaded.engine, settings=settings or Settings(rate_per_minute=0))
    return TestClient(app, raise_server_exceptions=False)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
