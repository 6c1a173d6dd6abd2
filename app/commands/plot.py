"""`evaluator plot RUN_DIR`: PNG pictures of a training run, an evaluation pair or a pack's own output."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import clean_errors, console, err_console, fail


def _warn(message: str) -> None:
    from rich.markup import escape

    err_console.print(f"[yellow]warning:[/] {escape(message)}")


def register(app: typer.Typer) -> None:
    @app.command("plot")
    def plot(
        run_dir: Path = typer.Argument(
            ...,
            metavar="RUN_DIR",
            help="A training run, an evaluation (pair) folder, a pack's own output folder (a batch of reports), or a folder of those.",
        ),
        out: Path | None = typer.Option(
            None, "--out", metavar="DIR", help="Folder for the PNGs (default: RUN_DIR/plots)."
        ),
        force: bool = typer.Option(False, "--force", help="Overwrite PNGs that already exist."),
    ) -> None:
        """Draw reward/length curves, before/after accuracy with 95% CIs, fund grades and risk/return."""
        from evaluator.core.outputs import OutputExistsError
        from evaluator.evaluation.plots import NothingToPlotError, plot_dir

        if not run_dir.exists():
            fail(f"{run_dir} does not exist; pass a training run, evaluation or a pack's output folder")
        with clean_errors(NothingToPlotError, OutputExistsError, ValueError, OSError):
            written = plot_dir(run_dir, out, force=force, warn=_warn)
        for path in written:
            console.print(str(path), soft_wrap=True, markup=False)
