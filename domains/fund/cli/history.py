"""`evaluator fund history` — grade the universe at every month-end (or quarter-end) into one table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from evaluator.core.console import console, err_console, fail


def history(
    data: Path | None = typer.Argument(
        None, help="NAV data: long or wide CSV (utf-8 / cp949), Excel (.xlsx / .xls) or Parquet."
    ),
    start: str = typer.Option(..., "--from", help="First month to grade, YYYY-MM."),
    end: str = typer.Option(..., "--to", help="Last month to grade, YYYY-MM."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for history.parquet, history.csv, latest/ and summary.json."
    ),
    freq: str = typer.Option("M", "--freq", help="M: every month-end; Q: every quarter-end."),
    meta: Path | None = typer.Option(None, "--meta", help="Fund metadata (펀드코드, 유형, 설정원본, …)."),
    benchmark: Path | None = typer.Option(
        None, "--benchmark", help="Benchmark levels: one value column, or one per 유형."
    ),
    risk_free: str = typer.Option(
        "0", "--risk-free", help="Annual risk-free rate (0.03 or 3%) or a CSV of rates by date."
    ),
    rubric: Path | None = typer.Option(
        None, "--rubric", help="Rubric JSON (default: the built-in methodology)."
    ),
    sheet: str | None = typer.Option(None, "--sheet", help="Excel sheet of DATA (name or 1-based number)."),
    calendar: Path | None = typer.Option(
        None,
        "--calendar",
        help="Market dates file (a date column); default: the dates most funds are priced on (the benchmark "
        "is aligned to them, never the other way round).",
    ),
    allow_unadjusted: bool = typer.Option(
        False, "--allow-unadjusted", help="Grade funds with unadjusted 결산 resets anyway (with a warning)."
    ),
    outliers: str = typer.Option(
        "error",
        "--outliers",
        help="NAV typos: error (default: not graded on the dates whose windows hold them), repair or keep.",
    ),
    type_column: str | None = typer.Option(
        None, "--type-column", help="The 유형 (peer-group) column when it is not 유형, e.g. 소유형."
    ),
    sample: bool = typer.Option(False, "--sample", help="Use the built-in synthetic Korean fund universe."),
    sample_funds: int = typer.Option(300, "--sample-funds", help="Funds in the --sample universe."),
    sample_years: int = typer.Option(8, "--sample-years", help="Years of NAV in the --sample universe."),
    force: bool = typer.Option(False, "--force", help="Write into an existing, non-empty --out folder."),
    db: str | None = typer.Option(
        None, "--db", help="Also store the latest/ reports in this database; default EVALUATOR_DB."
    ),
) -> None:
    """Grade every fund at each month-end (last NAV date of the month on the market calendar).

    Each date is graded exactly as `fund evaluate --as-of DATE` would; the inputs are read once.
    """
    from evaluator.domains.fund.cli import services
    from evaluator.domains.fund.cli.evaluate import (
        _check_out_dir,
        _expected_errors,
        _print_inputs,
        check_outliers,
        run_notes,
    )
    from evaluator.domains.fund.data.loaders import load_universe
    from evaluator.domains.fund.data.readers import DataError
    from evaluator.domains.fund.data.sample import sample_universe
    from evaluator.domains.fund.history.io import LATEST, write_history
    from evaluator.domains.fund.history.run import as_of_dates, parse_month, run_history
    from evaluator.domains.fund.rubric import resolve_rubric

    if (data is None) == (not sample):
        fail("give either a DATA file or --sample (not both)")
    if sample and (sample_funds < 20 or sample_years < 1):
        fail("--sample-funds must be at least 20 and --sample-years at least 1")
    freq = freq.strip().upper()
    outliers = check_outliers(outliers)
    try:
        first, last = parse_month(start, "--from"), parse_month(end, "--to")
        if freq not in ("M", "Q"):
            raise DataError(f"--freq must be M (month-ends) or Q (quarter-ends), not {freq!r}")
        if first > last:
            raise DataError(f"--from {first} is after --to {last}")
    except DataError as exc:
        fail(escape(str(exc)))
    db_url = services().prepare_db(db)
    _check_out_dir(out, force)
    try:
        doc = resolve_rubric(rubric)
        with console.status("reading inputs…"):
            if sample:
                universe = sample_universe(
                    funds=sample_funds, years=sample_years, risk_free=risk_free, realistic=True
                )
            else:
                assert data is not None
                universe = load_universe(
                    data,
                    meta=meta,
                    benchmark=benchmark,
                    risk_free=risk_free,
                    sheet=sheet,
                    calendar=calendar,
                    type_column=type_column,
                )
        _print_inputs(universe)
        dates = as_of_dates(universe, first, last, freq)
        with console.status(f"grading {len(dates)} as-of dates…") as status:
            result = run_history(
                universe,
                doc,
                dates,
                allow_unadjusted=allow_unadjusted,
                outliers=outliers,
                on_date=lambda k, n: status.update(f"graded {k}/{n} as-of dates…"),
            )
        inputs = {
            "from": str(first),
            "to": str(last),
            "sources": universe.sources,
            "allow_unadjusted": allow_unadjusted,
            "outliers": outliers,
        }
        warnings = [*universe.warnings, *run_notes(result.last)]
        summary = write_history(result, out, freq=freq, force=force, warnings=warnings, inputs=inputs)
    except _expected_errors() as exc:
        fail(escape(str(exc)))
    for w in warnings:
        err_console.print(f"[yellow]warning:[/] {escape(w)}")
    rated = int((result.table["status"] == "ok").sum())
    console.print(
        f"{len(result.dates)} as-of dates ({result.dates[0]} … {result.dates[-1]}), "
        f"{result.table['fund_code'].nunique()} funds, {rated} rated fund-dates; "
        f"history.parquet, history.csv, latest/ and {summary.name} in {out}"
    )
    if db_url is not None:
        services().store_folder(db_url, out / LATEST, source="history")


def backtest(
    history_dir: Path = typer.Argument(
        ..., metavar="DIR", help="The --out folder of `evaluator fund history`."
    ),
    horizon: int = typer.Option(12, "--horizon", help="Forward horizon in months."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for backtest.json and the PNG plots."),
    by: str | None = typer.Option(None, "--by", help="유형: every statistic also per 유형 (peer group)."),
    replicates: int = typer.Option(1000, "--replicates", help="Block-bootstrap replicates."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing backtest.json and plots."),
) -> None:
    """Do the grades predict anything? Forward excess returns by grade, rank IC, migration, with CIs."""
    from evaluator.core.outputs import atomic_write_json
    from evaluator.domains.fund.data.readers import DataError
    from evaluator.domains.fund.history.backtest import backtest as run_backtest
    from evaluator.domains.fund.history.backtest_plot import PNG_NAMES, plan_backtest

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
            doc = run_backtest(history_dir, horizon, by_type=by is not None, reps=replicates)
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
        f"horizon {doc['horizon_months']} months · {len(doc['as_of_dates'])} as-of dates · "
        f"{a['observations']} fund-dates ({a['stopped']} stopped inside the horizon, kept)"
    )
    console.print(f"rank IC mean {mean_text}, Newey-West t {t_text}, 95% CI {ci_text}")
    for g, block in a["grades"].items():
        if block["mean_excess"] is None:
            console.print(f"  {g}등급: n/a ({block['reason']})")
            continue
        console.print(
            f"  {g}등급: mean excess {block['mean_excess']:+.2%} · hit rate {block['hit_rate']:.0%} · n={block['observations']}"
        )
    console.print(escape(a["monotonicity"]["verdict_ko"]))
    console.print(escape(doc["caveat_ko"]))
    console.print(f"backtest.json and plots in {out}")
