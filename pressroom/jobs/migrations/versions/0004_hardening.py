"""Hardening: key ids, expiry and last use; per-tenant template allow-lists."""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("id", sa.String(16)))
        batch.add_column(sa.Column("expires_at", sa.Float))
        batch.add_column(sa.Column("last_used_at", sa.Float))
    keys = sa.table("api_keys", sa.column("key_hash", sa.String), sa.column("id", sa.String))
    conn = op.get_bind()
    for (key_hash,) in conn.execute(sa.select(keys.c.key_hash)).all():
        # keys made before ids existed get one now, so they can be listed and revoked
        conn.execute(
            keys.update().where(keys.c.key_hash == key_hash).values(id="k_" + secrets.token_hex(6))
        )
    op.create_index("ix_api_keys_id", "api_keys", ["id"], unique=True)
    op.create_table(
        "template_allow",
        sa.Column("tenant", sa.String(64), primary_key=True),
        sa.Column("template", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("template_allow")
    op.drop_index("ix_api_keys_id", "api_keys")
    with op.batch_alter_table("api_keys") as batch:
        for name in ("last_used_at", "expires_at", "id"):
            batch.drop_column(name)
