"""The OCR languages each worker has installed, reported with its heartbeat: the API refuses
a job asking for another at the door (``UNSUPPORTED_LANGUAGE``) instead of a worker later."""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.add_column(sa.Column("languages", sa.String(255)))


def downgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.drop_column("languages")
