"""Alembic environment: the engine comes from the caller (``database.upgrade``), never from an ini file."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from evaluator.app.storage.tables import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("connection_engine")
    if engine is None:  # the plain `alembic` CLI: take sqlalchemy.url from its ini
        engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
