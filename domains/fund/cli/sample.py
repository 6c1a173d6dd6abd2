"""`evaluator fund generate-sample` — write the synthetic Korean fund universe as files a user would have."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import console, fail
from evaluator.domains.fund.cli.common import expected_errors


def generate_sample_cmd(
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="NAV file to write (.csv, .parquet or .xlsx); the benchmark goes beside it.",
    ),
    funds: int = typer.Option(300, "--funds", help="Number of funds (at least 20)."),
    years: int = typer.Option(6, "--years", help="Years of daily NAV."),
    seed: int = typer.Option(7, "--seed", help="Random seed (same seed, same universe)."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
) -> None:
    """Write the synthetic Korean fund universe (KOFIA-style long NAV file + benchmark per 유형)."""
    from evaluator.domains.fund.data import generate_sample, write_sample

    if out.suffix.lower() not in (".csv", ".parquet", ".xlsx"):
        fail(f"--out must end in .csv, .parquet or .xlsx, not {out.suffix or '(no suffix)'}")
    try:
        sample = generate_sample(funds=funds, years=years, seed=seed, realistic=True)
    except ValueError as exc:
        fail(str(exc))
    try:
        nav_path, bench_path = write_sample(sample, out, force=force)
    except expected_errors() as exc:
        fail(str(exc))
    console.print(f"wrote {nav_path} ({len(sample.rows):,} NAV rows, {funds} funds) and {bench_path}")
    console.print(f"try: evaluator fund evaluate {nav_path} --benchmark {bench_path} --out reports/")
