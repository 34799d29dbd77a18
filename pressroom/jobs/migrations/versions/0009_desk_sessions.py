"""Desk sessions kept on the server: sign-out ends a session for every copy of its cookie."""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "desk_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("ended_at", sa.Float),
    )
    op.create_index("ix_desk_sessions_expires", "desk_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_desk_sessions_expires", table_name="desk_sessions")
    op.drop_table("desk_sessions")
