"""`evaluator domains list`: every pack with its styles, rewards and default weights."""

from __future__ import annotations

import typer

from evaluator.core.console import console


def register(app: typer.Typer) -> None:
    domains = typer.Typer(help="Domain packs.", no_args_is_help=True)
    app.add_typer(domains, name="domains")

    @domains.command("list")
    def list_cmd() -> None:
        """Show each pack, its prompt styles, languages, data sources, reward functions and default weights."""
        from rich.table import Table

        from evaluator.domains.registry import get_pack, pack_names

        table = Table(title="Domain packs")
        for col in ("domain", "styles", "reward", "weight", "description"):
            table.add_column(col)
        for name in pack_names():
            pack = get_pack(name)
            weights = pack.default_weights()
            described = pack.reward_descriptions()
            names = list(pack.reward_functions()) or list(weights)
            first = True
            for reward in names:
                table.add_row(
                    name if first else "", ", ".join(pack.styles) if first else "", reward,
                    f"{weights.get(reward, 1.0):g}", described.get(reward, ""),
                )
                first = False
            if first:
                table.add_row(name, ", ".join(pack.styles), "-", "-", pack.description)
        console.print(table)
        for name in pack_names():
            pack = get_pack(name)
            console.print(
                f"[bold]{name}[/]: languages {', '.join(pack.languages)}; --data {pack.data_help or 'the pack default'}",
                markup=True, highlight=False, soft_wrap=True,
            )
