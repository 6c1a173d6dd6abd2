"""What the application handed in when it mounted the fund commands (the database for ``--db``, the evaluation
harness for ``--model``), kept apart from the package's ``register`` so the command modules read it without
importing the module that imports them."""

from __future__ import annotations

from evaluator.domains.base import CommandServices

_services: CommandServices | None = None


def set_services(given: CommandServices) -> None:
    global _services
    _services = given


def services() -> CommandServices:
    """What the application handed in when it mounted these commands."""
    if _services is None:
        raise RuntimeError(
            "the fund commands were not mounted with the application's services (evaluator.app.cli)"
        )
    return _services
