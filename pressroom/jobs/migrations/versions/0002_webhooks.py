"""Webhook deliveries (an outbox written with the job's final state) and per-tenant secrets."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.Float, nullable=False),
        sa.Column("last_error", sa.String(64)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("delivered_at", sa.Float),
        sa.Column("lease_owner", sa.String(64)),
        sa.Column("lease_expires_at", sa.Float),
    )
    op.create_index("ix_webhook_due", "webhook_deliveries", ["state", "next_attempt_at"])
    op.create_table(
        "webhook_secrets",
        sa.Column("tenant", sa.String(64), primary_key=True),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("webhook_secrets")
    op.drop_table("webhook_deliveries")
