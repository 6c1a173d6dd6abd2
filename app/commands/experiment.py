"""`evaluator experiment run / report / plot`: arms × seeds as one command, with paired statistics and cost."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import console, fail

SPEC_COPY = "spec.yaml"


def _load(spec_path: Path):
    from evaluator.app.experiments.spec import SpecError, load_spec

    try:
        return load_spec(spec_path)
    except SpecError as exc:
        fail(str(exc))


def _check_arms(spec, spec_path: Path) -> None:
    """Every arm's whole TRL config, before any job starts (and in --dry-run): one message for all problems."""
    from evaluator.app.experiments.spec import trl_problems

    problems, warnings = trl_problems(spec)
    if problems:
        fail(f"{spec_path}: " + "; ".join(problems))
    from rich.markup import escape

    for line in warnings:
        console.print(f"[bold yellow]warning:[/] {escape(line)}", highlight=False)


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Experiments: arms × seeds, paired statistics, cost.", no_args_is_help=True)
    app.add_typer(group, name="experiment")

    @group.command("run")
    def run_cmd(
        spec_path: Path = typer.Argument(..., help="Experiment spec (YAML)."),
        out: Path = typer.Option(..., "--out", "-o", help="Experiment folder (runs/, results.json, results.md)."),
        jobs: int = typer.Option(1, "--jobs", "-j", help="Arms × seeds trained at once, each in its own process."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Show the jobs and which would be reused; run nothing."),
        force: bool = typer.Option(False, "--force", help="Use a non-empty --out that holds no experiment."),
    ) -> None:
        """Train and evaluate every arm × seed (reusing finished ones), then compare each arm with the baseline."""
        from evaluator.app.experiments.runner import finish, plan, run_experiment, status_of

        spec = _load(spec_path)
        if jobs < 1:
            fail("--jobs must be at least 1")
        _check_arms(spec, spec_path)
        text = spec_path.read_text(encoding="utf-8")
        if out.exists() and any(out.iterdir()) and not (out / SPEC_COPY).exists() and not force:
            fail(f"{out} is not empty and holds no experiment ({SPEC_COPY}); pass --force to use it")
        if dry_run:
            for job in plan(spec, out):
                console.print(f"{status_of(job):8} {job.key:40} {job.kind:5} {job.digest()[:10]}")
            return
        out.mkdir(parents=True, exist_ok=True)
        from evaluator.core.outputs import atomic_write_text

        atomic_write_text(out / SPEC_COPY, text)
        records = run_experiment(spec, out, jobs=jobs, log=console.print)
        results = finish(spec, out, records, text)
        _summary(results)
        console.print(f"wrote {out / 'results.json'} and {out / 'results.md'}")
        if results["failures"]:
            raise typer.Exit(1)

    @group.command("report")
    def report_cmd(folder: Path = typer.Argument(..., help="An experiment folder.")) -> None:
        """Rebuild results.json and results.md from the finished runs (trains nothing)."""
        from evaluator.app.experiments.runner import collect, finish

        spec_path = folder / SPEC_COPY
        if not spec_path.is_file():
            fail(f"{folder} holds no {SPEC_COPY}: run `evaluator experiment run SPEC --out {folder}` first")
        spec = _load(spec_path)
        results = finish(spec, folder, collect(spec, folder), spec_path.read_text(encoding="utf-8"))
        _summary(results)
        console.print(f"wrote {folder / 'results.json'} and {folder / 'results.md'}")

    @group.command("plot")
    def plot_cmd(
        folder: Path = typer.Argument(..., help="An experiment folder with results.json."),
        out: Path = typer.Option(None, "--out", help="Where the PNGs go (default FOLDER/plots)."),
    ) -> None:
        """Each metric per arm with its CI; reward and held-out curves of every arm overlaid."""
        from evaluator.app.experiments.plots import plot_experiment

        try:
            written = plot_experiment(folder, out or folder / "plots")
        except (FileNotFoundError, ValueError) as exc:
            fail(str(exc))
        for path in written:
            console.print(f"wrote {path}")


def _summary(results: dict) -> None:
    from rich.markup import escape

    from evaluator.app.experiments.report import headline_metric

    metric = headline_metric(results)
    for arm in results["arms"]:
        mean = arm["mean"].get(metric)
        shown = "—" if mean is None else f"{100 * mean:.1f} %"
        mark = f"  [yellow]not learning: seeds {arm['not_learning']}[/]" if arm.get("not_learning") else ""
        console.print(f"{arm['name']:24} {metric} {shown}  ({arm['n_seeds_ok']}/{len(arm['seeds'])} seeds){mark}")
    for c in results["comparisons"]:  # every declared metric: a format rate that fell shows beside accuracy
        if c["metric"] != metric:
            console.print(
                f"  {c['arm']} − {c['baseline']} {c['metric']}: {c['diff']:+.4g} [{c['ci_low']:+.4g}, {c['ci_high']:+.4g}] "
                f"p={c['p']:.3g} (Holm {c['p_adjusted']:.3g})", highlight=False,
            )
        else:
            console.print(
                f"{c['arm']} − {c['baseline']}: {100 * c['diff']:+.1f} pp "
                f"[{100 * c['ci_low']:+.1f}, {100 * c['ci_high']:+.1f}] p={c['p']:.3g} (Holm {c['p_adjusted']:.3g})"
            )
    for f in results["failures"]:
        console.print(f"[red]{f.get('status', 'failed')}[/] {f['job']}: {escape(str(f['error']))}", highlight=False)
