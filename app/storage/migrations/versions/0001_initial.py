"""Initial schema: runs, fund_results, fund_documents, api_keys.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("identity", sa.String(64), nullable=False, unique=True),
        sa.Column("as_of", sa.Date, nullable=False, index=True),
        sa.Column("rubric_name", sa.String(200), nullable=False),
        sa.Column("rubric_version", sa.String(100), nullable=False),
        sa.Column("rubric_hash", sa.String(64), nullable=True),
        sa.Column("input_hashes", sa.JSON, nullable=False),
        sa.Column("engine_version", sa.String(100), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("funds_total", sa.Integer, nullable=False),
        sa.Column("summary", sa.JSON, nullable=False),
        sa.Column("model_run", sa.JSON, nullable=True),
    )
    op.create_table(
        "fund_results",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("as_of", sa.Date, nullable=False),
        sa.Column("is_current", sa.Boolean, nullable=False),
        sa.Column("fund_code", sa.String(200), nullable=False),
        sa.Column("fund_name", sa.String(500), nullable=True),
        sa.Column("company", sa.String(200), nullable=True),
        sa.Column("type", sa.String(100), nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("grade", sa.Integer, nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("percentile", sa.Float, nullable=True),
    )
    score_desc = sa.text("score DESC")
    op.create_index("ix_fund_results_run_code", "fund_results", ["run_id", "fund_code"], unique=True)
    op.create_index("ix_fund_results_code_asof", "fund_results", ["fund_code", "as_of", "run_id"])
    op.create_index(
        "ix_fund_results_order", "fund_results", ["is_current", "status", "grade", score_desc, "fund_code"]
    )
    op.create_index(
        "ix_fund_results_type", "fund_results", ["is_current", "status", "type", "grade", score_desc, "fund_code"]
    )
    op.create_index(
        "ix_fund_results_company", "fund_results", ["company", "is_current", "status", "type", "grade", "score"]
    )
    op.create_index("ix_fund_results_run_status", "fund_results", ["run_id", "status", "company"])
    op.create_table(
        "fund_documents",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("fund_code", sa.String(200), primary_key=True),
        sa.Column("metrics", sa.JSON, nullable=False),
        sa.Column("report", sa.Text, nullable=False),
        sa.Column("model_evaluation", sa.JSON, nullable=True),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("client", sa.String(200), nullable=False),
        sa.Column("secret_hash", sa.String(300), nullable=False),
        sa.Column("admin", sa.Boolean, nullable=False),
        sa.Column("companies", sa.JSON, nullable=False),
        sa.Column("funds", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_on", sa.Date, nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
    op.drop_table("fund_documents")
    for name in ("run_status", "company", "type", "order", "code_asof", "run_code"):
        op.drop_index(f"ix_fund_results_{name}", "fund_results")
    op.drop_table("fund_results")
    op.drop_table("runs")
