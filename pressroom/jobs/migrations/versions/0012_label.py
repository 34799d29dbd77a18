"""A job's label (a file name or a case number of the client's choosing): stored readable
(``p:``) or sealed with the master key (``s1:``), and a keyed digest of it that listing by
label compares, so the database never needs the text to answer."""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("label", sa.Text))
        batch.add_column(sa.Column("label_digest", sa.String(64)))
    op.create_index("ix_jobs_tenant_label", "jobs", ["tenant", "label_digest"])


def downgrade() -> None:
    op.drop_index("ix_jobs_tenant_label", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("label_digest")
        batch.drop_column("label")
