"""The API contract: cancelling a running job, webhook-secret rotation with an overlap, and
counters that are running totals (pruned events are folded into them, so totals never fall)."""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        # a DELETE on a running job: the worker stops at its next stage boundary
        batch.add_column(sa.Column("cancel_requested_at", sa.Float))
    with op.batch_alter_table("webhook_secrets") as batch:
        # after a rotation the old secret still signs (a second signature) until this time
        batch.add_column(sa.Column("previous_secret", sa.String(128)))
        batch.add_column(sa.Column("previous_until", sa.Float))
    op.create_table(
        "counters",
        sa.Column("kind", sa.String(24), primary_key=True),
        sa.Column("lane", sa.String(16), primary_key=True),
        sa.Column("reason", sa.String(32), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )
    # empty: a total is this table plus the events still kept, so nothing is lost or doubled


def downgrade() -> None:
    op.drop_table("counters")
    with op.batch_alter_table("webhook_secrets") as batch:
        batch.drop_column("previous_until")
        batch.drop_column("previous_secret")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("cancel_requested_at")
