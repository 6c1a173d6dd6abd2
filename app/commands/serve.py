"""`evaluator serve` — the read-only HTTP API (FastAPI on uvicorn) over the evaluation database."""

from __future__ import annotations

import logging
import os

import typer

from evaluator.app.commands.db import DB_HELP, engine_or_fail
from evaluator.core.console import console, fail


def serve(
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    workers: int = typer.Option(1, "--workers", help="Worker processes (state lives in the database)."),
) -> None:
    """Serve /api/v1 (runs, funds, fund reports and history, summary) with bearer keys; docs at /docs."""
    import uvicorn

    from evaluator.app.storage.database import ENV_URL, service_url

    if workers < 1 or not 0 < port < 65536:
        fail("--workers must be at least 1 and --port between 1 and 65535")
    url = service_url(db)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    engine_or_fail(url, migrate=False).dispose()  # refuse early: unreachable DB or schema not current
    os.environ[ENV_URL] = url  # every worker reads the same URL
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    console.print(f"serving on http://{host}:{port} (docs at /docs) with {workers} worker(s)")
    uvicorn.run(
        "evaluator.app.api.server:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,  # the app logs each request itself, with the key id and latency
        log_level="warning",
    )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
