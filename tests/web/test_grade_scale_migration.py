"""A database written before grade scales were stored: the upgrade gives each run its scale and each result its rank
from the best, so a star batch stored earlier lists ★★★★★ first afterwards (SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from alembic import command
from service_fixtures import db_url, pg_server  # noqa: F401
from sqlalchemy.orm import Session

STARS = {"grades": 5, "best": "high", "style": "stars"}


def _old_batch(conn: sa.Connection, run_id: int, as_of: dt.date, scale: dict | None, grades: dict[str, int]) -> None:
    runs = sa.table("runs", *(sa.column(c) for c in (
        "id", "identity", "as_of", "rubric_name", "rubric_version", "rubric_hash", "engine_version",
        "source", "created_at", "funds_total")), *(sa.column(c, sa.JSON) for c in ("input_hashes", "summary")))
    results = sa.table("fund_results", *(sa.column(c) for c in (
        "run_id", "as_of", "is_current", "fund_code", "status", "grade", "score")))
    summary = {"as_of": as_of.isoformat(), **({"grade_scale": scale} if scale else {})}
    conn.execute(sa.insert(runs).values(
        id=run_id, identity=f"old-{run_id}", as_of=as_of, rubric_name="r", rubric_version="1", rubric_hash=None,
        input_hashes={}, engine_version="old", source="import",
        created_at=dt.datetime(2025, 7, 1, tzinfo=dt.timezone.utc), funds_total=len(grades),
        summary=summary))
    conn.execute(sa.insert(results), [
        {"run_id": run_id, "as_of": as_of, "is_current": True, "fund_code": code, "status": "ok", "grade": g,
         "score": 50.0 + 10 * g * (1 if scale else -1)}
        for code, g in grades.items()
    ])


def test_the_upgrade_ranks_stored_results_on_their_batch_scale(db_url: str) -> None:  # noqa: F811
    from evaluator.app.storage import queries
    from evaluator.app.storage.apikeys import Principal
    from evaluator.app.storage.database import _alembic_config, make_engine, upgrade
    from evaluator.app.storage.tables import FundResult, Run

    engine = make_engine(db_url, create_parent=True)
    try:
        upgrade(engine, "0005_job_heartbeat")
        with engine.begin() as conn:
            _old_batch(conn, 1, dt.date(2025, 3, 31), None, {"A1": 1, "A2": 5, "A3": 3})
            _old_batch(conn, 2, dt.date(2025, 6, 30), STARS, {"S1": 1, "S5": 5, "S3": 3})
        upgrade(engine)
        with Session(engine) as s:
            assert dict(s.execute(sa.select(Run.id, Run.grade_scale)).all()) == {1: None, 2: STARS}
            ranks = dict(s.execute(sa.select(FundResult.fund_code, FundResult.grade_rank)).all())
            assert ranks == {"A1": 1, "A2": 5, "A3": 3, "S1": 5, "S5": 1, "S3": 3}
            admin = Principal("k", "c", True, (), ())
            _, stars = queries.list_funds(s, admin, queries.FundFilter(as_of=dt.date(2025, 6, 30)), page=1,
                                          page_size=10)
            assert [(i["fund_code"], i["grade_label"]) for i in stars] == [("S5", "★★★★★"), ("S3", "★★★"), ("S1", "★")]
            _, five = queries.list_funds(s, admin, queries.FundFilter(as_of=dt.date(2025, 3, 31)), page=1,
                                         page_size=10)
            assert [i["grade_label"] for i in five] == ["1등급", "3등급", "5등급"]
        command.downgrade(_alembic_config(engine), "0005_job_heartbeat")  # and back: the old schema again
        assert "grade_rank" not in {c["name"] for c in sa.inspect(engine).get_columns("fund_results")}
    finally:
        engine.dispose()
