"""운용사 ratings per batch (company_ratings) and each fund's 설정원본 (fund_results.set_amount_krw).

Revision ID: 0003_company_ratings
Revises: 0002
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_company_ratings"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("fund_results", sa.Column("set_amount_krw", sa.Float, nullable=True))
    op.create_table(
        "company_ratings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("as_of", sa.Date, nullable=False),
        sa.Column("is_current", sa.Boolean, nullable=False),
        sa.Column("company", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("grade", sa.Integer, nullable=True),
        sa.Column("grade_label", sa.String(100), nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("quantitative_score", sa.Float, nullable=True),
        sa.Column("qualitative_score", sa.Float, nullable=True),
        sa.Column("funds_rated", sa.Integer, nullable=False),
        sa.Column("aum_krw", sa.Float, nullable=True),
        sa.Column("document", sa.Text, nullable=False),
    )
    op.create_index("ix_company_ratings_run_company", "company_ratings", ["run_id", "company"], unique=True)
    op.create_index("ix_company_ratings_company", "company_ratings", ["company", "is_current", "as_of"])


def downgrade() -> None:
    op.drop_index("ix_company_ratings_company", "company_ratings")
    op.drop_index("ix_company_ratings_run_company", "company_ratings")
    op.drop_table("company_ratings")
    with op.batch_alter_table("fund_results") as batch:
        batch.drop_column("set_amount_krw")
