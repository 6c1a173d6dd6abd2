"""The as-of date is read once, where it enters (``--as-of``, the API form, a task source's ``as_of``), and
travels as a ``datetime.date``: the engine refuses text, and every edge keeps the message users always saw."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from evaluator.app.api.evaluations import UploadError
from evaluator.app.api.evaluations import parse_as_of as upload_as_of
from evaluator.app.cli import app
from evaluator.domains.base import PackError
from evaluator.domains.fund.data.readers import DataError, parse_as_of
from evaluator.domains.fund.engine.engine import evaluate_universe
from evaluator.domains.fund.task.dataset import load_evaluation, parse_source

runner = CliRunner()


@pytest.mark.parametrize("text", ["2025-13-01", "0", "abc", "2025-02-30", "1e5", "nan", "NaT", "+2025-06-30"])
def test_cli_refuses_a_bad_as_of_before_any_work(text: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["fund", "evaluate", "--sample", "--sample-funds", "20", "--as-of", text, "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert (
        f"error: --as-of {text!r} is not a date; write it as YYYY-MM-DD" in said and "Traceback" not in said
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("2025-06-30", dt.date(2025, 6, 30)),
        ("20250630", dt.date(2025, 6, 30)),  # accepted, as it always was
        ("2025/06/30", dt.date(2025, 6, 30)),
        (" 2024-12-31 ", dt.date(2024, 12, 31)),
        ("2024-12-31T15:00", dt.date(2024, 12, 31)),  # the time of day was always dropped
        ("2024-12-31T23:30+09:00", dt.date(2024, 12, 31)),  # its own calendar day, not UTC's
        ("2024-12", dt.date(2024, 12, 1)),  # a month reads as its first day, as pandas always read it
        ("2024-02-29", dt.date(2024, 2, 29)),
    ],
)
def test_accepted_spellings_become_that_calendar_day(text: str, day: dt.date) -> None:
    got = parse_as_of(text)
    assert type(got) is dt.date and got == day


def test_the_error_names_the_flag_or_option_it_came_from() -> None:
    with pytest.raises(DataError, match=r"^as_of '2025-13-01' is not a date; write it as YYYY-MM-DD$"):
        parse_as_of("2025-13-01", "as_of")


def test_a_compact_date_grades_the_same_day_as_the_dashed_one(tmp_path: Path) -> None:
    docs = []
    for k, text in enumerate(("20241231", "2024-12-31")):
        out = tmp_path / f"out{k}"
        result = runner.invoke(
            app, ["fund", "evaluate", "--sample", "--sample-funds", "20", "--as-of", text, "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
        docs.append(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    assert docs[0]["as_of"] == "2024-12-31" and docs[0]["funds"] == docs[1]["funds"]


def test_the_engine_takes_a_date_and_refuses_text() -> None:
    dates = pd.bdate_range("2020-01-01", "2024-06-28")
    navs = pd.DataFrame({"A": 1000.0, "B": 1010.0}, index=dates)
    with pytest.raises(TypeError, match=r"datetime\.date"):
        evaluate_universe(navs, as_of="2024-06-28")  # type: ignore[arg-type]
    ev = evaluate_universe(navs, as_of=dt.date(2024, 3, 15))
    assert ev.as_of == dt.date(2024, 3, 15) and all(f.as_of == ev.as_of for f in ev.funds)
    assert evaluate_universe(navs).as_of == dt.date(2024, 6, 28)  # default: the last date
    assert evaluate_universe(navs, as_of=pd.Timestamp("2024-03-15 10:00")).as_of == dt.date(2024, 3, 15)


def test_the_upload_form_is_read_once_as_a_date() -> None:
    assert upload_as_of("2025-05-30") == dt.date(2025, 5, 30)
    assert upload_as_of("  ") is None and upload_as_of(None) is None
    for bad in ("2025-13-01", "20250530", "2025-5-30", "0"):  # the API asks for exactly YYYY-MM-DD
        with pytest.raises(UploadError, match=r"as_of: 기준일 .*은\(는\) 날짜가 아닙니다 \(YYYY-MM-DD\)"):
            upload_as_of(bad)


def test_a_task_source_with_a_bad_as_of_is_a_pack_error_naming_it() -> None:
    with pytest.raises(PackError, match="as_of '2025-13-01' is not a date"):
        load_evaluation(parse_source("sample?funds=20&as_of=2025-13-01"))
