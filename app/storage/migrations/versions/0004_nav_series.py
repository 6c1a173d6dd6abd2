"""Each rated fund's total-return NAV index and benchmark per batch (fund_series), for the fund page.

Revision ID: 0004_nav_series
Revises: 0003_company_ratings
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_nav_series"
down_revision = "0003_company_ratings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fund_series",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("fund_code", sa.String(200), primary_key=True),
        sa.Column("series", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("fund_series")
