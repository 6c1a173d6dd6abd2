"""`evaluator export`: merge a run's LoRA adapter into its base model as a standard HF folder."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import console, fail


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export_cmd(
        run_dir: Path = typer.Argument(..., help="A training run folder (holds final/ and run_config.yaml)."),
        adapter: str = typer.Option("final", "--adapter", help="final (end of training) or best (best_adapter/)."),
        merge: bool = typer.Option(False, "--merge", help="Merge the adapter into the base weights (required)."),
        out: Path = typer.Option(..., "--out", help="Folder for the merged model."),
        dtype: str = typer.Option("bf16", "--dtype", help="bf16 or fp32 weights."),
        push_to_hub: str = typer.Option(None, "--push-to-hub", help="Also upload to this hub repo (needs network, HF_TOKEN)."),
        force: bool = typer.Option(False, "--force", help="Replace a non-empty --out folder."),
    ) -> None:
        """Merge a LoRA adapter into its base and save model, tokenizer and chat template."""
        from evaluator.core.outputs import OutputExistsError
        from evaluator.models.source import ModelNotAvailable
        from evaluator.training.export import ExportError, check_push, merge_run, push_folder

        if not merge:
            fail("export writes a merged model: pass --merge (the adapter alone is already in the run folder)")
        try:
            if push_to_hub:
                check_push(push_to_hub)
            info = merge_run(run_dir, out, adapter=adapter, dtype=dtype, force=force)
            console.print(f"[bold green]merged[/] {info['adapter']} into {info['base']} ({info['dtype']}) → {info['out']}")
            if info["trained_4bit"]:
                console.print("[yellow]note:[/] the adapter was trained on the NF4 4-bit base; this merged "
                              "full-precision model is not that model (see its README.md)")
            if push_to_hub:
                console.print(f"uploaded: {push_folder(out, push_to_hub)}")
        except (ExportError, OutputExistsError, ModelNotAvailable) as exc:
            fail(str(exc))
