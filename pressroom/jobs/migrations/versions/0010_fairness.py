"""Weighted fair claiming between tenants: virtual times per lane and tenant, the lanes'
clocks, tenants' weights, and each job's charged work units."""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("cost", sa.Integer))
    waiting = sa.text("state IN ('accepted', 'retrying')")
    op.create_index(
        "ix_jobs_fair",
        "jobs",
        ["lane", "tenant", "next_eligible_at", "created_at", "id"],
        postgresql_where=waiting,
        sqlite_where=waiting,
    )
    op.create_table(
        "fair_shares",
        sa.Column("lane", sa.String(16), primary_key=True),
        sa.Column("tenant", sa.String(64), primary_key=True),
        sa.Column("vtime", sa.Float, nullable=False),
    )
    # every tenant with work waiting has its share, from the lane's start
    op.execute(
        "INSERT INTO fair_shares (lane, tenant, vtime) "
        "SELECT DISTINCT lane, tenant, 0.0 FROM jobs "
        "WHERE state IN ('accepted', 'retrying', 'running')"
    )
    op.create_table(
        "lane_clocks",
        sa.Column("lane", sa.String(16), primary_key=True),
        sa.Column("clock", sa.Float, nullable=False),
    )
    op.create_table(
        "tenant_weights",
        sa.Column("tenant", sa.String(64), primary_key=True),
        sa.Column("weight", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tenant_weights")
    op.drop_table("lane_clocks")
    op.drop_table("fair_shares")
    op.drop_index("ix_jobs_fair", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("cost")
