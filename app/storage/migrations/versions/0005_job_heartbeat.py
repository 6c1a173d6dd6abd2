"""Jobs' heartbeat: a running job's worker writes it every few seconds, so a job whose worker died is failed.

Revision ID: 0005_job_heartbeat
Revises: 0004_nav_series
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_job_heartbeat"
down_revision = "0004_nav_series"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("heartbeat_at")
