"""How far a running job got (steps done of steps in all, page by page as the pipeline tells
them): the reviewer's desk shows a rebuild with corrections as it runs. Empty for the jobs
stored before, as for any job that is not running."""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("progress_done", sa.Integer))
        batch.add_column(sa.Column("progress_total", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("progress_total")
        batch.drop_column("progress_done")
