"""What the fund commands share: their common flags, the checks made before any work, reading the inputs.

The flags that read the same inputs (``--benchmark``, ``--rubric``, ``--sample`` …) are declared once here,
so ``fund evaluate`` and ``fund history`` cannot drift apart in what they accept or how they explain it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import typer

from evaluator.core.console import console, fail

if TYPE_CHECKING:
    from evaluator.domains.fund.data import Universe

DATA_ARG = typer.Argument(
    None, help="NAV data: long or wide CSV (utf-8 / cp949), Excel (.xlsx / .xls) or Parquet."
)
BENCHMARK = typer.Option(None, "--benchmark", help="Benchmark levels: one value column, or one per 유형.")
RISK_FREE = typer.Option(
    "0", "--risk-free", help="Annual risk-free rate (0.03 or 3%) or a CSV of rates by date."
)
RUBRIC = typer.Option(None, "--rubric", help="Rubric JSON (default: the built-in methodology).")
CALENDAR = typer.Option(
    None,
    "--calendar",
    help="Market dates file (a date column); default: the dates most funds are priced on (the benchmark "
    "is aligned to them, never the other way round).",
)
SAMPLE = typer.Option(False, "--sample", help="Use the built-in synthetic Korean fund universe.")
SAMPLE_FUNDS = typer.Option(300, "--sample-funds", help="Funds in the --sample universe.")
FORCE = typer.Option(
    False, "--force", help="Replace an existing --out folder (written beside it, swapped in when complete)."
)
CLASS_INFERENCE = typer.Option(
    True,
    "--class-inference/--no-class-inference",
    help="Without a 대표펀드코드 column in META, group share classes whose names differ only by a class suffix "
    "(A, C, C-e, 종류A, Class A, …) into one portfolio (default); --no-class-inference counts every class alone.",
)


def expected_errors() -> tuple[type[BaseException], ...]:
    """The errors a fund command turns into one clear line (anything else is a bug and shows its trace)."""
    from evaluator.core.outputs import OutputExistsError
    from evaluator.domains.fund.types import DataError
    from evaluator.methodology.rubric import RubricError

    return (DataError, RubricError, OutputExistsError)


def check_outliers(mode: str) -> str:
    """``--outliers``: error, repair or keep (checked before any work)."""
    from evaluator.domains.fund.engine import MODES

    mode = mode.strip().lower()
    if mode not in MODES:
        fail(f"--outliers must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def as_of_flag(text: str | None) -> dt.date | None:
    """``--as-of`` read once, here at the edge; the engine and the reports receive a date."""
    from evaluator.domains.fund.data import parse_as_of
    from evaluator.domains.fund.types import DataError

    if not text:
        return None
    try:
        return parse_as_of(text, "--as-of")
    except DataError as exc:
        fail(str(exc))


def run_notes(evaluation: Any) -> list[str]:
    """What the engine says once for the whole run (a benchmark on its own calendar)."""
    return list((evaluation.inputs.get("calendar") or {}).get("notes") or [])


def check_out_dir(out: Path, force: bool) -> None:
    """Refuse before any work, so a long batch never ends in "folder exists"."""
    if out.exists() and not out.is_dir():
        fail(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        fail(f"{out} already exists and is not empty; pass --force to write into it")


def check_source(data: Path | None, sample: bool) -> None:
    """A DATA file or ``--sample``, exactly one of them."""
    if (data is None) == (not sample):
        fail("give either a DATA file or --sample (not both)")


class InputOptions(Protocol):
    """The flags ``fund evaluate`` and ``fund history`` both read their inputs with."""

    data: Path | None
    meta: Path | None
    benchmark: Path | None
    risk_free: str
    sheet: str | None
    calendar: Path | None
    type_column: str | None
    class_inference: bool
    sample_funds: int


def read_universe(opts: InputOptions, sample_years: int | None = None) -> Universe:
    """The inputs as the engine reads them: the built-in sample when ``opts.data`` is None, else the files
    (``data``, ``meta``, ``benchmark``), with share-class families from fund names when META names none
    (``class_inference``, default on)."""
    from evaluator.domains.fund.data import infer_classes, load_universe, sample_universe

    with console.status("reading inputs…"):
        if opts.data is None:
            years = {} if sample_years is None else {"years": sample_years}
            universe = sample_universe(funds=opts.sample_funds, risk_free=opts.risk_free, realistic=True, **years)
            return infer_classes(universe, opts.class_inference)
        universe = load_universe(
            opts.data,
            meta=opts.meta,
            benchmark=opts.benchmark,
            risk_free=opts.risk_free,
            sheet=opts.sheet,
            calendar=opts.calendar,
            type_column=opts.type_column,
        )
        return infer_classes(universe, opts.class_inference)


def print_inputs(universe: Universe) -> None:
    """Say how the inputs were read: which benchmark column, which sheet, which adjustment columns."""
    data = universe.sources.get("data") or {}
    if str(data.get("encoding", "")).startswith(("xlsx:", "xls:", "html:")):
        console.print(f"DATA read from {data['encoding']}")
    if data.get("adjustment_columns"):
        console.print(
            f"distributions: returns use {', '.join(data['adjustment_columns'])} where a fund has it"
        )
    bench = universe.sources.get("benchmark") or {}
    if bench.get("close_column"):
        console.print(
            f"benchmark: exchange export, using its {bench['close_column']!r} column as the index level"
        )
    elif bench.get("used_columns"):
        console.print(f"benchmark: per-유형 columns {', '.join(bench['used_columns'])}")
    elif bench.get("columns"):
        console.print(f"benchmark: column {bench['columns'][0]!r} for every fund")
