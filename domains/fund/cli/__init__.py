"""The fund pack's commands (``evaluator fund …``), mounted by the application from the pack's ``cli`` module.

``register`` receives the application's :class:`~evaluator.domains.base.CommandServices` (the database for
``--db``, the evaluation harness for ``--model``), since both sit above the packs.
"""

from __future__ import annotations

import typer

from evaluator.domains.base import CommandServices
from evaluator.domains.fund.cli.services import set_services

__all__ = ["register"]


def register(app: typer.Typer, given: CommandServices) -> None:
    """Attach ``evaluator fund …`` to the root app."""
    set_services(given)
    # the command modules load when the commands are mounted, not when the package is imported
    from evaluator.domains.fund.cli.agreement import agreement
    from evaluator.domains.fund.cli.companies import companies
    from evaluator.domains.fund.cli.evaluate import fund_app
    from evaluator.domains.fund.cli.history import backtest, history
    from evaluator.domains.fund.cli.sample import generate_sample_cmd

    fund_app.command("generate-sample")(generate_sample_cmd)
    fund_app.command("agreement")(agreement)
    fund_app.command("history")(history)
    fund_app.command("backtest")(backtest)
    fund_app.command("companies")(companies)
    app.add_typer(fund_app, name="fund")
