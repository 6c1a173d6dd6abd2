"""`evaluator model build-tiny`: the offline tiny Qwen3 model every code path can run on."""

from __future__ import annotations

from pathlib import Path

import typer

from evaluator.core.console import console, fail


def register(app: typer.Typer) -> None:
    model = typer.Typer(help="Models: presets and the offline tiny model.", no_args_is_help=True)
    app.add_typer(model, name="model")

    @model.command("build-tiny")
    def build_tiny_cmd(
        out: Path = typer.Option(None, "--out", help="Folder (default: the cache, where --model tiny looks)."),
        kind: str = typer.Option("tiny", help="tiny (tests, ~0.1 M params), tiny-demo (~3.3 M, digit tokens) or tiny-demo-2l (its 2-layer version)."),
        force: bool = typer.Option(False, "--force", help="Rebuild even if it exists."),
    ) -> None:
        """Build a tiny Qwen3ForCausalLM + byte-level BPE tokenizer offline and save them."""
        import shutil

        from evaluator.models.loading import TINY_NAMES, ensure_tiny, tiny_dir

        if kind not in TINY_NAMES:
            fail(f"--kind must be one of {', '.join(TINY_NAMES)}")
        target = out or tiny_dir(kind)
        if target.exists() and any(target.iterdir()):
            if not force:
                if (target / "config.json").exists():
                    console.print(f"already built: {target} (use --force to rebuild)")
                    return
                fail(f"{target} exists and is not a model folder")
            shutil.rmtree(target)
        path = ensure_tiny(kind, target)
        console.print(f"[green]built[/] {kind} model in {path}")

    @model.command("presets")
    def presets_cmd() -> None:
        """List the model presets, their hub ids, and what happens to their chat template (automatically)."""
        from rich.table import Table

        from evaluator.models.presets import PRESETS

        table = Table(box=None, caption="chat templates are handled automatically (see docs/researchers/gpu-quickstart.md)")
        table.add_column("preset", no_wrap=True)
        table.add_column("hub id", no_wrap=True)
        table.add_column("family", no_wrap=True)
        table.add_column("chat template")
        for p in PRESETS.values():
            table.add_row(p.name, p.hub_id, p.family, p.chat_template_note or "-")
        console.print(table)
