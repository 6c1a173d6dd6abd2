"""`evaluator serve` — the HTTP API and the web pages (FastAPI on uvicorn) over the evaluation database."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import typer

from evaluator.app.commands.db import DB_HELP, engine_or_fail
from evaluator.core.console import console, fail


def serve(
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    workers: int = typer.Option(1, "--workers", help="Worker processes (state lives in the database)."),
    rate_limit: int | None = typer.Option(
        None, "--rate-limit", help="Requests per key per minute, API and pages (default 600; 0 = off)."
    ),
    runs: list[Path] = typer.Option(
        None, "--runs", help="A folder of training runs, evaluations and experiments to show at /runs "
        "(admin keys only; repeatable; read, never written).",
    ),
    forwarded_allow_ips: str = typer.Option(
        "", "--forwarded-allow-ips",
        help="Comma-separated proxy addresses whose X-Forwarded-Proto/For are trusted (HTTPS for Secure "
        "cookies, the client address for sign-in limits); none by default, so a forged header counts for nothing.",
    ),
) -> None:
    """Serve the pages (sign in with a key at /login) and /api/v1 with bearer keys; docs at /docs."""
    import uvicorn

    from evaluator.app.api.settings import ENV_RATE
    from evaluator.app.storage.database import ENV_URL, service_url

    if workers < 1 or not 0 < port < 65536:
        fail("--workers must be at least 1 and --port between 1 and 65535")
    if rate_limit is not None:
        if rate_limit < 0:
            fail("--rate-limit must be 0 (off) or more")
        os.environ[ENV_RATE] = str(rate_limit)
    from evaluator.app.web.run_pages import ENV_RUNS

    bad = [str(r) for r in runs or [] if not r.is_dir()]
    if bad:
        fail(f"--runs: not a folder: {', '.join(bad)}")
    if runs:
        os.environ[ENV_RUNS] = os.pathsep.join(str(r.resolve()) for r in runs)  # every worker scans the same
    url = service_url(db)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    engine_or_fail(url, migrate=False).dispose()  # refuse early: unreachable DB or schema not current
    os.environ[ENV_URL] = url  # every worker reads the same URL
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    console.print(f"serving on http://{host}:{port} (sign in at /login, docs at /docs) with {workers} worker(s)")
    uvicorn.run(
        "evaluator.app.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=bool(forwarded_allow_ips.strip()),
        forwarded_allow_ips=forwarded_allow_ips,
        access_log=False,  # the app logs each request itself, with the key id and latency
        log_level="warning",
    )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
