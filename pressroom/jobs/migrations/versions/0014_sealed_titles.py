"""Titles and webhook secrets sealed at rest with the master key when encryption is on: a title
is stored as a label is (``p:`` readable, ``s1:`` sealed), so the titles stored before are
marked readable; a sealed webhook secret is longer than the 128 characters its column held."""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE jobs SET title = 'p:' || title WHERE title IS NOT NULL")
    with op.batch_alter_table("webhook_secrets") as batch:
        batch.alter_column("secret", type_=sa.Text, existing_type=sa.String(128))
        batch.alter_column("previous_secret", type_=sa.Text, existing_type=sa.String(128))


def downgrade() -> None:
    with op.batch_alter_table("webhook_secrets") as batch:
        batch.alter_column("previous_secret", type_=sa.String(128), existing_type=sa.Text)
        batch.alter_column("secret", type_=sa.String(128), existing_type=sa.Text)
    op.execute("UPDATE jobs SET title = substr(title, 3) WHERE title LIKE 'p:%'")
