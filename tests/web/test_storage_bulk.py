"""Storing a batch fast gives the same rows: COPY (PostgreSQL) and one executemany (SQLite) against the ORM
inserts they replaced, column by column; and storing from the texts just written equals reading the files."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from service_fixtures import AS_OF_LATE, db_url, pg_server, report_folders  # noqa: F401
from sqlalchemy import Engine, Text, cast, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evaluator.app.storage.batches import (
    Batch,
    BatchError,
    _document_rows,
    _result_rows,
    read_folder,
    store_batch,
)
from evaluator.app.storage.database import open_database
from evaluator.app.storage.nav_series import series_rows
from evaluator.app.storage.tables import FundDocument, FundResult, FundSeries, Run
from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.reports.batch import write_reports
from evaluator.methodology.rubric_scale import scale_of

HOSTILE = 'tab\there \\N back\\slash\nnew "q" \'s\' 한글 \r; ,|'


def _hostile(batch: Batch) -> Batch:
    """The batch with text that COPY must escape (tabs, newlines, backslashes, its NULL marker) in rows."""
    reports = []
    for i, (text, doc) in enumerate(batch.reports):
        if i < 6:
            doc = {**doc, "fund_name": f"{HOSTILE}{i}", "company": None if i % 2 else HOSTILE}
            doc["metrics"] = {**(doc.get("metrics") or {}), "note\t\\N": HOSTILE}
        reports.append((text.replace("\\u", "\\\\u") if i < 3 else text, doc))
    return dataclasses.replace(batch, reports=reports)


def _orm_reference(engine: Engine, batch: Batch) -> int:
    """The rows as the ORM inserts stored them before (a second run of the same batch)."""
    as_of = dt.date.fromisoformat(batch.summary["as_of"])
    with Session(engine) as session, session.begin():
        run = Run(identity="reference", as_of=as_of, rubric_name="r", rubric_version="1", rubric_hash=None,
                  input_hashes={}, engine_version="x", source="test", created_at=dt.datetime.now(dt.timezone.utc),
                  funds_total=0, summary={}, model_run=None, grade_scale=None)
        session.add(run)
        session.flush()
        scale = scale_of(batch.summary.get("grade_scale"))
        session.execute(insert(FundResult), _result_rows(run.id, as_of, batch.reports, scale, False))
        session.execute(insert(FundDocument), _document_rows(run.id, batch.reports))
        if batch.series:
            session.execute(insert(FundSeries), series_rows(run.id, batch.series))
        return run.id


def _rows(engine: Engine, table: Any, run_id: int) -> list[tuple[Any, ...]]:
    """Every column but the keys and ``is_current``, JSON as the text the database holds."""
    skip = {"id", "run_id", "is_current"}
    cols = [cast(c, Text) if c.type.__class__.__name__ == "JSON" else c for c in table.c if c.name not in skip]
    with engine.connect() as conn:
        return sorted(conn.execute(select(*cols).where(table.c.run_id == run_id)).all(), key=repr)


def test_bulk_rows_equal_the_orm_rows(db_url: str, report_folders: dict[str, Path]) -> None:  # noqa: F811
    batch = _hostile(read_folder(report_folders[AS_OF_LATE]))
    assert batch.series and any(doc.get("model_evaluation") is None for _, doc in batch.reports)
    engine = open_database(db_url, migrate=True)
    stored = store_batch(engine, batch, source="test")
    reference = _orm_reference(engine, batch)
    for table in (FundResult.__table__, FundDocument.__table__, FundSeries.__table__):
        fast, orm = _rows(engine, table, stored.run_id), _rows(engine, table, reference)
        assert len(fast) == len(orm) > 0
        assert fast == orm, table.name
    with engine.connect() as conn:  # JSON null, not SQL NULL, for a report without a model's evaluation
        nulls = conn.execute(select(FundDocument.model_evaluation.is_(None))
                             .where(FundDocument.run_id == stored.run_id)).scalars().all()
        names = set(conn.execute(select(FundResult.fund_name).where(FundResult.run_id == stored.run_id)).scalars())
    assert not any(nulls) and {f"{HOSTILE}{i}" for i in range(6)} <= names
    engine.dispose()


def test_a_failing_bulk_insert_stores_nothing(db_url: str, report_folders: dict[str, Path]) -> None:  # noqa: F811
    batch = read_folder(report_folders[AS_OF_LATE])
    broken = dataclasses.replace(batch, reports=[*batch.reports, batch.reports[-1]])  # a fund twice: unique index
    engine = open_database(db_url, migrate=True)
    with pytest.raises(IntegrityError):
        store_batch(engine, broken, source="test")
    with Session(engine) as s:
        assert s.scalar(select(Run.id)) is None and s.scalar(select(FundResult.id)) is None
    assert store_batch(engine, batch, source="test").created  # and the good batch then stores
    engine.dispose()


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    codes = [f"KR{i:04d}" for i in range(12)]
    dates = pd.bdate_range(end="2025-06-30", periods=900)
    rng = np.random.default_rng(3)
    navs = pd.DataFrame(1000 * np.cumprod(1 + rng.normal(3e-4, 0.01, (900, 12)), axis=0), index=dates, columns=codes)
    navs.iloc[:600, 0] = np.nan  # a fund too young to rate
    meta = pd.DataFrame({"type": ["국내주식형", "해외주식형"] * 6, "set_amount": 1e11}, index=codes)
    outcome = write_reports(evaluate_universe(navs, meta), tmp_path / "out")
    return outcome.folder, outcome.texts


def test_the_written_texts_are_the_files(written: tuple[Path, dict[str, str]]) -> None:
    folder, texts = written
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.name in texts}
    assert set(texts) == set(on_disk) and texts == on_disk
    assert "summary.json" in texts and "nav_series.jsonl" in texts and len(texts) == 12 + 2


def test_storing_from_the_written_texts_is_storing_the_files(
    written: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    folder, texts = written
    from_files, from_texts = read_folder(folder), read_folder(folder, texts)
    assert from_texts == from_files
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    for name in texts:  # the texts are what is read: the files may be gone
        if name not in ("summary.json", "nav_series.jsonl"):
            (copy / name).unlink()
    assert read_folder(copy, texts) == from_files
    with pytest.raises(BatchError, match="not readable JSON"):
        read_folder(copy)
    name = next(n for n in texts if n.startswith("KR"))  # a broken text is refused as a broken file is
    with pytest.raises(BatchError) as from_memory:
        read_folder(folder, {**texts, name: texts[name].replace('"status"', '"stat"')})
    (copy / name).write_text(texts[name].replace('"status"', '"stat"'), encoding="utf-8")
    with pytest.raises(BatchError) as from_disk:
        read_folder(copy, {k: v for k, v in texts.items() if k != name})
    assert str(from_memory.value) == str(from_disk.value)


def test_a_report_file_that_links_outside_the_folder_is_refused(
    written: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    folder, texts = written
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    name = next(n for n in texts if n.startswith("KR"))
    outside = tmp_path / name
    (copy / name).rename(outside)
    (copy / name).symlink_to(outside)
    with pytest.raises(BatchError, match="outside the folder"):
        read_folder(copy)


def test_with_or_without_workers_the_batch_and_what_is_stored_are_the_same(
    written: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reports' files and the NAV series' checks run in worker processes; where there can be none they run
    in the command itself: the same bytes, the same batch, the same refusals."""
    folder, texts = written
    by_workers = read_folder(folder, texts)
    lines = texts["nav_series.jsonl"].splitlines()
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    (broken / "nav_series.jsonl").write_text(
        "\n".join([lines[0], "{not json", lines[1], lines[0], "", '{"fund_code": "KR0000", "days": [1]}',
                   "x" * 70_000, '{"fund_code": "NOPE"}', *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(BatchError) as refused_by_workers:
        read_folder(broken)
    monkeypatch.setenv("EVALUATOR_NO_FORK", "1")
    codes = [f"KR{i:04d}" for i in range(12)]
    dates = pd.bdate_range(end="2025-06-30", periods=900)
    rng = np.random.default_rng(3)
    navs = pd.DataFrame(1000 * np.cumprod(1 + rng.normal(3e-4, 0.01, (900, 12)), axis=0), index=dates, columns=codes)
    navs.iloc[:600, 0] = np.nan
    meta = pd.DataFrame({"type": ["국내주식형", "해외주식형"] * 6, "set_amount": 1e11}, index=codes)
    alone = write_reports(evaluate_universe(navs, meta), tmp_path / "alone")
    assert alone.texts == texts
    assert sorted(p.name for p in alone.folder.iterdir()) == sorted(p.name for p in folder.iterdir())
    for path in folder.iterdir():
        assert (alone.folder / path.name).read_bytes() == path.read_bytes(), path.name
    assert read_folder(alone.folder, alone.texts) == by_workers
    with pytest.raises(BatchError) as refused_alone:
        read_folder(broken)
    assert str(refused_alone.value) == str(refused_by_workers.value)
    assert "line 2:" in str(refused_alone.value) and "line 4:" in str(refused_alone.value)  # bad JSON, repeated
