"""Operations: customers and verification, page estimates for admission, job events for
metrics (retries, dead letters, deadline misses, refusals), live workers, operator keys."""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("customer", sa.String(128)))
        batch.add_column(sa.Column("verification", sa.String(16)))
        batch.add_column(sa.Column("pages_estimate", sa.Integer))
        batch.add_column(sa.Column("parent_span_id", sa.String(16)))
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("role", sa.String(16), nullable=False, server_default="tenant"))
    op.create_table(
        "customers",
        sa.Column("tenant", sa.String(64), primary_key=True),
        sa.Column("customer", sa.String(128), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_table(
        "job_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.String(36)),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("lane", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_job_events_kind_at", "job_events", ["kind", "at"])
    op.create_table(
        "workers",
        sa.Column("owner", sa.String(64), primary_key=True),
        sa.Column("lanes", sa.String(64), nullable=False),
        sa.Column("seen_at", sa.Float, nullable=False),
    )
    op.create_index("ix_jobs_tenant_state", "jobs", ["tenant", "state"])


def downgrade() -> None:
    op.drop_index("ix_jobs_tenant_state", "jobs")
    op.drop_table("workers")
    op.drop_index("ix_job_events_kind_at", "job_events")
    op.drop_table("job_events")
    op.drop_table("customers")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("role")
    with op.batch_alter_table("jobs") as batch:
        for name in ("parent_span_id", "pages_estimate", "verification", "customer"):
            batch.drop_column(name)
