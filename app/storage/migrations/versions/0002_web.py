"""Web app state: browser sessions, rate-limit counters, background jobs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("key_id", sa.String(32), sa.ForeignKey("api_keys.id", ondelete="CASCADE"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_web_sessions_key_id", "web_sessions", ["key_id"])
    op.create_index("ix_web_sessions_expires_at", "web_sessions", ["expires_at"])
    op.create_table(
        "rate_counters",
        sa.Column("bucket", sa.String(120), primary_key=True),
        sa.Column("window", sa.Integer, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("progress", sa.Float, nullable=False),
        sa.Column("stage", sa.String(200), nullable=False),
        sa.Column("message", sa.Text, nullable=True),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("run_id", sa.Integer, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_jobs_key_id", "jobs", ["key_id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_key_id", "jobs")
    op.drop_table("jobs")
    op.drop_table("rate_counters")
    op.drop_index("ix_web_sessions_expires_at", "web_sessions")
    op.drop_index("ix_web_sessions_key_id", "web_sessions")
    op.drop_table("web_sessions")
