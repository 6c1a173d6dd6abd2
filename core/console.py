"""Console output shared by commands: one Rich console, and clean exits for expected errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-paragraph error (no traceback) and exit. The message is data (it may quote a fund code or a
    cell such as ``[/x]``), so it is printed literally, never read as Rich markup."""
    err_console.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


@contextmanager
def clean_errors(*kinds: type[BaseException], hint: Callable[[BaseException], str] | None = None) -> Iterator[None]:
    """Turn expected errors (bad input, missing files) into :func:`fail` instead of a traceback."""
    try:
        yield
    except kinds as exc:  # type: ignore[misc]
        fail(hint(exc) if hint else str(exc))
