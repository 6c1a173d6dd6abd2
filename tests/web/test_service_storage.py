"""Storing batches: one transaction, identity and no-op re-import, is_current across as-of dates, opt-in only.

Every database test runs on SQLite and on a real PostgreSQL server the fixture starts itself.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import socket
from pathlib import Path

import pytest
from conftest import run_cli
from service_fixtures import AS_OF_EARLY, AS_OF_LATE, db_url, pg_server, report_folders, reports_in  # noqa: F401
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evaluator.app.storage.batches import BatchError, read_folder, store_folder
from evaluator.app.storage.database import DatabaseError, check_url, open_database
from evaluator.app.storage.tables import FundDocument, FundResult, Run


def _count(engine, what) -> int:  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        return s.scalar(select(func.count()).select_from(what)) or 0


def test_batch_stores_every_fund_field_and_reimport_is_a_noop(db_url: str, report_folders: dict[str, Path]) -> None:
    folder = report_folders[AS_OF_LATE]
    engine = open_database(db_url, migrate=True)
    first = store_folder(engine, folder)
    again = store_folder(engine, folder)
    assert first.created and not again.created and again.run_id == first.run_id
    reports = {r["fund_code"]: r for r in reports_in(folder)}
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    with Session(engine) as s:
        run = s.get(Run, first.run_id)
        assert run is not None
        assert run.as_of.isoformat() == AS_OF_LATE
        assert (run.rubric_name, run.rubric_version) == (summary["rubric"]["name"], summary["rubric"]["version"])
        prov = summary["inputs"]["provenance"]
        assert run.rubric_hash == prov["rubric_sha256"] and len(run.rubric_hash) == 64
        assert run.input_hashes == prov["input_hashes"] and run.input_hashes  # sample + risk-free descriptions
        assert run.engine_version == prov["engine_version"]
        rows = {r.fund_code: r for r in s.scalars(select(FundResult).where(FundResult.run_id == run.id))}
        docs = {d.fund_code: d for d in s.scalars(select(FundDocument).where(FundDocument.run_id == run.id))}
    assert set(rows) == set(reports) and len(rows) == summary["funds_total"] == 40
    statuses = {r.status for r in rows.values()}
    assert {"ok", "not_rated", "error"} <= statuses  # the sample carries broken funds on purpose
    for code, doc in reports.items():
        row = rows[code]
        assert (row.status, row.grade, row.score, row.percentile) == (
            doc["status"], doc["grade"], doc["score"], doc["peer_percentile"]
        )
        assert docs[code].metrics == doc["metrics"] and json.loads(docs[code].report) == doc
        assert (row.company, row.type, row.fund_name) == (doc["company"], doc["type"], doc["fund_name"])
    assert _count(engine, Run) == 1
    engine.dispose()


def test_evaluate_with_db_stores_and_the_folder_import_is_the_same_batch(db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r"
    args = ("fund", "evaluate", "--sample", "--sample-funds", "30", "--out", str(out), "--db", db_url)
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert "stored run 1: 30 fund reports" in result.output
    again = run_cli("db", "import", str(out), "--db", db_url)
    assert again.exit_code == 0 and "already stored as run 1" in again.output
    run_cli("fund", "evaluate", "--sample", "--sample-funds", "30", "--out", str(tmp_path / "r2"), "--db", db_url)
    engine = open_database(db_url, migrate=False)
    assert _count(engine, Run) == 1  # same inputs, rubric, as-of and engine: one batch
    other = run_cli("fund", "evaluate", "--sample", "--sample-funds", "31", "--out", str(tmp_path / "r3"), "--db", db_url)
    assert other.exit_code == 0 and "stored run 2" in other.output
    assert _count(engine, Run) == 2
    engine.dispose()


def test_without_db_or_env_nothing_is_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALUATOR_DB", raising=False)
    monkeypatch.setenv("EVALUATOR_HOME", str(tmp_path / "home"))
    result = run_cli("fund", "evaluate", "--sample", "--sample-funds", "20", "--out", str(tmp_path / "r"))
    assert result.exit_code == 0 and "stored run" not in result.output
    assert not (tmp_path / "home").exists()
    monkeypatch.setenv("EVALUATOR_DB", f"sqlite:///{tmp_path / 'env.db'}")
    result = run_cli("fund", "evaluate", "--sample", "--sample-funds", "20", "--out", str(tmp_path / "r2"))
    assert result.exit_code == 0 and "stored run 1" in result.output and (tmp_path / "env.db").is_file()


def test_a_bad_database_url_fails_before_any_work(tmp_path: Path) -> None:
    result = run_cli("fund", "evaluate", "--sample", "--out", str(tmp_path / "r"), "--db", "mysql://x/y")
    assert result.exit_code == 2 and "unsupported database" in result.output
    assert not (tmp_path / "r").exists()
    with pytest.raises(DatabaseError, match="psycopg"):
        check_url("postgresql+psycopg2://u@localhost/db")
    with pytest.raises(DatabaseError, match="not a database URL"):
        check_url("::::")


def _copy(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def test_a_broken_report_stores_nothing(db_url: str, report_folders: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(report_folders[AS_OF_LATE], tmp_path)
    victim = sorted(p for p in folder.glob("*.json") if p.name != "summary.json")[7]
    doc = json.loads(victim.read_text(encoding="utf-8"))
    doc["grade"] = 9  # outside the schema: a silently wrong grade must never be stored
    victim.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    engine = open_database(db_url, migrate=True)
    with pytest.raises(BatchError, match=victim.name):
        store_folder(engine, folder)
    assert _count(engine, Run) == 0 and _count(engine, FundResult) == 0 and _count(engine, FundDocument) == 0
    result = run_cli("db", "import", str(folder), "--db", db_url)
    assert result.exit_code == 2 and "nothing stored" in result.output and "Traceback" not in result.output
    engine.dispose()


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda s: s["funds"][0].update(file="../../etc/passwd.json"), "outside|plain file name"),
        (lambda s: s["funds"][0].update(file="/tmp/x.json"), "outside|plain file name"),
        (lambda s: s["funds"][1].update(fund_code=s["funds"][0]["fund_code"]), "repeated"),
        (lambda s: s.update(as_of="2025-13-45"), "schema|differs"),
        (lambda s: s.pop("funds"), "summary schema"),
    ],
)
def test_hostile_summaries_are_refused(mutate, message: str, report_folders: dict[str, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = _copy(report_folders[AS_OF_LATE], tmp_path)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    mutate(summary)
    (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BatchError, match=message):
        read_folder(folder)


def test_folder_without_provenance_is_identified_by_its_summary(report_folders: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(report_folders[AS_OF_LATE], tmp_path)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    del summary["inputs"]["provenance"]  # as written before provenance was recorded
    (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    batch = read_folder(folder)
    assert batch.rubric_hash is None and batch.engine_version == "unknown"
    assert list(batch.input_hashes) == ["summary.json"]
    assert batch.identity != read_folder(report_folders[AS_OF_LATE]).identity


def test_current_result_is_the_latest_as_of_whatever_the_import_order(
    db_url: str, report_folders: dict[str, Path]
) -> None:
    engine = open_database(db_url, migrate=True)
    late = store_folder(engine, report_folders[AS_OF_LATE])
    early = store_folder(engine, report_folders[AS_OF_EARLY])  # an older batch arriving later
    with Session(engine) as s:
        current = s.execute(select(FundResult.fund_code, FundResult.run_id).where(FundResult.is_current)).all()
        per_code = s.execute(select(FundResult.fund_code, func.count()).group_by(FundResult.fund_code)).all()
    assert {run for _, run in current} == {late.run_id} and early.run_id != late.run_id
    assert len(current) == len({c for c, _ in per_code}) == 40  # exactly one current row per fund
    engine.dispose()


def test_a_newer_batch_takes_over_current_from_the_older_one(db_url: str, report_folders: dict[str, Path]) -> None:
    """The monthly order: the newest batch's rows go in current and the older batch's rows stop being so."""
    engine = open_database(db_url, migrate=True)
    early = store_folder(engine, report_folders[AS_OF_EARLY])
    with Session(engine) as s:
        assert {r for (r,) in s.execute(select(FundResult.run_id).where(FundResult.is_current))} == {early.run_id}
    late = store_folder(engine, report_folders[AS_OF_LATE])
    with Session(engine) as s:
        current = s.execute(select(FundResult.fund_code, FundResult.run_id).where(FundResult.is_current)).all()
    assert {run for _, run in current} == {late.run_id} and len(current) == len({c for c, _ in current}) == 40
    engine.dispose()


def test_upgrade_command_is_idempotent_and_default_url_is_under_evaluator_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALUATOR_DB", raising=False)
    monkeypatch.setenv("EVALUATOR_HOME", str(tmp_path / "home"))
    from evaluator.app.storage.database import head_revision, make_engine

    head = head_revision(make_engine(f"sqlite:///{tmp_path / 'scratch.db'}"))
    assert head is not None and head >= "0002"  # 0001 initial, 0002 web sessions, rate counters, jobs
    for _ in range(2):
        result = run_cli("db", "upgrade")
        assert result.exit_code == 0 and f"revision {head}" in result.output
    assert (tmp_path / "home" / "evaluator.db").is_file()


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'w.db'}", migrate=True)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
    engine.dispose()


def test_serving_a_database_that_was_never_upgraded_is_refused(tmp_path: Path) -> None:
    result = run_cli("serve", "--db", f"sqlite:///{tmp_path / 'empty.db'}")
    assert result.exit_code == 2 and "evaluator db upgrade" in result.output


def test_model_evaluations_are_stored_with_the_batch(db_url: str, report_folders: dict[str, Path], tmp_path: Path) -> None:
    from evaluator.core.schemas import schema_problems
    from evaluator.domains.fund.reports.report import report_schema, summary_schema

    folder = _copy(report_folders[AS_OF_LATE], tmp_path)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    rated = [line for line in summary["funds"] if line["status"] == "ok"][:2]
    evaluations = {}
    for line, model_grade in zip(rated, (line["grade"] for line in rated), strict=True):
        path = folder / line["file"]
        doc = json.loads(path.read_text(encoding="utf-8"))
        evaluations[line["fund_code"]] = doc["model_evaluation"] = {
            "model": "tiny", "adapter": None, "schema_valid": True, "framing": "strict", "grade": model_grade,
            "score": 71.5, "rationale_ko": "샤프지수가 동류 평균보다 높습니다.", "engine_grade": line["grade"],
            "agrees": True, "grade_difference": 0,
            "checks": {"json_format": 1.0, "grade_accuracy": 1.0, "reasoning_quality": 0.5, "consistency": 1.0},
            "problems": [], "completion": json.dumps({"grade": model_grade}),
        }
        assert schema_problems(doc, report_schema()) == []
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    summary["model_evaluation"] = {
        "model": "tiny", "adapter": None, "generation": {"temperature": 0.0}, "funds_evaluated": 2,
        "schema_valid": 2, "agree": 2, "disagree": 0, "unreadable": 0, "within_one_band": 2, "disagreements": [],
    }
    assert schema_problems(summary, summary_schema()) == []
    (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    engine = open_database(db_url, migrate=True)
    stored = store_folder(engine, folder)
    with Session(engine) as s:
        run = s.get(Run, stored.run_id)
        assert run is not None and run.model_run == summary["model_evaluation"]
        rows = dict(s.execute(select(FundDocument.fund_code, FundDocument.model_evaluation)
                              .where(FundDocument.run_id == stored.run_id)).all())
    assert {c: m for c, m in rows.items() if m is not None} == evaluations
    engine.dispose()


def test_migrations_create_exactly_the_tables_the_code_declares(db_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from evaluator.app.storage.tables import Base

    engine = open_database(db_url, migrate=True)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []


def test_an_unreachable_database_fails_before_grading(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    url = f"postgresql+psycopg://nobody@127.0.0.1:{port}/none"
    result = run_cli("fund", "evaluate", "--sample", "--out", str(tmp_path / "r"), "--db", url)
    assert result.exit_code == 2 and "cannot use database" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "r").exists()


def test_reads_keep_working_while_a_batch_is_being_written(report_folders: dict[str, Path], tmp_path: Path) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'wal.db'}", migrate=True)
    store_folder(engine, report_folders[AS_OF_EARLY])
    batch = read_folder(report_folders[AS_OF_LATE])
    from evaluator.app.storage.batches import _insert

    with Session(engine) as writer, writer.begin():
        _insert(writer, batch, "import", dt.date.fromisoformat(AS_OF_LATE))  # written, not yet committed
        with Session(engine) as reader:  # another connection reads the last committed state at once
            assert reader.scalar(select(func.count()).select_from(Run)) == 1
            assert reader.scalar(select(func.count()).select_from(FundResult).where(FundResult.is_current)) == 40
    assert _count(engine, Run) == 2
    engine.dispose()
