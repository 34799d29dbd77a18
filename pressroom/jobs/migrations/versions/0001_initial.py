"""Jobs (the queue), per-stage timings and API keys."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("lane", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("stage", sa.String(16)),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("max_attempts", sa.Integer, nullable=False),
        sa.Column("reason", sa.String(32)),
        sa.Column("message", sa.Text),
        sa.Column("source_key", sa.String(255)),
        sa.Column("source_sha256", sa.String(64), nullable=False),
        sa.Column("source_bytes", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("template", sa.String(255), nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("idempotency_key", sa.String(255)),
        sa.Column("request_hash", sa.String(64)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("next_eligible_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float),
        sa.Column("finished_at", sa.Float),
        sa.Column("lease_owner", sa.String(64)),
        sa.Column("lease_expires_at", sa.Float),
        sa.Column("artifact_key", sa.String(255)),
        sa.Column("artifact_sha256", sa.String(64)),
        sa.Column("pages", sa.Integer),
        sa.Column("deadline_at", sa.Float),
        sa.Column("trace_id", sa.String(32)),
        sa.UniqueConstraint("tenant", "idempotency_key", name="uq_jobs_tenant_idempotency"),
        sa.UniqueConstraint("artifact_key", name="uq_jobs_artifact_key"),
    )
    op.create_index("ix_jobs_claim", "jobs", ["lane", "state", "next_eligible_at"])
    op.create_index("ix_jobs_tenant_created", "jobs", ["tenant", "created_at"])
    op.create_index("ix_jobs_lease", "jobs", ["state", "lease_expires_at"])
    op.create_table(
        "job_stage_timings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("stage", sa.String(16), nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("recorded_at", sa.Float, nullable=False),
    )
    op.create_index("ix_stage_timings_job", "job_stage_timings", ["job_id"])
    op.create_table(
        "api_keys",
        sa.Column("key_hash", sa.String(64), primary_key=True),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
    op.drop_table("job_stage_timings")
    op.drop_table("jobs")
