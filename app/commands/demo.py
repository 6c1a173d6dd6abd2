"""`evaluator demo`: the whole product offline on CPU — fund batch, SFT → eval → GRPO → eval, plots."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import console, fail


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo_cmd(
        out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Folder for every artifact."),
        quick: bool = typer.Option(
            False, "--quick", help="Sub-minute smoke version (tiny model, few steps)."
        ),
        force: bool = typer.Option(False, "--force", help="Write into a non-empty --out folder."),
        seed: int = typer.Option(
            0, "--seed", help="Training seed (problem order, sampling); the held-out problems stay the same."
        ),
    ) -> None:
        """Run the offline demo end to end (no network, no GPU) and summarise it."""
        from rich.table import Table

        from evaluator.app.demo import run_demo
        from evaluator.core.outputs import OutputExistsError

        try:
            summary = run_demo(out, quick=quick, force=force, console=console, seed=seed)
        except OutputExistsError as exc:
            fail(str(exc))
        before, after = summary["accuracy_before"], summary["accuracy_after"]
        lo, hi = summary["delta_ci95"]
        console.rule("[bold]demo summary")
        console.print(
            f"GSM8K-style held-out accuracy: before {_pct(before['value'])} "
            f"[{_pct(before['ci95'][0])}, {_pct(before['ci95'][1])}] → after {_pct(after['value'])} "
            f"[{_pct(after['ci95'][0])}, {_pct(after['ci95'][1])}]; change {summary['delta'] * 100:+.1f} points "
            f"(95% CI {lo * 100:+.1f} to {hi * 100:+.1f}, McNemar p={summary['mcnemar_p']:.3g}, "
            f"{summary['grpo_steps']} GRPO steps, {summary['eval_n']} problems, {summary['seconds']:.0f} s in all)"
        )
        stages = summary.get("stage_seconds", {})
        console.print("time by stage: " + ", ".join(f"{k} {v:.0f} s" for k, v in stages.items()))
        console.print(summary["verdict"])
        table = Table(title="펀드 등급 분포 (유형별)")
        for col in ("유형", "1등급", "2등급", "3등급", "4등급", "5등급", "not rated", "error"):
            table.add_column(col, justify="right" if col != "유형" else "left")
        for kind, row in summary["grade_distribution"].items():
            table.add_row(
                kind, *(str(row.get(k, 0)) for k in ("1", "2", "3", "4", "5", "not_rated", "error"))
            )
        console.print(table)
        for name, path in summary["artifacts"].items():
            if name != "plots":
                console.print(f"  {name:14} {path}")
        console.print(f"  {'plots':14} {len(summary['artifacts']['plots'])} PNGs in {out / 'plots'}")
        console.print(f"  {'summary':14} {out / 'demo_summary.json'}")
