"""The ``evaluator`` command line. Thin: each command parses flags, calls the library, prints.

Every command lives in its own module under ``app/commands`` and exposes ``register(app)``. Commands
import the library (and torch/transformers) inside their bodies so ``evaluator --help`` stays fast: the
command line is the one edge where project modules load lazily.
"""

from __future__ import annotations

import atexit
import logging
import os
import warnings
from importlib import import_module
from typing import Any

import typer

from evaluator.core.batch_gc import skip_final_collection

COMMAND_MODULES = (
    "domains",
    "model",
    "train",
    "sft",
    "evaluate",
    "methodology",
    "plan",
    "plot",
    "demo",
    "db",
    "keys",
    "users",
    "audit",
    "serve",
    "export",
    "vllm_serve",
    "experiment",
)

app = typer.Typer(
    name="evaluator",
    help="Domain packs (GSM8K, Korean fund evaluation), one QLoRA GRPO trainer, one evaluation harness.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)



@app.callback()
def _threads(
    threads: int | None = typer.Option(
        None,
        "--threads",
        help="CPU threads for training, generation and evaluation (default: the cores not already busy, from "
        "CPU affinity and load average; or OMP_NUM_THREADS / EVALUATOR_THREADS when set).",
        min=1,
    ),
) -> None:
    """Decided before any command imports torch (see evaluator.core.threads)."""
    from evaluator.core.threads import configure_threads

    configure_threads(threads)


for _name in COMMAND_MODULES:
    import_module(f"evaluator.app.commands.{_name}").register(app)


class _Services:
    """The application's services for packs' commands, loaded on first use: they bring the database and the
    evaluation harness (sqlalchemy, pandas), which building the flags and ``--help`` never need."""

    def __getattr__(self, name: str) -> Any:
        from evaluator.app.pack_services import AppServices

        return getattr(AppServices(), name)


def _mount_pack_commands() -> None:
    """Each pack's own commands, from its light ``cli`` module (``evaluator fund …``)."""
    from evaluator.domains.registry import pack_cli_modules

    for module in pack_cli_modules():
        if hasattr(module, "register"):
            module.register(app, _Services())


_mount_pack_commands()


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # Rich progress is the one progress display
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # bitsandbytes warns on every CPU 4-bit load that an optional hub kernel is missing; it is harmless.
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
    # Library deprecation notices (e.g. transformers renaming gradient_checkpointing) are not for CLI users.
    warnings.filterwarnings("ignore", category=FutureWarning)
    atexit.register(skip_final_collection)
    app()


if __name__ == "__main__":
    main()
