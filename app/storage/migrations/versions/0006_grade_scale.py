"""Grade scales travel with the batch: ``runs.grade_scale`` and each result's ``grade_rank`` (1 = best).

Lists sort "best first" on ``grade_rank`` (then score), so a star batch (5★ best) and a 1등급-best batch both
list their best funds first from the same index. Existing rows take their batch's scale from the stored summary.

Revision ID: 0006_grade_scale
Revises: 0005_job_heartbeat
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_grade_scale"
down_revision = "0005_job_heartbeat"
branch_labels = None
depends_on = None

ORDER_COLUMNS = {
    "ix_fund_results_order": ["is_current", "status", "{g}", "score DESC", "fund_code"],
    "ix_fund_results_type": ["is_current", "status", "type", "{g}", "score DESC", "fund_code"],
}


def _indexes(grade_column: str) -> None:
    for name, cols in ORDER_COLUMNS.items():
        op.drop_index(name, table_name="fund_results")
        op.create_index(name, "fund_results", [sa.text(c.format(g=grade_column)) if " " in c or "{" in c
                                               else c for c in cols])


def upgrade() -> None:
    op.add_column("runs", sa.Column("grade_scale", sa.JSON, nullable=True))
    op.add_column("fund_results", sa.Column("grade_rank", sa.Integer, nullable=True))
    conn = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("summary", sa.JSON),
                    sa.column("grade_scale", sa.JSON))
    results = sa.table("fund_results", sa.column("run_id", sa.Integer), sa.column("grade", sa.Integer),
                       sa.column("grade_rank", sa.Integer))
    conn.execute(sa.update(results).values(grade_rank=results.c.grade))
    for run_id, summary in conn.execute(sa.select(runs.c.id, runs.c.summary)).all():
        spec = (summary or {}).get("grade_scale") if isinstance(summary, dict) else None
        if not isinstance(spec, dict) or not isinstance(spec.get("grades"), int):
            continue
        conn.execute(sa.update(runs).where(runs.c.id == run_id).values(grade_scale=spec))
        if spec.get("best") == "high":
            conn.execute(sa.update(results).where(results.c.run_id == run_id)
                         .values(grade_rank=int(spec["grades"]) + 1 - results.c.grade))
    _indexes("grade_rank")


def downgrade() -> None:
    _indexes("grade")
    with op.batch_alter_table("fund_results") as batch:
        batch.drop_column("grade_rank")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("grade_scale")
