"""Page-range tasks: a big document's ranges, claimed under a lease by any worker of its lane."""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column(
            "job_id",
            sa.String(36),
            sa.ForeignKey("jobs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("number", sa.Integer, primary_key=True),
        sa.Column("first_page", sa.Integer, nullable=False),
        sa.Column("end_page", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("reason", sa.String(32)),
        sa.Column("next_eligible_at", sa.Float, nullable=False),
        sa.Column("lease_owner", sa.String(64)),
        sa.Column("lease_expires_at", sa.Float),
        sa.Column("part_key", sa.String(255)),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_tasks_claim", "tasks", ["state", "next_eligible_at"])


def downgrade() -> None:
    op.drop_index("ix_tasks_claim", table_name="tasks")
    op.drop_table("tasks")
