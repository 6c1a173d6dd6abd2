"""Personal accounts: ``users``, sessions that belong to a user or a key (with a last-seen time for the idle
timeout), and ``audit_log``.

``web_sessions`` is rebuilt rather than altered (SQLite cannot make a column nullable in place, and a
session is only a sign-in): everyone signed in signs in again after the upgrade, and again after a downgrade.

Revision ID: 0007_accounts
Revises: 0006_grade_scale
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_accounts"
down_revision = "0006_grade_scale"
branch_labels = None
depends_on = None


def _sessions(with_users: bool) -> None:
    columns = [
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("key_id", sa.String(32), sa.ForeignKey("api_keys.id", ondelete="CASCADE"),
                  nullable=with_users),
    ]
    if with_users:
        columns.append(sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"),
                                 nullable=True))
    columns += [
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    ]
    if with_users:
        columns.append(sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False))
    op.create_table("web_sessions", *columns)
    op.create_index("ix_web_sessions_key_id", "web_sessions", ["key_id"])
    op.create_index("ix_web_sessions_expires_at", "web_sessions", ["expires_at"])
    if with_users:
        op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])


def _drop_sessions(with_users: bool) -> None:
    if with_users:
        op.drop_index("ix_web_sessions_user_id", "web_sessions")
    op.drop_index("ix_web_sessions_expires_at", "web_sessions")
    op.drop_index("ix_web_sessions_key_id", "web_sessions")
    op.drop_table("web_sessions")


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("login", sa.String(64), nullable=False, unique=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("client", sa.String(200), nullable=False),
        sa.Column("companies", sa.JSON, nullable=False),
        sa.Column("funds", sa.JSON, nullable=False),
        sa.Column("password_hash", sa.String(300), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("password_changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True),
    )
    _drop_sessions(False)
    _sessions(True)
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("address", sa.String(100), nullable=True),
        sa.Column("detail", sa.JSON, nullable=False),
    )
    for column in ("at", "actor", "action"):
        op.create_index(f"ix_audit_log_{column}", "audit_log", [column])


def downgrade() -> None:
    for column in ("at", "actor", "action"):
        op.drop_index(f"ix_audit_log_{column}", "audit_log")
    op.drop_table("audit_log")
    _drop_sessions(True)
    _sessions(False)
    op.drop_table("users")
