"""Storage of fund evaluation batches (SQLAlchemy 2, Alembic): the repository the CLI writes and the API reads."""
