"""What became of a finished job's document, beyond its pages: its text layer ("empty" for a
document without text, delivered because the job allowed it), how many form fields and
annotations were drawn into its pages, how many sticky notes it had. Counts only, never text."""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("result", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("result")
