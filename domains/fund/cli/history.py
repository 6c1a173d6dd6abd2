"""`evaluator fund history` — grade the universe at every month-end (or quarter-end) into one table."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from evaluator.core.cli_options import flag, options_command
from evaluator.core.console import console, err_console, fail
from evaluator.domains.fund.cli import common

if TYPE_CHECKING:
    import pandas as pd

    from evaluator.domains.fund.history import History


@dataclass(frozen=True)
class HistoryOptions:
    """Every flag of ``fund history``: the span, the inputs (read once) and the engine's options."""

    data: Path | None = flag(common.DATA_ARG)
    start: str = flag(typer.Option(..., "--from", help="First month to grade, YYYY-MM."))
    end: str = flag(typer.Option(..., "--to", help="Last month to grade, YYYY-MM."))
    out: Path = flag(
        typer.Option(..., "--out", "-o", help="Folder for history.parquet, history.csv, latest/ and summary.json.")
    )
    freq: str = flag(typer.Option("M", "--freq", help="M: every month-end; Q: every quarter-end."))
    meta: Path | None = flag(typer.Option(None, "--meta", help="Fund metadata (펀드코드, 유형, 설정원본, …)."))
    benchmark: Path | None = flag(common.BENCHMARK)
    risk_free: str = flag(common.RISK_FREE)
    rubric: Path | None = flag(common.RUBRIC)
    sheet: str | None = flag(typer.Option(None, "--sheet", help="Excel sheet of DATA (name or 1-based number)."))
    calendar: Path | None = flag(common.CALENDAR)
    allow_unadjusted: bool = flag(
        typer.Option(
            False, "--allow-unadjusted", help="Grade funds with unadjusted 결산 resets anyway (with a warning)."
        )
    )
    outliers: str = flag(
        typer.Option(
            "error",
            "--outliers",
            help="NAV typos: error (default: not graded on the dates whose windows hold them), repair or keep.",
        )
    )
    type_column: str | None = flag(
        typer.Option(None, "--type-column", help="The 유형 (peer-group) column when it is not 유형, e.g. 소유형.")
    )
    class_inference: bool = flag(common.CLASS_INFERENCE)
    sample: bool = flag(common.SAMPLE)
    sample_funds: int = flag(common.SAMPLE_FUNDS)
    sample_years: int = flag(typer.Option(8, "--sample-years", help="Years of NAV in the --sample universe."))
    force: bool = flag(common.FORCE)
    db: str | None = flag(
        typer.Option(None, "--db", help="Also store the latest/ reports in this database; default EVALUATOR_DB.")
    )
    qualitative: Path | None = flag(
        typer.Option(
            None,
            "--qualitative",
            help="Analysts' 운용사 pillar scores (rows apply from their 평가일 on) for the company grades.",
        )
    )


@options_command(HistoryOptions)
def history(opts: HistoryOptions) -> None:
    """Grade every fund at each month-end (last NAV date of the month on the market calendar).

    Each date is graded exactly as `fund evaluate --as-of DATE` would; the inputs are read once.
    """
    from evaluator.core.batch_gc import collector_paused
    from evaluator.domains.fund.cli.services import services
    from evaluator.domains.fund.history import LATEST

    with collector_paused():  # a one-shot batch: core/batch_gc.py
        common.check_source(opts.data, opts.sample)
        if opts.sample and (opts.sample_funds < 20 or opts.sample_years < 1):
            fail("--sample-funds must be at least 20 and --sample-years at least 1")
        opts = dataclasses.replace(opts, freq=opts.freq.strip().upper(), outliers=common.check_outliers(opts.outliers))
        first, last = _months(opts.start, opts.end, opts.freq)
        db_url = services().prepare_db(opts.db)
        common.check_out_dir(opts.out, opts.force)
        result = _run_history(opts, (first, last))
        _print_history(result, opts.out)
        if db_url is not None:
            services().store_folder(db_url, opts.out / LATEST, source="history")


def _months(start: str, end: str, freq: str) -> tuple[pd.Period, pd.Period]:
    """``--from``, ``--to`` and ``--freq`` checked before any work."""
    from evaluator.domains.fund.history import parse_month
    from evaluator.domains.fund.types import DataError

    try:
        first, last = parse_month(start, "--from"), parse_month(end, "--to")
        if freq not in ("M", "Q"):
            raise DataError(f"--freq must be M (month-ends) or Q (quarter-ends), not {freq!r}")
        if first > last:
            raise DataError(f"--from {first} is after --to {last}")
    except DataError as exc:
        fail(escape(str(exc)))
    return first, last


def _run_history(opts: HistoryOptions, span: tuple[pd.Period, pd.Period]) -> History:
    """Read once, grade every date, write the folder; any expected error ends the command with its message."""
    from evaluator.core.provenance import provenance
    from evaluator.domains.fund.history import as_of_dates, run_history, write_history
    from evaluator.domains.fund.rubric import resolve_rubric

    first, last = span
    freq, outliers = opts.freq, opts.outliers
    try:
        doc = resolve_rubric(opts.rubric)
        universe = common.read_universe(opts, sample_years=opts.sample_years)
        common.print_inputs(universe)
        dates = as_of_dates(universe, first, last, freq)
        with console.status(f"grading {len(dates)} as-of dates…") as status:
            result = run_history(
                universe,
                doc,
                dates,
                allow_unadjusted=opts.allow_unadjusted,
                outliers=outliers,
                on_date=lambda k, n: status.update(f"graded {k}/{n} as-of dates…"),
                qualitative=opts.qualitative,
            )
        inputs = {
            "from": str(first),
            "to": str(last),
            "sources": universe.sources,
            "allow_unadjusted": opts.allow_unadjusted,
            "outliers": outliers,
            "class_inference": bool(opts.class_inference),
        }
        if result.last is not None:  # latest/ is stored as a batch: it carries its identity like `fund evaluate`'s
            result.last.inputs["provenance"] = provenance(
                {**universe.sources, "history": {"from": str(first), "to": str(last), "freq": freq},
                 "options": {k: v for k, v in inputs.items() if k in ("allow_unadjusted", "outliers",
                                                                       "class_inference")}
                 | {"type_column": opts.type_column}},
                doc,
            )
        warnings = [*universe.warnings, *common.run_notes(result.last)]
        write_history(result, opts.out, freq=freq, force=opts.force, warnings=warnings, inputs=inputs)
    except common.expected_errors() as exc:
        fail(escape(str(exc)))
    from evaluator.domains.fund.reports import console_line, data_checks

    line = console_line(data_checks(result.last)) if result.last is not None else None
    if line:  # the last as-of date's refused and repaired funds (latest/summary.json data_checks)
        err_console.print(f"[yellow]{escape(line)}[/]")
    for w in warnings:
        err_console.print(f"[yellow]warning:[/] {escape(w)}")
    return result


def _print_history(result: History, out: Path) -> None:
    from evaluator.domains.fund.history import SUMMARY

    rated = int((result.table["status"] == "ok").sum())
    console.print(
        f"{len(result.dates)} as-of dates ({result.dates[0]} … {result.dates[-1]}), "
        f"{result.table['fund_code'].nunique()} funds, {rated} rated fund-dates; "
        f"history.parquet, history.csv, latest/ and {SUMMARY} in {out}"
    )
    if result.companies is not None:
        rated_companies = result.companies[result.companies["status"] == "ok"]
        console.print(
            f"운용사 grades at every date: {result.companies['company'].nunique()} companies, "
            f"{len(rated_companies)} rated company-dates in companies.parquet"
        )


def backtest(
    history_dir: Path = typer.Argument(
        ..., metavar="DIR", help="The --out folder of `evaluator fund history`."
    ),
    horizon: int = typer.Option(12, "--horizon", help="Forward horizon in months."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for backtest.json and the PNG plots."),
    by: str | None = typer.Option(None, "--by", help="유형: every statistic also per 유형 (peer group)."),
    replicates: int = typer.Option(1000, "--replicates", help="Block-bootstrap replicates."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing backtest.json and plots."),
    include_provisional: bool = typer.Option(
        False,
        "--include-provisional",
        help="Count provisional grades (가등급) of young funds with the regular ones.",
    ),
    level: str = typer.Option(
        "fund",
        "--level",
        help="fund: each fund's grade; company: its 운용사's grade against the fund's returns.",
    ),
) -> None:
    """Do the grades predict anything? Forward excess returns by grade, rank IC, migration, with CIs."""
    from evaluator.core.outputs import atomic_write_json
    from evaluator.domains.fund.history import PNG_NAMES, plan_backtest
    from evaluator.domains.fund.history import backtest as run_backtest
    from evaluator.domains.fund.types import DataError

    if level not in ("fund", "company"):
        fail(escape(f"--level accepts fund or company, not {level!r}"))
    if by is not None and by.strip() not in ("유형", "type"):
        fail(escape(f"--by accepts 유형 (or type), not {by!r}"))
    if horizon < 1 or replicates < 100:
        fail("--horizon must be at least 1 month and --replicates at least 100")
    if out.exists() and not out.is_dir():
        fail(escape(f"{out} exists and is not a folder"))
    targets = [out / "backtest.json", *(out / n for n in PNG_NAMES.values())]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        fail(escape(f"{', '.join(existing)} already exist(s); pass --force to overwrite"))
    try:
        with console.status("computing forward returns and bootstrap intervals…"):
            doc = run_backtest(
                history_dir,
                horizon,
                by_type=by is not None,
                reps=replicates,
                include_provisional=include_provisional,
                level=level,
            )
    except DataError as exc:
        fail(escape(str(exc)))
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "backtest.json", doc)
    plan_backtest(out, out).draw()  # the same pictures `evaluator plot BT` draws
    _print_backtest(doc, out)


def _print_backtest(doc: dict, out: Path) -> None:
    a = doc["all"]
    ic = a["ic"]
    ci = ic["ci95"]
    ci_text = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else f"n/a ({ic['reason']})"
    mean_text = f"{ic['mean']:+.3f}" if ic["mean"] is not None else f"n/a ({ic['reason']})"
    t_text = f"{ic['t_stat']:.2f}" if ic["t_stat"] is not None else "n/a"
    console.print(
        f"{doc.get('level', 'fund')} grades · horizon {doc['horizon_months']} months · {len(doc['as_of_dates'])} as-of dates · "
        f"{a['observations']} fund-dates ({a['stopped']} stopped inside the horizon, kept)"
    )
    console.print(f"rank IC mean {mean_text}, Newey-West t {t_text}, 95% CI {ci_text}")
    labels = doc.get("grade_labels") or {}
    for g, block in a["grades"].items():  # best first on the history's scale
        name = labels.get(g, f"{g}등급")
        if block["mean_excess"] is None:
            console.print(f"  {name}: n/a ({block['reason']})")
            continue
        console.print(
            f"  {name}: mean excess {block['mean_excess']:+.2%} · hit rate {block['hit_rate']:.0%} · n={block['observations']}"
        )
    console.print(escape(a["monotonicity"]["verdict_ko"]))
    console.print(escape(doc["caveat_ko"]))
    console.print(f"backtest.json and plots in {out}")
